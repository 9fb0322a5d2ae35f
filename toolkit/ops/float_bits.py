"""Ops on the parts of numbers: signs (copysign, signbit), exponents (ldexp, frexp), neighbours (nextafter),
non-finite values (nan_to_num), steps (heaviside), float64 powers (float_power), integer divisors (gcd, lcm)
and bit shifts.

Formulas that depend on the dtype's width stay exact in a fused loop: ``math.nextafter`` steps in its
arguments' own precision (numba types it per dtype), ``nan_to_num``'s default for an infinity is
``nextafter(self, -self)`` (the dtype's largest finite value), and shifts widen to 64 bits before the
result is stored back (a shift past a narrower width leaves the low bits 0 or the sign fill). gcd, lcm and
float_power compute their own dtypes (``PROMOTE_NONE``): an integer loop with a call stays with eager mode.
"""

from __future__ import annotations

import math

import numpy as np

from .. import return_types
from .._core import dtypes as _dt
from .._core.fp_errors import ignore_fp_errors
from .._core.meta import TensorMeta
from . import api
from ._meta_rules import elementwise_meta
from .complex_refusal import no_complex_kernel, refuse_complex
from .elementwise import float_only, int_and_bool, not_implemented, unary_samples
from .grad_fn_rules import by_scalar_operand
from .registry import (
    COMPARISON,
    ELEMENTWISE,
    INPLACE,
    PROMOTE_BOOL_OUT,
    PROMOTE_DEFAULT,
    PROMOTE_INT_TO_FLOAT,
    PROMOTE_NONE,
    op,
    refuses_names,
    runs_on_sparse_values,
)

_LN2 = math.log(2.0)


def promoted_dtype(*values) -> np.dtype:
    """PyTorch's result dtype of ``values`` (arrays with dims, 0-dim arrays, Python numbers), as numpy's."""
    dims, zeros, scalars = [], [], []
    for v in values:
        if isinstance(v, np.ndarray):
            (dims if v.ndim else zeros).append(_dt.from_numpy_dtype(v.dtype))
        elif v is not None:
            scalars.append(v)
    return np.dtype(_dt.result_type_from(dims, zeros, scalars).np)


def _as(v, dt: np.dtype) -> np.ndarray:
    return np.asarray(v, dtype=dt)


# ----------------------------------------------------------------------------- signs
@op("copysign.Tensor(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="math.copysign(self, other)",
    promotion=PROMOTE_INT_TO_FLOAT, inplace=True,
    grad_fn=by_scalar_operand("CopysignBackward0", "CopysignBackward1"))
def copysign(self, other):
    """``|self|`` with the sign of ``other`` (``-0.0`` and ``nan`` signs included); integers compute in float."""
    return np.copysign(self, other)


@copysign.grad
def _(grad, self, result, needs_input_grad):
    g_self = None
    if needs_input_grad[0]:
        g_self = grad * api.where(self == 0, 0.0, result / api.where(self == 0, 1.0, self))
    return g_self, (grad * 0 if needs_input_grad[1] else None)


@op("signbit(Tensor self) -> Tensor", kind=COMPARISON, out="exact", formula="math.copysign(1.0, self) < 0.0",
    promotion=PROMOTE_BOOL_OUT, differentiable=False)
def signbit(self):
    """True where the sign bit is set: negative numbers, ``-0.0`` and negative nans."""
    if self.dtype.kind == "f":
        return np.signbit(self)
    return np.asarray(self < 0) if self.dtype.kind == "i" else np.zeros(self.shape, dtype=bool)


# ----------------------------------------------------------------------------- exponents
@op("ldexp.Tensor(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, out="cast", formula="self * 2.0 ** other",
    promotion=PROMOTE_INT_TO_FLOAT, inplace=True)
def ldexp(self, other):
    """``self * 2 ** other``; integers compute in float, as PyTorch's ``self * pow(2, other)``."""
    with ignore_fp_errors():
        return np.multiply(self, np.power(np.asarray(2, dtype=np.result_type(self, other)), other))


