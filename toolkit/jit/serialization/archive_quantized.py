"""Quantized tensors in ``toolkit.jit`` archives: their integers as any tensor's, their parameters in the record.

The manifest's tensor table describes a tensor by its storage, shape and strides; a quantized tensor's storage
holds its integers (uint8, int8 or int32), so without more the archive would load them back as a plain integer
tensor and ``dequantize`` would read them as numbers. ``ArchiveWriter`` adds a ``"quantized"`` entry to such a
tensor's record (its quantized dtype, scheme, scale(s), zero point(s) and axis) and ``ArchiveReader`` checks that
entry as strictly as ``toolkit.load`` checks ``torch._utils._rebuild_qtensor``'s parameters and rebuilds the
quantized tensor over the loaded integers (sharing their storage)::

    q = toolkit.quantize_per_tensor(x, 0.1, 3, toolkit.quint8)
    record["quantized"] == {"dtype": "quint8", "qscheme": "per_tensor_affine", "scale": 0.1, "zero_point": 3,
                            "axis": None}
"""

from __future__ import annotations

from ... import _quantized
from ... import serialization as S
from ..._core import dtypes as _dt
from ..._core import qscheme as _qs
from ...ops import registry as R
from ...ops.quantized import PACKED_PARAMS
from ...serialization.rebuild import quantized_over
from ...tensor import Tensor

_check = S._check

__all__ = ["ArchiveReader", "ArchiveWriter"]



class ArchiveWriter(S._Writer):
    """``toolkit.serialization``'s manifest writer, which also records a quantized tensor's parameters and saves
    a quantized module's prepacked weight (a graph constant) as what it was packed from."""

    def encode(self, obj, path: str, depth: int = 0):
        for name, (cls, _) in PACKED_PARAMS.items():
            if isinstance(obj, cls):
                return {"$": "packed", "class": name, "state": self.encode(list(obj.__getstate__()), path, depth + 1)}
        return super().encode(obj, path, depth)

    def _tensor(self, t: Tensor, path: str) -> int:
        known = id(t) in self.tensor_ids
        idx = super()._tensor(t, path)
        if not known and isinstance(t, _quantized.QuantizedTensor):
            per_channel = t._qscheme is not _qs.per_tensor_affine
            self.tensors[idx]["quantized"] = {
                "dtype": t.dtype.name, "qscheme": t._qscheme.name,
                "scale": [float(s) for s in t._scale] if per_channel else float(t._scale),
                "zero_point": [int(z) for z in t._zero_point] if per_channel else int(t._zero_point),
                "axis": int(t._axis) if per_channel else None}
        return idx


class ArchiveReader(S._Reader):
    """``toolkit.serialization``'s manifest reader, which rebuilds the quantized tensors its writer recorded."""

    def decode(self, node, depth: int = 0):
        if not (isinstance(node, dict) and node.get("$") == "packed"):
            return super().decode(node, depth)
        entry = PACKED_PARAMS.get(node.get("class")) if isinstance(node.get("class"), str) else None
        state = self.decode(node.get("state"), depth + 1)
        _check(entry is not None and isinstance(state, list), f"bad packed weight entry {node!r:.80}")
        try:  # packed again by the op that checks its arguments, as a module's own packing is
            return R.get(entry[1])(*state)
        except (TypeError, ValueError, RuntimeError) as e:
            raise S._Corrupt(f"a packed weight in the archive cannot be packed again ({e})") from e

    def _tensor(self, idx: int) -> Tensor:
        t = self.tensors.get(idx)
        if t is not None:
            return t
        t = super()._tensor(idx)
        params = self.tensor_records[idx].get("quantized")
        if params is not None:
            t = self.tensors[idx] = _quantized_over(t, params, idx)
        return t


def _quantized_over(ints: Tensor, params, idx: int) -> Tensor:
    """The quantized tensor ``params`` describe over the integers ``ints``, checked as ``toolkit.load`` checks a
    checkpoint's (``serialization.rebuild.quantized_over``)."""
    what = f"quantized tensor {idx}"
    _check(isinstance(params, dict) and set(params) == {"dtype", "qscheme", "scale", "zero_point", "axis"},
           f"{what} has a bad parameter record {params!r:.80}")
    dtype = _dt._NAMES.get(params["dtype"]) if isinstance(params["dtype"], str) else None
    scheme = _qs._NAMES.get(params["qscheme"]) if isinstance(params["qscheme"], str) else None
    per_channel = scheme is not None and scheme is not _qs.per_tensor_affine
    _check(not per_channel or (isinstance(params["scale"], list) and isinstance(params["zero_point"], list)
                               and all(isinstance(z, int) and not isinstance(z, bool) for z in params["zero_point"])),
           f"{what} has bad per-channel parameters")
    return quantized_over(ints, dtype, scheme, params["scale"], params["zero_point"], params["axis"], what)
