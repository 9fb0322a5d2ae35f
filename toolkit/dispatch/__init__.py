"""The single call path of every op: bind, promote, pick a device and kernel, run, wrap, record.

Eager calls, Tensor methods and operators all arrive here (``toolkit.ops.runtime``
is how the layers below reach it; this package installs itself there on import).
Each step is a module of its own:

- ``binding``: arguments matched and normalized against the op's schema;
- ``promotion``: compute and result dtypes of elementwise ops;
- ``devices``: the device a call runs on and that device's kernel;
- ``running``: observers, the kernel, the wrapped result, autograd's record, in-place checks;
- ``calls``: bind then run, and the choice among overloads.

Grad modes and the hooks of the layers above live in ``toolkit._core.state``.
"""

from __future__ import annotations

from .._core.state import STATE
from ..ops import runtime as _runtime
from ..tensor import wrap as _wrap
from . import autocast as _autocast  # noqa: F401  (installs autocast's observer hook)
from .binding import bind, check_arg, default_ints, is_number
from .calls import call_op, call_overloads, call_pair
from .promotion import promotion_for, scalar_as
from .running import execute, run

__all__ = ["STATE", "bind", "call_op", "call_overloads", "check_arg", "default_ints", "execute", "is_number",
           "promotion_for", "run", "scalar_as"]

_runtime.install(_runtime.Dispatcher(bind=bind, execute=execute, call_op=call_op, call_overloads=call_overloads,
                                     call_pair=call_pair, wrap=_wrap))