@ldexp.grad
def _(grad, self, other, result, needs_input_grad):
    g_self = grad * api.pow(2.0, other) if needs_input_grad[0] else None
    g_other = grad * result * _LN2 if needs_input_grad[1] else None
    return g_self, g_other


@op("frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)", kind=ELEMENTWISE, out="exact", formula="math.frexp(self)",
    promotion=PROMOTE_NONE)
def frexp(self):
    """``self = mantissa * 2 ** exponent`` with ``0.5 <= |mantissa| < 1`` (int32 exponents); floats only."""
    if self.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(self)
    return mantissa, exponent.astype(np.int32)


frexp.return_type = return_types.frexp


@frexp.meta_rule
def _(self):
    if not self.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return TensorMeta(self.shape, self.dtype, self.device), TensorMeta(self.shape, _dt.int32, self.device)


@frexp.grad
def _(grad, result):
    return grad[0] / result[1].to(grad[0].dtype).exp2()


@op("nextafter(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="math.nextafter(self, other)",
    inplace=True)
def nextafter(self, other):
    """The next representable value after ``self`` toward ``other``, in the promoted dtype's own precision."""
    dt = np.result_type(self, other)
    if dt.kind != "f":
        raise not_implemented("nextafter", "nextafter_cpu", dt)
    return np.nextafter(self, other)


float_only(nextafter, "nextafter_cpu")


@nextafter.grad
def _(grad, needs_input_grad):
    return grad, (grad * 0 if needs_input_grad[1] else None)


# ----------------------------------------------------------------------------- non-finite values, steps, powers
@op("nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor", kind=ELEMENTWISE, out="exact",
    formula="(0.0 if nan is None else nan) if self != self else ("
            "(math.nextafter(self, -self) if posinf is None else posinf) if self == math.inf else ("
            "(math.nextafter(self, -self) if neginf is None else neginf) if self == -math.inf else self))",
    inplace=True)
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    """``nan`` for NaN (0 by default), ``posinf``/``neginf`` for the infinities (the dtype's largest finite
    values by default); integer and bool tensors come back unchanged."""
    if self.dtype.kind != "f":
        return self.copy()
    return np.nan_to_num(self, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


@nan_to_num.grad
def _(grad, self):
    return grad * self.isfinite()


def _same_dtypes(dtypes) -> None:
    if len(set(dtypes)) > 1:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


@op("heaviside(Tensor self, Tensor values) -> Tensor", kind=ELEMENTWISE, out="exact",
    formula="values if self == 0 else (1 if self > 0 else 0)", inplace=True, differentiable=False,
    check_dtypes=_same_dtypes)
def heaviside(self, values):
    """The step function: 0 below 0, ``values`` at 0, 1 above (and 0 for nan, as PyTorch)."""
    return np.where(np.asarray(self) == 0, values, np.asarray(self) > 0).astype(np.result_type(self, values))


@op("float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", kind=ELEMENTWISE, out="exact",
    formula="math.pow(float(self), float(exponent))", promotion=PROMOTE_NONE, scalar_self=True,
    grad_fn=by_scalar_operand("PowBackward1", "PowBackward0", "PowBackward2"))  # PyTorch's runs pow
def float_power(self, exponent):
    """``self ** exponent`` computed and returned in float64 whatever the input dtypes."""
    with ignore_fp_errors():
        return np.power(_as(self, np.float64), _as(exponent, np.float64))


@float_power.meta_rule
def _(self, exponent):
    meta = elementwise_meta(float_power, self, exponent)
    return TensorMeta(meta.shape, _dt.float64, meta.device)


def _float_power_(self, exponent):
    """In-place version of :func:`float_power`: ``self`` must be float64, the dtype of the result."""
    if self.dtype is not _dt.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dt.title(self.dtype)} but the operation's "
                           f"result requires dtype Double")
    return self.copy_(api.float_power(self, exponent))


for _schema in ("float_power_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
                "float_power_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)"):
    op(_schema, kind=INPLACE, function=False, composite=True)(_float_power_)


def _as_double(v):
    return v.double() if hasattr(v, "double") else float(v)


