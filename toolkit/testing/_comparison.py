"""``assert_close``: PyTorch's comparison of tensors, numbers and nested containers of them.

Inputs pair up recursively (sequences item by item, mappings key by key); each
pair of tensors is checked for shape, device, dtype (and strides when asked),
then for values within ``atol + rtol * |expected|``, with tolerances by dtype
unless given. A failure names what differs and, inside containers, where.
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._core import dtypes as _dt
from ..factories import from_numpy
from ..tensor import Tensor

# PyTorch's default (rtol, atol) per dtype; other dtypes compare exactly.
_PRECISIONS = {_dt.float16: (1e-3, 1e-5), _dt.float32: (1.3e-6, 1e-5), _dt.float64: (1e-7, 1e-7),
               _dt.complex64: (1.3e-6, 1e-5), _dt.complex128: (1e-7, 1e-7)}
_bfloat16 = getattr(_dt, "bfloat16", None)
if _bfloat16 is not None:
    _PRECISIONS[_bfloat16] = (1.6e-2, 1e-5)
_NUMBER_PRECISIONS = {int: (0.0, 0.0), float: (1e-7, 1e-7), complex: (1e-7, 1e-7)}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise, its message, and the path of items to it."""

    def __init__(self, kind: type, message: str, path: str = ""):
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path


def _tolerances(dtypes, rtol, atol) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_PRECISIONS.get(d, (0.0, 0.0)) if isinstance(d, _dt.dtype) else _NUMBER_PRECISIONS.get(d, (0.0, 0.0))
             for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _diff_line(kind: str, diff, idx, tol, equality: bool) -> str:
    line = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
    return line if equality else f"{line} (up to {tol} allowed)"


def _mismatch_message(identifier: str, extra: str, abs_diff, abs_idx, rel_diff, rel_idx, rtol, atol) -> str:
    equality = rtol == 0 and atol == 0
    lines = [f"{identifier} are not {'equal' if equality else 'close'}!", "", extra,
             _diff_line("absolute", abs_diff, abs_idx, atol, equality),
             _diff_line("relative", rel_diff, rel_idx, rtol, equality)]
    return "\n".join(lines)


def _scalar_message(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = math.inf if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, rel_diff, None,
                             rtol, atol)


def _close(a, e, rtol: float, atol: float, equal_nan: bool) -> bool:
    if a == e:
        return True
    if isinstance(a, complex) or isinstance(e, complex):
        if equal_nan and cmath.isnan(a) and cmath.isnan(e):
            return True
    elif equal_nan and math.isnan(a) and math.isnan(e):
        return True
    if not all(map(cmath.isfinite, (a, e))):
        return False
    return abs(a - e) <= atol + rtol * abs(e)


def _compare_numbers(actual, expected, rtol, atol, equal_nan: bool, check_dtype: bool) -> None:
    if isinstance(actual, bool) or isinstance(expected, bool):
        if not (isinstance(actual, bool) and isinstance(expected, bool)):
            raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        if actual is not expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    rtol, atol = _tolerances((type(actual), type(expected)), rtol, atol)
    if not _close(actual, expected, rtol, atol, equal_nan):
        raise _Mismatch(AssertionError, _scalar_message(actual, expected, rtol, atol))


def _check_attributes(actual: Tensor, expected: Tensor, check_device, check_dtype, check_stride) -> None:
    def differ(name: str, a, e) -> _Mismatch:
        return _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.")

    if actual.shape != expected.shape:
        raise differ("shape", actual.shape, expected.shape)
    if check_device and actual.device != expected.device:
        raise differ("device", actual.device, expected.device)
    if check_dtype and actual.dtype is not expected.dtype:
        raise differ("dtype", actual.dtype, expected.dtype)
    if check_stride and actual.numel() > 1 and actual.stride() != expected.stride():
        raise differ("stride()", actual.stride(), expected.stride())


def _host(t: Tensor, dtype: _dt.dtype) -> np.ndarray:
    return np.asarray(t.detach().cpu().resolve_conj().numpy(), dtype=dtype.np)


