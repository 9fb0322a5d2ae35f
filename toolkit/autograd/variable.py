"""``Variable``: the pre-0.4 wrapper of tensors, kept so old code and tutorials run unchanged.

Since PyTorch 0.4 a Variable is a Tensor: ``Variable(t, requires_grad=True)``
returns a tensor (a detached alias of ``t``, sharing its memory, with the
``requires_grad`` asked for), and every tensor is an instance of ``Variable``::

    x = Variable(toolkit.ones(2), requires_grad=True)
    isinstance(x, Variable)  # True
"""

from __future__ import annotations

import warnings

from ..ops import api
from ..tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)`` returns ``data`` as a tensor (see the module)."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if data is None:
            data = api.empty((0,))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if not isinstance(requires_grad, bool):
            raise TypeError(f"Variable(): argument 'requires_grad' must be bool, not {type(requires_grad).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with toolkit.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        return data.detach().requires_grad_(requires_grad)
