"""``is_scripting`` and ``is_tracing``: code that asks which JIT mode it runs under, as in ``torch.jit``.

Written once for both worlds: run as Python, ``is_scripting()`` is False and ``is_tracing()`` says whether
``toolkit.jit.trace`` is recording; compiled by script mode, the compiler replaces the calls by the
constants True and False, so ``if not toolkit.jit.is_scripting(): ...`` keeps Python-only code out of the
compiled graph (the branch is never compiled), as TorchScript does.

Example::

    >>> def forward(self, x):
    ...     if not toolkit.jit.is_scripting():
    ...         print("eager only")
    ...     return x * 2
"""

from __future__ import annotations

from ..._core.state import is_tracing  # noqa: F401  (defined below the JIT, where nn's modules can ask it too)


def is_scripting() -> bool:
    """True in script code (folded to a constant by the compiler), False when running as Python."""
    return False
