"""Comparisons and logic: eq ne lt le gt ge, logical_*, bitwise_*, isnan/isinf/isfinite, isclose, allclose, equal.

Comparisons promote their inputs as arithmetic does and return bool
(``int_tensor < 2.5`` compares in float); in-place forms (``x.lt_(y)``) keep
``x``'s dtype and store 0/1. Logical ops read any dtype as truth values.
Bitwise ops take integer and bool tensors only. None of these is
differentiable: their outputs are bool or integer.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.dtypes import title as _title
from .._core.fp_errors import ignore_fp_errors
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes
from .complex_refusal import no_complex_kernel, refuse_complex
from .elementwise import not_implemented
from .pointwise import alias, compute_dtype
from .registry import (
    COMPARISON,
    ELEMENTWISE,
    PROMOTE_ALWAYS_BOOL,
    PROMOTE_BOOL_OUT,
    PROMOTE_NONE,
    REDUCTION,
    op,
    refuses_names,
    runs_on_sparse_values,
)


def _named(name: str, fn, doc: str):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


# ----------------------------------------------------------------------------- eq ne lt le gt ge
def _comparison(name: str, ufunc, symbol: str, doc: str):
    def kernel(self, other):
        return ufunc(self, other)

    return op(f"{name}(Tensor self, Tensor other) -> Tensor", kind=COMPARISON, formula=f"self {symbol} other",
              promotion=PROMOTE_BOOL_OUT, inplace=True, dunders=(name,), differentiable=False)(
        _named(name, kernel, doc))


_COMPARED = (" after promoting both to their common dtype (a Python number compares in the tensor's dtype, "
             "as PyTorch does); bool result.")
eq = _comparison("eq", np.equal, "==", "``self == other`` elementwise" + _COMPARED)
ne = _comparison("ne", np.not_equal, "!=", "``self != other`` elementwise" + _COMPARED)
lt = _comparison("lt", np.less, "<", "``self < other`` elementwise" + _COMPARED)
le = _comparison("le", np.less_equal, "<=", "``self <= other`` elementwise" + _COMPARED)
gt = _comparison("gt", np.greater, ">", "``self > other`` elementwise" + _COMPARED)
ge = _comparison("ge", np.greater_equal, ">=", "``self >= other`` elementwise" + _COMPARED)

not_equal = alias(ne, "not_equal")
less = alias(lt, "less")
less_equal = alias(le, "less_equal")
greater = alias(gt, "greater")
greater_equal = alias(ge, "greater_equal")


# ----------------------------------------------------------------------------- logical
def _logical(name: str, ufunc, formula: str, doc: str):
    def kernel(self, other):
        return ufunc(self, other)

    return op(f"{name}(Tensor self, Tensor other) -> Tensor", kind=COMPARISON, formula=formula,
              promotion=PROMOTE_ALWAYS_BOOL, inplace=True, differentiable=False)(_named(name, kernel, doc))


logical_and = _logical("logical_and", np.logical_and, "bool(self) and bool(other)",
                       "True where both inputs are nonzero (NaN counts as nonzero).")
logical_or = _logical("logical_or", np.logical_or, "bool(self) or bool(other)",
                      "True where either input is nonzero (NaN counts as nonzero).")
logical_xor = _logical("logical_xor", np.logical_xor, "bool(self) != bool(other)",
                       "True where exactly one input is nonzero (NaN counts as nonzero).")


@op("logical_not(Tensor self) -> Tensor", kind=COMPARISON, formula="not self", promotion=PROMOTE_ALWAYS_BOOL,
    inplace=True, differentiable=False)
def logical_not(self):
    """True where ``self`` is zero; ``x.logical_not_()`` stores 0/1 in ``x``'s dtype."""
    return np.logical_not(self)


