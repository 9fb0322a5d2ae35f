"""``toolkit.sym_int``, ``sym_float``, ``sym_max``... by PyTorch's names: its helpers for numbers that may be
symbolic sizes. toolkit's sizes are always plain Python numbers, so each is the plain operation."""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["sym_float", "sym_int", "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sum"]


def sym_int(a) -> int:
    """``a`` as an int, truncated toward zero (``sym_int(-3.7) == -3``)."""
    return math.trunc(a) if isinstance(a, float) else int(a)


def sym_float(a) -> float:
    return float(a)


def sym_max(a, b):
    return b if b > a else a


def sym_min(a, b):
    return b if b < a else a


def sym_not(a) -> bool:
    return not a


def sym_ite(b, t, f):
    """``t`` if ``b`` else ``f``."""
    return t if b else f


def sym_sum(args: Iterable):
    total = 0
    for a in args:
        total = total + a
    return total
