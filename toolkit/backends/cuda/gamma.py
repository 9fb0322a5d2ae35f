"""``mvlgamma`` on the device: its generated map kernel after PyTorch's argument and value checks.

The multivariate log-gamma function is defined only for elements above
``(p - 1) / 2``; PyTorch checks that on every device before computing (one
reduction read back), and so does this kernel, with the CPU op's messages.
"""

from __future__ import annotations

import numpy as np

from ...ops import registry as R
from .array import CudaArray
from .codegen import run_map, typed_scalar
from .reduce import row_reduce
from .registration import register_table


def mvlgamma(self, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if self.size:
        least = float(row_reduce(self, tuple(range(self.ndim)), "min")[0].item()) if self.ndim else float(self.item())
        if least <= (p - 1) / 2:
            raise RuntimeError("All elements must be greater than (p-1)/2")
    return run_map(R.get("mvlgamma").formula, CudaArray.empty(self.shape, self.dtype), {"self": self},
                   {"p": typed_scalar(p, np.dtype(np.int64))})


def register() -> list:
    return register_table({"mvlgamma": mvlgamma})