# ----------------------------------------------------------------------------- bitwise
def _bitwise(name: str, ufunc, symbol: str, doc: str):
    def kernel(self, other):
        dt = compute_dtype(self, other)
        if dt.kind == "f":
            raise not_implemented(name, f"{name}_cpu", dt)
        return ufunc(self, other)

    short = name.split("_")[1]
    return op(f"{name}(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula=f"self {symbol} other",
              inplace=True, dunders=(short, "r" + short, "i" + short), differentiable=False)(
        _named(name, kernel, doc))


bitwise_and = _bitwise("bitwise_and", np.bitwise_and, "&", "Bitwise AND of integer or bool tensors (``a & b``).")
bitwise_or = _bitwise("bitwise_or", np.bitwise_or, "|", "Bitwise OR of integer or bool tensors (``a | b``).")
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor, "^", "Bitwise XOR of integer or bool tensors (``a ^ b``).")


@op("bitwise_not(Tensor self) -> Tensor", kind=ELEMENTWISE, out="exact", formula="~self", inplace=True, dunders=("invert",),
    differentiable=False)
def bitwise_not(self):
    """Bitwise NOT (``~x``): logical NOT for bool, two's complement for integers."""
    dt = compute_dtype(self)
    if dt.kind == "f":
        raise not_implemented("bitwise_not", "bitwise_not_cpu", dt)
    return np.invert(self)


# ----------------------------------------------------------------------------- classification
def _classify(name: str, fn, formula: str, doc: str):
    """A float test that is constant (``fill``) for integer and bool inputs."""
    fill = name == "isfinite"

    def kernel(self):
        if compute_dtype(self).kind != "f":
            return np.full(np.shape(self), fill)
        return fn(self)

    # PyTorch's isnan, isinf and isfinite have no out variant; isposinf and isneginf write bool only.
    out_rule = "exact" if name in ("isposinf", "isneginf") else False
    return op(f"{name}(Tensor self) -> Tensor", kind=COMPARISON, out=out_rule, formula=formula,
              promotion=PROMOTE_BOOL_OUT, differentiable=False)(_named(name, kernel, doc))


isnan = _classify("isnan", np.isnan, "math.isnan(self)", "True where ``self`` is NaN.")
isinf = _classify("isinf", np.isinf, "math.isinf(self)", "True where ``self`` is plus or minus infinity.")
isfinite = _classify("isfinite", np.isfinite, "math.isfinite(self)",
                     "True where ``self`` is neither infinite nor NaN (always for integers).")
isposinf = _classify("isposinf", np.isposinf, "self == math.inf", "True where ``self`` is plus infinity.")
isneginf = _classify("isneginf", np.isneginf, "self == -math.inf", "True where ``self`` is minus infinity.")


