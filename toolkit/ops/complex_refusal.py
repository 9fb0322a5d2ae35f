"""Refusing complex input as PyTorch does: the check an op's kernels get from ``OpDef.refuses_complex``.

Ordering, rounding, clamping and the functions of real numbers only raise PyTorch's own error for a complex
tensor. Each op file declares that next to its ops (``lt.refuses_complex(no_complex_kernel("lt_cpu"))``), so
the registry stays the one place an op is described. The check wraps the op's kernels, so other dtypes pay
one dtype test for it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_PLAIN = (int, float, bool, str)  # never complex


def no_complex_kernel(kernel: str) -> str:
    """PyTorch's message for a kernel without a complex variant; ``{dtype}`` becomes ``ComplexFloat``..."""
    return f'"{kernel}" not implemented for \'{{dtype}}\''


def complex_dtype_title(value) -> str | None:
    """``ComplexFloat``/``ComplexDouble`` for a complex array or tensor (or a list holding one), else None."""
    if isinstance(value, (list, tuple)):
        for v in value:
            t = complex_dtype_title(v)
            if t is not None:
                return t
        return None
    d = getattr(value, "dtype", None)
    if d is None:
        return None
    if getattr(d, "kind", None) == "c":
        return "ComplexFloat" if d.itemsize == 8 else "ComplexDouble"
    if getattr(d, "is_complex", False):
        return d.title
    return None


def complex_refusing(kernel: Callable, message: str, error: type) -> Callable:
    """``kernel`` preceded by the check that raises ``error(message)`` for a complex argument."""
    def refusing(*args, **kwargs):
        for a in args:
            if type(a) is np.ndarray:  # the common arguments first: arrays, numbers, None
                if a.dtype.kind != "c":
                    continue
            elif a is None or type(a) in _PLAIN:
                continue
            t = complex_dtype_title(a)
            if t is not None:
                raise error(message.format(dtype=t))
        return kernel(*args, **kwargs)

    refusing.__name__ = getattr(kernel, "__name__", "kernel")
    refusing.__doc__ = kernel.__doc__
    refusing.__wrapped__ = kernel
    return refusing


def refuse_complex(names, message: str, error: type = NotImplementedError, only: tuple | None = None) -> None:
    """``refuses_complex`` for every overload of each op in ``names`` (or only the overloads named in
    ``only``); ``{name}`` in ``message`` becomes the op's name. Op files call it after defining their ops."""
    from .registry import overloads  # the registry imports this module: look it up when called

    for name in names:
        for o in overloads(name):
            if only is None or o.overload in only:
                o.refuses_complex(message.replace("{name}", name), error)