def _compare_tensors(actual: Tensor, expected: Tensor, rtol, atol, equal_nan, check_device, check_dtype,
                     check_stride) -> None:
    _check_attributes(actual, expected, check_device, check_dtype, check_stride)
    rtol, atol = _tolerances((actual.dtype, expected.dtype), rtol, atol)
    common = _dt.promote_types(actual.dtype, expected.dtype)
    a, e = _host(actual, common), _host(expected, common)
    with np.errstate(invalid="ignore", over="ignore"):
        if common.is_floating_point or common.is_complex:
            matches = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        else:
            matches = a == e
    if matches.all():
        return
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_message(a.item(), e.item(), rtol, atol))
    raise _Mismatch(AssertionError, _tensor_message(a, e, matches, rtol, atol))


def _tensor_message(a: np.ndarray, e: np.ndarray, matches: np.ndarray, rtol, atol) -> str:
    """PyTorch's summary of a tensor mismatch: how many elements, and the greatest differences with where."""
    total = matches.size
    mismatched = total - int(matches.sum())
    a, e, ok = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if a.dtype.kind not in "fc":
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[ok] = 0
        real = abs_diff.dtype if abs_diff.dtype.kind == "f" else np.dtype(_dt.get_default_dtype().np)
        rel_diff = abs_diff.astype(real) / np.abs(e).astype(real)
    rel_diff[ok] = 0
    abs_at, rel_at = _argmax(abs_diff), _argmax(rel_diff)
    return _mismatch_message(
        "Tensor-likes", f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})",
        abs_diff[abs_at].item(), tuple(int(i) for i in np.unravel_index(abs_at, matches.shape)),
        rel_diff[rel_at].item(), tuple(int(i) for i in np.unravel_index(rel_at, matches.shape)), rtol, atol)


def _argmax(values: np.ndarray) -> int:
    """The first index of the greatest value, a nan counting as greatest (as ``torch.max`` picks it)."""
    nans = np.flatnonzero(np.isnan(values)) if values.dtype.kind == "f" else ()
    return int(nans[0]) if len(nans) else int(np.argmax(values))


def _is_number(x) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, Tensor)


def _compare(actual, expected, path: str, options: dict) -> None:
    try:
        if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
            actual, expected = from_numpy(np.ascontiguousarray(actual)), from_numpy(np.ascontiguousarray(expected))
        if isinstance(actual, Tensor) and isinstance(expected, Tensor):
            _compare_tensors(actual, expected, **options)
            return
        if _is_number(actual) and _is_number(expected):
            _compare_numbers(actual, expected, options["rtol"], options["atol"], options["equal_nan"],
                             options["check_dtype"])
            return
    except _Mismatch as m:
        m.path = path
        raise
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        missing, extra = sorted(set(expected) - set(actual), key=repr), sorted(set(actual) - set(expected), key=repr)
        if missing or extra:
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {missing}\n"
                            f"Additional keys in the actual mapping: {extra}", path)
        for key in actual:
            _compare(actual[key], expected[key], f"{path}[{key!r}]", options)
        return
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                            path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{path}[{i}]", options)
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                               f"{type(expected)}.", path)


def _is_sequence(x) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, str)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise an ``AssertionError`` unless ``actual`` and ``expected`` are close (see the module doc).

    Without ``rtol``/``atol`` (give both or neither) the tolerances are PyTorch's for the dtypes compared:
    float32 ``(1.3e-6, 1e-5)``, float64 ``(1e-7, 1e-7)``, float16 ``(1e-3, 1e-5)``, exact for integers and
    bools. ``msg`` replaces the message, or (a callable) rewrites it.
    """
    options = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_device": check_device,
               "check_dtype": check_dtype, "check_stride": check_stride}
    try:
        _compare(actual, expected, "", options)
    except _Mismatch as m:
        message = m.message
        if m.path and m.kind is AssertionError:
            message = f"{message}\n\nThe failure occurred for item {m.path}"
        if m.kind is AssertionError and msg is not None:
            message = msg(message) if callable(msg) else msg
        raise m.kind(message) from None
