"""``finfo`` and ``iinfo``: the numeric limits of a dtype, as ``torch.finfo`` / ``torch.iinfo`` report them.

Code clamps, scales and picks epsilons from these (``x.clamp(min=finfo(x.dtype).tiny)``), so the numbers are
numpy's for the same IEEE formats, which are PyTorch's; ``resolution`` is ``10 ** -precision`` as PyTorch
computes it. ``finfo()`` describes the default dtype::

    toolkit.finfo(toolkit.float16).max     # 65504.0
    toolkit.iinfo(toolkit.int8).min        # -128
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt


def _given_dtype(cls_name: str, args: tuple, kwargs: dict, *, optional: bool) -> _dt.dtype:
    """The one dtype argument ``type`` (positional or keyword), checked as PyTorch's argument parser checks it."""
    given = [*args, *kwargs.values()]
    if len(given) > 1 or kwargs.keys() - {"type"}:
        if not optional and not kwargs:
            raise TypeError(f"{cls_name}() takes 1 positional argument but {len(args)} were given")
        got = ", ".join([_type_label(a) for a in args] + [f"{k}={_type_label(v)}" for k, v in kwargs.items()])
        got += "" if args else ", "  # PyTorch's parser ends a keywords-only list with ", "
        expected = "\n * (toolkit.dtype type)" + ("\n * ()" if optional else "")
        raise TypeError(f"{cls_name}() received an invalid combination of arguments - got ({got}), but expected "
                        f"one of:{expected}\n")
    if not given:
        if optional:
            return _dt.get_default_dtype()
        raise TypeError(f'{cls_name}() missing 1 required positional arguments: "type"')
    if not isinstance(given[0], _dt.dtype):
        raise TypeError(f"{cls_name}(): argument 'type' (position 1) must be toolkit.dtype, not "
                        f"{type(given[0]).__name__}")
    return given[0]


def _type_label(value) -> str:
    return "toolkit.dtype" if isinstance(value, _dt.dtype) else type(value).__name__


class _Info:
    """Read-only limits; equal when they describe the same dtype, and unhashable, as PyTorch's are."""

    __slots__ = ("bits", "min", "max", "dtype")
    __hash__ = None  # type: ignore[assignment]

    def _freeze(self, **values) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"attribute '{name}' of 'toolkit.{type(self).__name__}' objects is not writable")

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.dtype == self.dtype

    def __reduce__(self):
        raise TypeError(f"cannot pickle 'toolkit.{type(self).__name__}' object")


class finfo(_Info):  # noqa: N801  (PyTorch's name)
    """Limits of a floating-point dtype: ``bits, eps, max, min, tiny, smallest_normal, resolution, dtype``."""

    __slots__ = ("eps", "tiny", "smallest_normal", "resolution")

    def __init__(self, *args, **kwargs) -> None:
        d = _given_dtype("finfo", args, kwargs, optional=True)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("toolkit.finfo() requires a floating point input type. Use toolkit.iinfo to handle "
                            "'toolkit.finfo'")
        d = d.to_real()  # a complex dtype's limits are its parts' (PyTorch reports them so)
        info = np.finfo(d.np)
        self._freeze(bits=int(info.bits), eps=float(info.eps), max=float(info.max), min=float(info.min),
                     tiny=float(info.tiny), smallest_normal=float(info.smallest_normal),
                     resolution=float(10.0 ** -int(info.precision)), dtype=d.name)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo(_Info):  # noqa: N801  (PyTorch's name)
    """Limits of an integer dtype: ``bits, max, min, dtype`` (``bool`` has none, as in PyTorch)."""

    __slots__ = ()

    def __init__(self, *args, **kwargs) -> None:
        d = _given_dtype("iinfo", args, kwargs, optional=False)
        if d is _dt.bool:
            raise TypeError("toolkit.bool is not supported by toolkit.iinfo")
        if not d.is_integral:
            raise TypeError("toolkit.iinfo() requires an integer input type. Use toolkit.finfo to handle "
                            "'toolkit.iinfo'")
        info = np.iinfo(d.np)
        self._freeze(bits=int(info.bits), max=int(info.max), min=int(info.min), dtype=d.name)

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


finfo.__module__ = iinfo.__module__ = "toolkit"