# ----------------------------------------------------------------------------- closeness
def _close_check(name: str, self_dtype, other_dtype, rtol: float, atol: float) -> None:
    if self_dtype.name != other_dtype.name:
        raise RuntimeError(f"{name}: {_title(self_dtype)} did not match {_title(other_dtype)}")
    if rtol < 0:
        raise RuntimeError(f"{name}: rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"{name}: atol must be greater than or equal to zero, but got {atol}")


def _isclose(name: str, self, other, rtol, atol, equal_nan):
    self = np.asarray(self)
    other = np.asarray(other, dtype=self.dtype) if not isinstance(other, np.ndarray) else other
    _close_check(name, self.dtype, other.dtype, rtol, atol)
    close = np.equal(self, other)
    floating = self.dtype.kind in "fc"  # complex: |self - other| is the modulus of the difference
    if equal_nan and floating:
        close |= np.isnan(self) & np.isnan(other)
    if rtol == 0 and atol == 0:
        return close
    if not floating:  # integers and bool compare in the default float dtype, as PyTorch does
        ft = _dt.get_default_dtype().np
        self, other = self.astype(ft), other.astype(ft)
    with ignore_fp_errors():
        allowed = atol + np.abs(rtol * other)
        actual = np.abs(self - other)
        close |= np.isfinite(actual) & (actual <= allowed)
    return close


@op("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor",
    kind=COMPARISON, out=False, promotion=PROMOTE_NONE, differentiable=False,
    formula="self == other or (equal_nan and self != self and other != other) or "
            "(abs(self - other) != math.inf and abs(self - other) <= atol + rtol * abs(other))")
def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|self - other| <= atol + rtol * |other|`` elementwise (equal infinities are close).

    Both tensors must have the same dtype; NaNs are close only with ``equal_nan=True``.
    """
    return _isclose("isclose", self, other, rtol, atol, equal_nan)


def _close_meta(name: str, self, other, rtol, atol):
    _close_check(name, self.dtype, other.dtype, rtol, atol)
    return broadcast_shapes(tuple(self.shape), tuple(other.shape), op=name)


@isclose.meta_rule
def _(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return TensorMeta(_close_meta("isclose", self, other, rtol, atol), _dt.bool, self.device)


@op("allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool",
    kind=REDUCTION, differentiable=False)
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``self`` is close to ``other`` (see ``isclose``): a Python bool."""
    return bool(np.all(_isclose("allclose", self, other, rtol, atol, equal_nan)))


@allclose.meta_rule
def _(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _close_meta("allclose", self, other, rtol, atol)  # a Python bool: no tensor metadata to return


@op("equal(Tensor self, Tensor other) -> bool", kind=REDUCTION, differentiable=False)
def equal(self, other):
    """Whether both tensors have the same shape and the same values (compared in their common dtype)."""
    if self.shape != other.shape:
        return False
    common = _dt.promote_types(_dt.from_numpy_dtype(self.dtype), _dt.from_numpy_dtype(other.dtype)).np
    return bool(np.array_equal(self.astype(common, copy=False), other.astype(common, copy=False)))


@equal.meta_rule
def _(self, other):
    return None  # a Python bool: no tensor metadata


# ----------------------------------------------------------------------------- samples
def _ints(rng, shape, low=-5, high=6, dtype=np.int64):
    return rng.integers(low, high, shape).astype(dtype)


def _comparison_samples(rng):
    a = rng.integers(-2, 3, (3, 4)) / 2.0
    yield (a, np.where(rng.random((3, 4)) > 0.5, a, rng.integers(-2, 3, (3, 4)) / 2.0)), {}
    yield (rng.integers(-2, 3, (2, 3, 4)) / 2.0, rng.integers(-2, 3, (4,)) / 2.0), {}
    yield ((rng.integers(-2, 3, (4, 3)) / 2.0).T, np.array(0.5)), {}
    yield (np.array(0.5), rng.integers(-2, 3, (2, 2)) / 2.0), {}
    yield (np.array([np.nan, 1.0, -np.inf, np.inf, 0.0]), np.array([np.nan, np.nan, -np.inf, 1.0, -0.0])), {}
    yield (_ints(rng, (2, 3)), 2.5), {}
    yield (_ints(rng, (2, 3)), 2), {}
    yield (_ints(rng, (3,), dtype=np.uint8, low=0), _ints(rng, (3,), dtype=np.int8)), {}
    yield (_ints(rng, (3,), dtype=np.uint8, low=0), -1), {}
    yield (_ints(rng, (3,), dtype=np.int16), np.array([1.5, 2.0, -3.0], dtype=np.float32)), {}
    yield (rng.random((3,)) > 0.5, rng.random((2, 1)) > 0.5), {}
    yield (rng.random((3,)) > 0.5, True), {}
    yield (rng.uniform(-1, 1, (0, 3)), 0.0), {}


for _o in (eq, ne, lt, le, gt, ge):
    _o.sample_inputs(_comparison_samples)


def _truth_samples(rng):
    yield (rng.integers(0, 2, (3, 4)) * 1.5, rng.integers(0, 2, (3, 4)) * -0.5), {}
    yield (rng.integers(0, 2, (2, 3, 4)) * 1.0, rng.integers(0, 2, (4,)) * 1.0), {}
    yield ((rng.integers(0, 2, (4, 3)) * 1.0).T, np.array(0.0)), {}
    yield (np.array([np.nan, 0.0, -0.0, np.inf]), np.array([1.0, np.nan, 2.0, 0.0])), {}
    yield (_ints(rng, (2, 3), -1, 2), rng.random((3,)) > 0.5), {}
    yield (_ints(rng, (3,), dtype=np.uint8, low=0, high=2), _ints(rng, (3,), dtype=np.int8, low=0, high=2)), {}
    yield (rng.random((3,)) > 0.5, rng.random((3,)) > 0.5), {}
    yield (rng.uniform(-1, 1, (0, 3)), rng.uniform(-1, 1, (3,))), {}


for _o in (logical_and, logical_or, logical_xor):
    _o.sample_inputs(_truth_samples)


@logical_not.sample_inputs
def _(rng):
    yield (rng.integers(0, 2, (3, 4)) * 1.5,), {}
    yield ((rng.integers(0, 2, (4, 3)) * 1.0).T,), {}
    yield (np.array([np.nan, 0.0, -0.0, np.inf]),), {}
    yield (np.array(0.0),), {}
    yield (_ints(rng, (2, 3), -1, 2),), {}
    yield (rng.random((3,)) > 0.5,), {}


def _bitwise_samples(rng):
    yield (_ints(rng, (3, 4), -50, 50), _ints(rng, (3, 4), -50, 50)), {}
    yield (_ints(rng, (2, 3, 4), 0, 200, np.uint8), _ints(rng, (4,), -100, 100, np.int8)), {}
    yield (_ints(rng, (4, 3), -9, 9, np.int32).T, np.array(6, dtype=np.int64)), {}
    yield (np.array(5, dtype=np.int16), _ints(rng, (2, 2), -9, 9, np.int16)), {}
    yield (_ints(rng, (3,), -9, 9), 6), {}
    yield (6, _ints(rng, (3,), -9, 9, np.int8)), {}
    yield (rng.random((3,)) > 0.5, rng.random((2, 1)) > 0.5), {}
    yield (rng.random((3,)) > 0.5, True), {}
    yield (rng.random((3,)) > 0.5, 3), {}
    yield (_ints(rng, (0, 3)), _ints(rng, (3,))), {}


for _o in (bitwise_and, bitwise_or, bitwise_xor):
    _o.sample_inputs(_bitwise_samples)


@bitwise_not.sample_inputs
def _(rng):
    yield (_ints(rng, (3, 4), -50, 50),), {}
    yield (_ints(rng, (4, 3), 0, 255, np.uint8).T,), {}
    yield (np.array(7, dtype=np.int8),), {}
    yield (rng.random((3,)) > 0.5,), {}
    yield (_ints(rng, (0, 2), dtype=np.int16),), {}


def _classify_samples(rng):
    yield (np.array([[np.nan, 1.0, -np.inf], [np.inf, -0.0, 3.5]]),), {}
    yield (np.array([[np.nan, 1.0], [-np.inf, np.inf], [0.0, 2.0]]).T,), {}
    yield (np.array(np.inf),), {}
    yield (np.array([np.nan, np.inf, 1.0], dtype=np.float32),), {}
    yield (_ints(rng, (2, 3)),), {}
    yield (rng.random((3,)) > 0.5,), {}
    yield (rng.uniform(-1, 1, (0, 3)),), {}


for _o in (isnan, isinf, isfinite, isposinf, isneginf):
    _o.sample_inputs(_classify_samples)


def _close_samples(rng):
    a = rng.uniform(-2, 2, (3, 4))
    yield (a, a + rng.choice([0.0, 1e-9, 1e-3], (3, 4))), {}
    yield (a, a + 1e-3), {"rtol": 1e-3, "atol": 1e-4}
    yield (rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (3,))), {"atol": 1.0}
    yield (a.T, a.T.copy()), {}
    yield (np.array([np.nan, np.inf, -np.inf, 1.0, np.inf]), np.array([np.nan, np.inf, np.inf, np.inf, 1.0])), {}
    yield (np.array([np.nan, 1.0]), np.array([np.nan, 1.0 + 1e-6])), {"equal_nan": True}
    yield (np.array(1.0), np.array(1.0 + 1e-7)), {}
    yield (_ints(rng, (4,)), _ints(rng, (4,))), {"atol": 2}
    yield (_ints(rng, (3,), 0, 255, np.uint8), _ints(rng, (3,), 0, 255, np.uint8)), {"atol": 100.0}
    yield (a, a + 0.5), {"rtol": 0.0, "atol": 0.0}
    yield (rng.uniform(-1, 1, (0, 3)), rng.uniform(-1, 1, (3,))), {}


isclose.sample_inputs(_close_samples)
allclose.sample_inputs(_close_samples)


@equal.sample_inputs
def _(rng):
    a = rng.uniform(-2, 2, (3, 4))
    yield (a, a.copy()), {}
    yield (a, a + np.eye(3, 4) * 1e-12), {}
    yield (a.T, a.T.copy()), {}
    yield (a, a[:2]), {}
    yield (np.array([1.0, 2.0]), np.array([[1.0, 2.0]])), {}
    yield (np.array([1, 2]), np.array([1.0, 2.0], dtype=np.float32)), {}
    yield (np.array([16777217]), np.array([16777216.0], dtype=np.float32)), {}
    yield (np.array([np.nan]), np.array([np.nan])), {}
    yield (np.array(1.0), np.array(1)), {}
    yield (rng.random((3,)) > 0.5, np.array([1, 0, 1])), {}
    yield (np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int32)), {}


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("lt", "le", "gt", "ge", "less", "less_equal", "greater", "greater_equal", "bitwise_and",
                "bitwise_or", "bitwise_xor"), no_complex_kernel("{name}_cpu"))
