"""``sym_constrain_range``, ``sym_constrain_range_for_size``, ``sym_fresh_size``: PyTorch's hints about symbolic
sizes, as they behave eagerly.

PyTorch's exporter records these as facts about a size it cannot see; eagerly the size is a plain number, so each
checks it against the range (with PyTorch's messages) and returns nothing::

    n = int(mask.sum())
    toolkit.sym_constrain_range_for_size(n, max=1024)
"""

from __future__ import annotations

from ._core.tensor_base import TensorBase
from .factories import tensor

__all__ = ["sym_constrain_range", "sym_constrain_range_for_size", "sym_fresh_size"]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _check_range(size, min: int | None, max: int | None, default_min: int) -> None:  # noqa: A002
    low = default_min if min is None else min
    high = _INT64_MAX if max is None else max
    if high < low:
        raise RuntimeError(f"Max must be greater than or equal to min. Got min={low} max={high}")
    value = size.item() if isinstance(size, TensorBase) else size
    if not low <= value <= high:
        raise RuntimeError(f"Invalid value range for {value} between [{low}, {high}].")


def sym_constrain_range(size, *, min: int | None = None, max: int | None = None) -> None:  # noqa: A002
    """Check ``min <= size <= max`` (either bound may be left out)."""
    _check_range(size, min, max, _INT64_MIN)


def sym_constrain_range_for_size(size, *, min: int | None = None, max: int | None = None) -> None:  # noqa: A002
    """Check that ``size`` is a valid size in ``[min, max]`` (``min`` 0 unless given; ``max``, if given, above 2)."""
    if max is not None and max <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: {max}")
    _check_range(size, min, max, 0)


def sym_fresh_size(expr):
    """``expr`` as a new size: eagerly its value, as a Python number (``tensor(expr).item()``)."""
    return tensor(expr).item()
