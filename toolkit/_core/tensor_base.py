"""``TensorBase``: what every Tensor is, declared at the bottom so any layer can recognize a tensor.

The Tensor class sits above the op registry (its methods come from it), but code
below it, such as turning nested Python data into an array, must tell a tensor
from other values. ``isinstance(x, TensorBase)`` does that without importing the
Tensor, as ``numbers.Number`` lets code recognize numbers. It holds no state.
"""

from __future__ import annotations


class TensorBase:
    """The base of ``toolkit.Tensor`` (and so of ``nn.Parameter``); no state of its own."""

    __slots__ = ()
