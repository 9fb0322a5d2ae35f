"""Silencing numpy's floating-point warnings inside kernels, cheaply.

Kernels compute where PyTorch gives inf or nan silently (``log(0)``, ``0/0``),
so numpy's warnings must be off while they run. ``np.errstate`` builds its
error-mode object on every entry, which costs more than a ufunc on a small
array; here the object is built once and only the context variable numpy 2
reads is set and reset. Older numpy gets ``np.errstate``.
"""

from __future__ import annotations

import numpy as np

try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    _IGNORE = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # numpy 1.x
    _extobj_contextvar = None


class _Ignore:
    __slots__ = ("_token",)

    def __enter__(self):
        self._token = _extobj_contextvar.set(_IGNORE)

    def __exit__(self, *exc) -> None:
        _extobj_contextvar.reset(self._token)


def ignore_fp_errors():
    """A context in which numpy raises and warns about nothing: ``np.errstate(all="ignore")``."""
    if _extobj_contextvar is None:
        return np.errstate(all="ignore")
    return _Ignore()
