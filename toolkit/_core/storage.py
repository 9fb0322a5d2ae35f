"""Storage: the buffer shared by a tensor and all its views, with its version counter.

Numpy already gives strided views over a shared buffer; what it lacks is a
version counter that every view sees, which autograd needs to detect in-place
changes to saved tensors. Views of one tensor share one ``Storage`` object.
"""

from __future__ import annotations

import numpy as np


class Storage:
    """Holds the base array and the version counter shared by all views."""

    __slots__ = ("base", "version", "device", "__weakref__")

    def __init__(self, base: np.ndarray, device=None):
        self.base = base
        self.version = 0
        self.device = device

    def nbytes(self) -> int:
        return self.base.nbytes

    def data_ptr(self) -> int:
        return self.base.__array_interface__["data"][0]
