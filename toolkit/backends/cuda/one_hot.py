"""``one_hot`` on the device: the class range checked against the labels' extremes, then one compare map."""

from __future__ import annotations

import numpy as np

from ...ops.one_hot import _check
from .array import CudaArray
from .codegen import run_map
from .reduce import row_reduce
from .registration import register_table


def one_hot(self, num_classes=-1):
    _check(self.dtype, num_classes)
    if num_classes == -1 and self.size == 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if self.size:
        top = int(row_reduce(self, tuple(range(self.ndim)), "max")[0].get()[0])
        low = int(row_reduce(self, tuple(range(self.ndim)), "min")[0].get()[0])
        num_classes = top + 1 if num_classes == -1 else num_classes
        if low < 0:
            raise RuntimeError("Class values must be non-negative.")
        if top >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = CudaArray.empty(tuple(self.shape) + (num_classes,), np.int64)
    labels = self.reshape(tuple(self.shape) + (1,)) if self.is_c_contiguous() else self.copy().reshape(
        tuple(self.shape) + (1,))
    return run_map("x == c", out, {"x": labels, "c": CudaArray.from_host(np.arange(num_classes, dtype=np.int64))}, {})


def register() -> list:
    return register_table({"one_hot": one_hot})
