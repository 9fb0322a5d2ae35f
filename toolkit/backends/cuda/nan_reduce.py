"""``nansum`` and ``nanmean`` on the device: NaN masked to zero, then the row reduction ``sum`` uses.

As on the CPU, integers and bools add in int64, float16 in float32, and
``nanmean`` divides the NaN-free total by the count of non-NaN elements (an
all-NaN or empty slice gives NaN).
"""

from __future__ import annotations

import numpy as np

from ...ops import registry as R
from .array import CudaArray, copy_strided
from .codegen import run_map
from .reduce import _dims, row_reduce
from .registration import meta_of, register_table


def _masked_total(self: CudaArray, dims: tuple, out: np.dtype) -> CudaArray:
    """The sum over ``dims`` with NaN read as zero, in ``out`` (added in float32 when ``out`` is float16)."""
    acc = np.dtype(np.float32) if out == np.float16 else out
    x = copy_strided(self, acc)
    if acc.kind == "f":
        x = run_map("self if self == self else zero", CudaArray.empty(x.shape, acc), {"self": x},
                    {"zero": acc.type(0)})
    vals, _ = row_reduce(x, dims, "sum")
    return vals if vals.dtype == out else vals.astype(out)


def nansum(self, dim=None, keepdim=False, dtype=None):
    meta = meta_of(R.get("nansum"), [self, dim, keepdim, dtype])
    return _masked_total(self, _dims(dim, self.ndim, "nansum"), meta.dtype.np).reshape(tuple(meta.shape))


def nanmean(self, dim=None, keepdim=False, dtype=None):
    meta = meta_of(R.get("nanmean"), [self, dim, keepdim, dtype])
    dims = _dims(dim, self.ndim, "nanmean")
    out = meta.dtype.np
    total = _masked_total(self, dims, out)
    present = run_map("self == self", CudaArray.empty(self.shape, np.int64), {"self": self}, {})
    count, _ = row_reduce(present, dims, "sum")
    acc = np.dtype(np.float32) if out == np.float16 else out
    mean = run_map("t / c", CudaArray.empty(total.shape, acc), {"t": copy_strided(total, acc), "c": count}, {})
    return (mean if acc == out else mean.astype(out)).reshape(tuple(meta.shape))


def register() -> list:
    return register_table({"nansum": nansum, "nanmean": nanmean})