refuse_complex(("isposinf", "isneginf"), "{name} does not support complex inputs.", RuntimeError)

# PyTorch's sparse kernels for these map the values (each maps zero to zero).
runs_on_sparse_values(("isinf", "isnan"))


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def _onnx_compare(op_type, negate=False):
    def lower(g, self, other):
        from .elementwise import onnx_promote  # defined beside the elementwise ops, imported after them
        self, other = onnx_promote(g, self, other)
        if op_type != "Equal" and g.dtype(self) is _dt.bool:  # ONNX orders numbers only
            self, other = (g.op("Cast", x, to=_dt.int32) for x in (self, other))
        out = g.op(op_type, self, other)
        return g.op("Not", out) if negate else out
    return lower


def _onnx_bool(g, x):
    return x if g.dtype(x) is _dt.bool else g.op("Cast", x, to=_dt.bool)


def _onnx_logical(op_type):
    def lower(g, self, other):
        return g.op(op_type, _onnx_bool(g, self), _onnx_bool(g, other))
    return lower


for _op_def, _lower in ((eq, _onnx_compare("Equal")), (ne, _onnx_compare("Equal", negate=True)),
                        (lt, _onnx_compare("Less")), (le, _onnx_compare("LessOrEqual")),
                        (gt, _onnx_compare("Greater")), (ge, _onnx_compare("GreaterOrEqual")),
                        (logical_and, _onnx_logical("And")), (logical_or, _onnx_logical("Or")),
                        (logical_xor, _onnx_logical("Xor"))):
    _op_def.symbolic(_lower)


@logical_not.symbolic
def _(g, self):
    return g.op("Not", _onnx_bool(g, self))

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("allclose", "bitwise_and", "bitwise_or", "bitwise_xor", "isneginf", "isposinf", "eq_", "ge_", "gt_",
               "le_", "lt_", "ne_"))
