"""Where the kernels meet the registry: an op's meta rule on device arrays, and tables of kernels to attach.

Every kernel module ends with a table from op names to kernels that
:func:`register_table` attaches; kernels that only need the op's argument
checks before the work (the CPU op's shape and dtype errors, word for word)
are made by :func:`checked`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..._core import dtypes as _dt
from ..._core.device import device
from ..._core.meta import TensorMeta
from ...ops import registry as R
from .array import CudaArray


def meta_of(op, args: list):
    """The op's meta rule on CudaArray arguments (read as shape/dtype/device metadata)."""
    conv = [TensorMeta(a.shape, _dt.from_numpy_dtype(a.dtype), device("cuda", 0)) if isinstance(a, CudaArray) else a
            for a in args]
    return op.infer(*conv)


def register_table(table: dict) -> list:
    """Attach each kernel of ``table`` as its op's CUDA kernel; returns the ops, in the table's order.

    Keys name ops as :func:`toolkit.ops.registry.get` does (``"max"``, ``"max.dim"``) or as
    ``(name, overload)`` pairs.
    """
    done = []
    for key, kernel in table.items():
        op = R.get(*key) if isinstance(key, tuple) else R.get(key)
        op.kernel("cuda")(kernel)
        done.append(op)
    return done


def checked(name: str, run: Callable, *extra) -> Callable:
    """A kernel for op ``name`` that checks its arguments with the op's meta rule (the CPU op's errors), then
    returns ``run(*args, *extra)``."""
    op = R.get(name)

    def kernel(*args):
        meta_of(op, list(args))
        return run(*args, *extra)

    kernel.__name__ = f"{op.name}_cuda"
    return kernel