@float_power.grad
def _(grad, self, exponent, result, needs_input_grad):
    s, e = _as_double(self), _as_double(exponent)
    g_self = g_exp = None
    if needs_input_grad[0]:
        g_self = grad * api.where(e == 0, 0.0, e * s ** (e - 1)) if hasattr(e, "shape") else (
            grad * 0 if e == 0 else grad * e * s ** (e - 1))
        g_self = g_self.to(self.dtype)
    if needs_input_grad[1]:
        log_s = s.log() if hasattr(s, "log") else (math.log(s) if s > 0 else (-math.inf if s == 0 else math.nan))
        g_exp = (grad * api.where((s == 0) & (e >= 0), 0.0, result * log_s)).to(exponent.dtype)
    return g_self, g_exp


# ----------------------------------------------------------------------------- integer divisors and shifts
def _integer_op(name: str, ufunc, doc: str, kernel_name: str, promotion: str = PROMOTE_NONE, **options):
    def kernel(self, other):
        dt = promoted_dtype(self, other)
        if dt.kind not in "iu":
            raise not_implemented(name, kernel_name, dt)
        return ufunc(_as(self, dt), _as(other, dt), dt)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = doc
    d = op(f"{name}(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, promotion=promotion, inplace=True,
           differentiable=False, **options)(kernel)

    @d.meta_rule
    def _(self, other):
        meta = elementwise_meta(d, self, other)
        if meta.dtype.is_floating_point or meta.dtype is _dt.bool:
            raise not_implemented(name, kernel_name, meta.dtype)
        return meta

    return d


def _left_shift(a, b, dt):
    bits = dt.itemsize * 8
    ok = (b >= 0) & (b < bits)
    return np.where(ok, np.left_shift(a, np.where(ok, b, 0).astype(dt)), 0).astype(dt)


def _right_shift(a, b, dt):
    bits = dt.itemsize * 8
    ok = (b >= 0) & (b < bits)
    return np.where(ok, np.right_shift(a, np.where(ok, b, 0).astype(dt)), np.where(a < 0, -1, 0)).astype(dt)


gcd = _integer_op("gcd", lambda a, b, dt: np.gcd(a, b), "The greatest common divisor (non-negative) of integers.",
                  "gcd_cpu", formula="gcd(self, other)")
lcm = _integer_op("lcm", lambda a, b, dt: np.lcm(a, b), "The least common multiple (non-negative) of integers.",
                  "lcm_cpu", formula="lcm(self, other)")
bitwise_left_shift = _integer_op(
    "bitwise_left_shift", _left_shift, "``self << other`` for integers; 0 for shifts past the width or negative.",
    "lshift_cpu", PROMOTE_DEFAULT, formula="self << other if 0 <= other < 64 else 0",
    dunders=("lshift", "rlshift", "ilshift"))
bitwise_right_shift = _integer_op(
    "bitwise_right_shift", _right_shift,
    "``self >> other`` (arithmetic) for integers; the sign fill for shifts past the width or negative.",
    "rshift_cpu", PROMOTE_DEFAULT, formula="self >> other if 0 <= other < 64 else (-1 if self < 0 else 0)",
    dunders=("rshift", "rrshift", "irshift"))


# ----------------------------------------------------------------------------- samples
def _signed(rng, shape):
    return rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _two(rng):
    yield (_signed(rng, (3, 4)), _signed(rng, (3, 4))), {}
    yield (_signed(rng, (2, 3, 4)), _signed(rng, (4,))), {}
    yield (_signed(rng, (4, 3)).T, np.array(-0.75)), {}
    yield (_signed(rng, (0, 2)), _signed(rng, (2,))), {}


@copysign.sample_inputs
def _(rng):
    yield from _two(rng)
    yield (_signed(rng, (3,)), -1.5), {}
    yield (rng.integers(-4, 5, (2, 3)), rng.integers(-4, 5, (3,))), {}


@signbit.sample_inputs
def _(rng):
    yield from unary_samples(rng)
    yield (np.array([-0.0, 0.0, np.nan, -np.inf, np.inf]),), {}
    yield from int_and_bool(rng)


