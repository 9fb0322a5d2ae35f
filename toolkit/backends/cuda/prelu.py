"""``prelu`` on the device: one map, the slope broadcast along dim 1 (or one slope for every element)."""

from __future__ import annotations

from ...ops import registry as R
from .array import CudaArray
from .codegen import run_map
from .registration import meta_of, register_table


def prelu(self, weight):
    meta_of(R.get("prelu"), [self, weight])
    shape = (weight.size,) + (1,) * (self.ndim - 2) if self.ndim >= 2 else ()
    w = weight.reshape(shape) if weight.is_c_contiguous() else weight.copy().reshape(shape)
    return run_map("x if x > 0 else w * x", CudaArray.empty(self.shape, self.dtype), {"x": self, "w": w}, {})


def register() -> list:
    return register_table({"prelu": prelu})
