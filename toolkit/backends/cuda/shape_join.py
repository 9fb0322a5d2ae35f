"""``block_diag`` on the device: zeros of the joined shape, each input copied into its diagonal block.

Blocks and dtypes are the CPU op's (:func:`toolkit.ops.shape_join.block_shapes` and ``cat``'s promotion);
each copy is one map kernel into a view of the output, casting as it goes.
"""

from __future__ import annotations

from ..._core import dtypes as _dt
from ..._core.device import device
from ..._core.meta import TensorMeta
from ...ops import registry as R
from ...ops.shape_join import block_shapes
from .array import copy_into, full
from .registration import register_table


def block_diag(tensors):
    metas = [TensorMeta(t.shape, _dt.from_numpy_dtype(t.dtype), device("cuda", 0)) for t in tensors]
    meta = R.get("block_diag").infer(metas) if metas else None
    blocks = block_shapes([t.shape for t in tensors])
    out = full(tuple(meta.shape) if blocks else (1, 0), 0, meta.dtype.np if blocks else _dt.get_default_dtype().np)
    r = c = 0
    for t, (h, w) in zip(tensors, blocks):
        if h and w:
            view = out.view_of((h, w), out.strides, out.offset + r * out.estrides[0] + c)
            copy_into(view, t.reshape((h, w)))
        r, c = r + h, c + w
    return out


def register() -> list:
    return register_table({"block_diag": block_diag})