@ldexp.sample_inputs
def _(rng):
    yield (_signed(rng, (3, 4)), rng.integers(-4, 5, (3, 4))), {}
    yield (_signed(rng, (2, 3)), rng.uniform(-2, 2, (3,))), {}
    yield (rng.integers(-4, 5, (2, 3)), rng.integers(-3, 4, (3,))), {}


@frexp.sample_inputs
def _(rng):
    yield from unary_samples(rng, -9.0, 9.0)
    yield (np.array([0.3, -0.7, 1.3, 0.55, -3.1, 5e-3]),), {}
    yield (rng.uniform(-9, 9, (3,)).astype(np.float32),), {}


@nextafter.sample_inputs
def _(rng):
    yield from _two(rng)
    yield (rng.uniform(-2, 2, (3,)).astype(np.float32), rng.uniform(-2, 2, (3,)).astype(np.float32)), {}
    yield (rng.uniform(-2, 2, (3,)).astype(np.float32), np.array(5.0)), {}


@nan_to_num.sample_inputs
def _(rng):
    yield from unary_samples(rng)
    special = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0])
    yield (special,), {}
    yield (special.astype(np.float32),), {"nan": 2.0, "posinf": 10.0}
    yield (special,), {"neginf": -7.0}
    yield from int_and_bool(rng)


@heaviside.sample_inputs
def _(rng):
    x = np.array([-1.5, 0.0, 2.0, np.nan, 0.0, -0.0])
    yield (x, np.array([0.5, 0.25, 0.75, 0.5, 0.1, 0.9])), {}
    yield (np.round(rng.uniform(-2, 2, (3, 4))), rng.uniform(0, 1, (4,))), {}
    yield (rng.integers(-2, 3, (3,)), rng.integers(-2, 3, (3,))), {}
    yield (rng.random((3,)) > 0.5, rng.random((3,)) > 0.5), {}


@float_power.sample_inputs
def _(rng):
    yield (rng.uniform(0.5, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))), {}
    yield (rng.uniform(0.5, 2, (2, 3)), 2), {}
    yield (rng.uniform(0.5, 2, (2, 3)), -1.5), {}
    yield (2.5, rng.uniform(-1, 1, (2, 3))), {}
    yield (rng.integers(1, 5, (3,)), rng.integers(0, 3, (3,))), {}


def _integer_samples(rng):
    yield (rng.integers(-20, 21, (3, 4)), rng.integers(-20, 21, (3, 4))), {}
    yield (rng.integers(-20, 21, (2, 3)).astype(np.int32), rng.integers(-9, 10, (3,)).astype(np.int16)), {}
    yield (rng.integers(0, 50, (4,)).astype(np.uint8), np.array(6)), {}
    yield (np.array([0, 0, 7, -12]), np.array([0, 5, 0, 18])), {}


gcd.sample_inputs(_integer_samples)
lcm.sample_inputs(_integer_samples)


def _shift_samples(rng):
    yield (rng.integers(-100, 100, (3, 4)), rng.integers(0, 8, (3, 4))), {}
    yield (rng.integers(-100, 100, (2, 3)).astype(np.int32), np.array([1, 33, -1])), {}
    yield (rng.integers(-100, 100, (4,)).astype(np.int8), np.array([1, 9, -1, 3], dtype=np.int8)), {}
    yield (rng.integers(0, 250, (4,)).astype(np.uint8), 3), {}
    yield (np.array([1, -3, 100, 5], dtype=np.int64), np.array([1, 70, 63, -2])), {}


bitwise_left_shift.sample_inputs(_shift_samples)
bitwise_right_shift.sample_inputs(_shift_samples)


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("copysign", "nextafter"), no_complex_kernel("{name}_cpu"))
refuse_complex(("signbit",), "signbit is not implemented for complex tensors.")
refuse_complex(("heaviside",), "heaviside is not yet implemented for complex tensors.", RuntimeError)

# PyTorch's sparse kernels for these map the values (each maps zero to zero).
runs_on_sparse_values(("nan_to_num", "signbit"))

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("bitwise_left_shift", "bitwise_right_shift", "copysign.Tensor", "frexp.Tensor", "gcd", "heaviside",
               "lcm", "ldexp.Tensor", "nan_to_num"))
