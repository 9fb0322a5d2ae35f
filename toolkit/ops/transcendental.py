"""Exponentials, logarithms, roots, trigonometric and hyperbolic functions, the error function and their kin.

All compute in floating point: integer and bool inputs promote to the default
float dtype, as in PyTorch. numpy kernels where numpy has the function;
``erf`` and ``erfinv``, which numpy lacks, run their own ``formula`` as a numba
map kernel (``toolkit.backends.cpu``), compiled on first use and cached on disk.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.fp_errors import ignore_fp_errors
from . import api
from .complex_refusal import no_complex_kernel, refuse_complex
from .elementwise import (
    compute_dtype,
    float_only,
    float_samples,
    float_unary,
    formula_kernel,
    int_and_bool,
    not_implemented,
    unary_samples,
)
from .grad_fn_rules import by_scalar_operand
from .pointwise import alias
from .registry import ELEMENTWISE, PROMOTE_INT_TO_FLOAT, op, refuses_names, runs_on_sparse_values

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# ----------------------------------------------------------------------------- exponentials and logarithms
@op("exp(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="math.exp(self)", promotion=PROMOTE_INT_TO_FLOAT,
    inplace=True)
def exp(self):
    """``e ** self`` elementwise."""
    with np.errstate(over="ignore"):
        return np.exp(self)


@exp.grad
def _(grad, result):
    return grad * result


exp2 = float_unary("exp2", np.exp2, "2.0 ** self", "``2 ** self`` elementwise.")


@exp2.grad
def _(grad, result):
    return grad * result * _LN2


expm1 = float_unary("expm1", np.expm1, "math.expm1(self)", "``exp(self) - 1``, accurate for small ``self``.")


@expm1.grad
def _(grad, result):
    return grad * (result + 1)


@op("log(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="math.log(self)", promotion=PROMOTE_INT_TO_FLOAT,
    inplace=True)
def log(self):
    """Natural logarithm; ``-inf`` at 0 and ``nan`` below, as in PyTorch."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(self)


@log.grad
def _(grad, self):
    return grad / self


log2 = float_unary("log2", np.log2, "math.log2(self)", "Base-2 logarithm; ``-inf`` at 0, ``nan`` below.")


@log2.grad
def _(grad, self):
    return grad / (self * _LN2)


log10 = float_unary("log10", np.log10, "math.log10(self)", "Base-10 logarithm; ``-inf`` at 0, ``nan`` below.")


@log10.grad
def _(grad, self):
    return grad / (self * _LN10)


log1p = float_unary("log1p", np.log1p, "math.log1p(self)", "``log(1 + self)``, accurate for small ``self``.")


@log1p.grad
def _(grad, self):
    return grad / (self + 1)


sqrt = float_unary("sqrt", np.sqrt, "math.sqrt(self)", "Square root; ``nan`` for negative inputs.")


@sqrt.grad
def _(grad, result):
    return grad / (result * 2)


def _rsqrt(a):
    return np.reciprocal(np.sqrt(a))


rsqrt = float_unary("rsqrt", _rsqrt, "1.0 / math.sqrt(self)",
                     "``1 / sqrt(self)``; ``inf`` at 0, ``-inf`` at -0.0, ``nan`` below.")


@rsqrt.grad
def _(grad, result):
    return grad * result * result * result * -0.5


# ----------------------------------------------------------------------------- trigonometric and hyperbolic
sin = float_unary("sin", np.sin, "math.sin(self)", "Sine (radians).")
cos = float_unary("cos", np.cos, "math.cos(self)", "Cosine (radians).")
tan = float_unary("tan", np.tan, "math.tan(self)", "Tangent (radians).")
asin = float_unary("asin", np.arcsin, "math.asin(self)", "Inverse sine; ``nan`` outside [-1, 1].")
acos = float_unary("acos", np.arccos, "math.acos(self)", "Inverse cosine; ``nan`` outside [-1, 1].")
atan = float_unary("atan", np.arctan, "math.atan(self)", "Inverse tangent.")
sinh = float_unary("sinh", np.sinh, "math.sinh(self)", "Hyperbolic sine.")
cosh = float_unary("cosh", np.cosh, "math.cosh(self)", "Hyperbolic cosine.")
tanh = float_unary("tanh", np.tanh, "math.tanh(self)", "Hyperbolic tangent.")


@sin.grad
def _(grad, self):
    return grad * self.cos()


@cos.grad
def _(grad, self):
    return grad * -self.sin()


@tan.grad
def _(grad, result):
    return grad * (result * result + 1)


@asin.grad
def _(grad, self):
    return grad / (1 - self * self).sqrt()


@acos.grad
def _(grad, self):
    return -grad / (1 - self * self).sqrt()


@atan.grad
def _(grad, self):
    return grad / (self * self + 1)


@sinh.grad
def _(grad, self):
    return grad * self.cosh()


@cosh.grad
def _(grad, self):
    return grad * self.sinh()


@tanh.grad
def _(grad, result):
    return grad * (1 - result * result)


asinh = float_unary("asinh", np.arcsinh, "math.asinh(self)", "Inverse hyperbolic sine.")
acosh = float_unary("acosh", np.arccosh, "math.acosh(self)", "Inverse hyperbolic cosine; ``nan`` below 1.")
atanh = float_unary("atanh", np.arctanh, "math.atanh(self)",
                    "Inverse hyperbolic tangent; ``±inf`` at ±1, ``nan`` outside [-1, 1].")


@asinh.grad
def _(grad, self):
    return grad / (self * self + 1).sqrt()


@acosh.grad
def _(grad, self):
    return grad / (self * self - 1).sqrt()


@atanh.grad
def _(grad, self):
    return grad / (1 - self * self)


arcsin = alias(asin, "arcsin")
arccos = alias(acos, "arccos")
arctan = alias(atan, "arctan")
arcsinh = alias(asinh, "arcsinh")
arccosh = alias(acosh, "arccosh")
arctanh = alias(atanh, "arctanh")

_DEG_PER_RAD = 180.0 / math.pi
_RAD_PER_DEG = math.pi / 180.0
deg2rad = float_unary("deg2rad", lambda a: a * a.dtype.type(_RAD_PER_DEG), f"self * {_RAD_PER_DEG!r}",
                      "Degrees to radians: ``self * pi / 180``.")
rad2deg = float_unary("rad2deg", lambda a: a * a.dtype.type(_DEG_PER_RAD), f"self * {_DEG_PER_RAD!r}",
                      "Radians to degrees: ``self * 180 / pi``.")


@deg2rad.grad
def _(grad):
    return grad * _RAD_PER_DEG


@rad2deg.grad
def _(grad):
    return grad * _DEG_PER_RAD


def _complex_sinc(a: np.ndarray) -> np.ndarray:
    """``sin(pi z) / (pi z)`` in ``z``'s complex dtype, 1 at 0."""
    pz = a * a.dtype.type(math.pi)
    zero = pz == 0
    return np.where(zero, a.dtype.type(1), np.sin(pz) / np.where(zero, a.dtype.type(1), pz))


sinc = float_unary("sinc", lambda a: _complex_sinc(a) if a.dtype.kind == "c" else formula_kernel("sinc")(a),
                   "sinc(self)", "The normalized sinc ``sin(pi x) / (pi x)``, 1 at 0.")


@sinc.grad
def _(grad, self, result):
    # (cos(pi x) - sinc(x)) / x, and 0 at x = 0 (sinc is flat there)
    safe = api.where(self == 0, 1.0, self)
    return grad * api.where(self == 0, 0.0, ((self * math.pi).cos() - result) / safe)


# ----------------------------------------------------------------------------- error function
erf = float_unary("erf", lambda a: formula_kernel("erf")(a), "math.erf(self)",
                   "Gauss error function (a numba kernel: numpy has none).")
erfinv = float_unary("erfinv", lambda a: formula_kernel("erfinv")(a), "erfinv(self)",
                      "Inverse error function on [-1, 1] (``±inf`` at ±1, ``nan`` outside).")


erfc = float_unary("erfc", lambda a: formula_kernel("erfc")(a), "math.erfc(self)",
                   "Complementary error function ``1 - erf(self)``, accurate where erf is near 1.")


@erf.grad
def _(grad, self):
    return grad * _TWO_OVER_SQRT_PI * (-self * self).exp()


@erfc.grad
def _(grad, self):
    return grad * -_TWO_OVER_SQRT_PI * (-self * self).exp()


@erfinv.grad
def _(grad, result):
    return grad * (0.5 * math.sqrt(math.pi)) * (result * result).exp()


# ----------------------------------------------------------------------------- logit, xlogy, logaddexp
@op("logit(Tensor self, float? eps=None) -> Tensor", kind=ELEMENTWISE,
    formula="math.log(self / (1.0 - self)) if eps is None else "
            "math.log(min(max(self, eps), 1.0 - eps) / (1.0 - min(max(self, eps), 1.0 - eps)))",
    promotion=PROMOTE_INT_TO_FLOAT, inplace=True)
def logit(self, eps=None):
    """``log(p / (1 - p))``, the inverse of sigmoid; with ``eps`` the input is clamped to ``[eps, 1 - eps]``
    first (``±inf`` at 0 and 1 without it, ``nan`` outside [0, 1])."""
    with ignore_fp_errors():
        if eps is not None:
            lo = self.dtype.type(eps)
            self = np.clip(self, lo, self.dtype.type(1) - lo)
        return np.log(self / (self.dtype.type(1) - self))


@logit.grad
def _(grad, self, eps=None):
    d = grad / (self * (1 - self))
    if eps is None:
        return api.where((self < 0) | (self > 1), math.nan, d)
    return api.where((self < eps) | (self > 1 - eps), 0.0, d)


@op("xlogy.Tensor(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE,
    formula="math.nan if other != other else (0.0 if self == 0 else self * math.log(other))",
    promotion=PROMOTE_INT_TO_FLOAT, inplace=True, scalar_self=True,
    grad_fn=by_scalar_operand("XlogyBackward0", "XlogyBackward2", "XlogyBackward1"))
def xlogy(self, other):
    """``self * log(other)``, 0 where ``self`` is 0 (unless ``other`` is nan): the entropy term ``p log p``."""
    with ignore_fp_errors():
        out = np.multiply(self, np.log(other))
        out = np.where(np.asarray(self) == 0, 0, out)
        return np.where(np.isnan(other), np.nan, out).astype(out.dtype, copy=False)


@xlogy.grad
def _(grad, self, other, needs_input_grad):
    g_self = g_other = None
    if needs_input_grad[0]:
        g_self = grad * api.xlogy((self != 0).to(grad.dtype), other)
    if needs_input_grad[1]:
        g_other = grad * self / other
    return g_self, g_other


def _logaddexp_check(name: str, self, other) -> None:
    dt = compute_dtype(self, other)
    if dt.kind != "f":
        raise not_implemented(name, f"{name}_cpu", dt)


@op("logaddexp(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="logaddexp(self, other)")
def logaddexp(self, other):
    """``log(exp(self) + exp(other))`` without overflow; floating-point inputs only, as in PyTorch."""
    _logaddexp_check("logaddexp", self, other)
    with ignore_fp_errors():
        return np.logaddexp(self, other)


@op("logaddexp2(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="logaddexp2(self, other)")
def logaddexp2(self, other):
    """``log2(2**self + 2**other)`` without overflow; floating-point inputs only, as in PyTorch."""
    _logaddexp_check("logaddexp2", self, other)
    with ignore_fp_errors():
        return np.logaddexp2(self, other)


float_only(logaddexp, "logaddexp_cpu")
float_only(logaddexp2, "logaddexp2_cpu")


@logaddexp.grad
def _(grad, self, other, needs_input_grad):
    g_self = grad / ((other - self).exp() + 1) if needs_input_grad[0] else None
    g_other = grad / ((self - other).exp() + 1) if needs_input_grad[1] else None
    return g_self, g_other


@logaddexp2.grad
def _(grad, self, other, needs_input_grad):
    g_self = grad / ((other - self).exp2() + 1) if needs_input_grad[0] else None
    g_other = grad / ((self - other).exp2() + 1) if needs_input_grad[1] else None
    return g_self, g_other


# ----------------------------------------------------------------------------- samples
float_samples(exp, exp2, expm1, sin, cos, atan, sinh, cosh, tanh, erf, erfc, asinh, deg2rad, rad2deg, sinc)
float_samples(atanh, low=-0.9, high=0.9)
float_samples(acosh, low=1.2, high=3.0, ints=False)


@logit.sample_inputs
def _(rng):
    yield from unary_samples(rng, 0.05, 0.95)
    yield (rng.uniform(0.2, 0.8, (3, 4)),), {"eps": 0.1}
    yield (np.array([0.01, 0.3, 0.6, 0.97]),), {"eps": 0.05}
    yield from int_and_bool(rng)


@xlogy.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 4)), rng.uniform(0.5, 2, (3, 4))), {}
    yield (rng.uniform(-2, 2, (2, 3, 4)), rng.uniform(0.5, 2, (4,))), {}
    yield (rng.uniform(-2, 2, (4, 3)).T, 1.5), {}
    yield (2.0, rng.uniform(0.5, 2, (2, 3))), {}
    yield (rng.integers(-3, 4, (3,)), rng.integers(1, 4, (3,))), {}


def _logaddexp_samples(rng):
    yield (rng.uniform(-3, 3, (3, 4)), rng.uniform(-3, 3, (3, 4))), {}
    yield (rng.uniform(-3, 3, (2, 3, 4)), rng.uniform(-3, 3, (4,))), {}
    yield (rng.uniform(-3, 3, (4, 3)).T, np.array(0.5)), {}
    yield (np.array([800.0, -800.0]), np.array([799.0, -801.0])), {}
    yield (rng.uniform(-3, 3, (3,)).astype(np.float32), rng.uniform(-3, 3, (3,))), {}


logaddexp.sample_inputs(_logaddexp_samples)
logaddexp2.sample_inputs(_logaddexp_samples)

float_samples(tan, low=-1.2, high=1.2)
float_samples(asin, acos, erfinv, low=-0.9, high=0.9)
float_samples(log, log2, log10, sqrt, rsqrt, low=0.5, high=3.0)
float_samples(log1p, low=-0.5, high=2.0)


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("logit", "xlogy", "logaddexp2"), no_complex_kernel("{name}_cpu"))
refuse_complex(("erf", "erfc", "erfinv"), no_complex_kernel("{name}_vml_cpu"))
refuse_complex(("deg2rad", "rad2deg"), "{name} is not supported for complex tensors.", RuntimeError)

# PyTorch's sparse kernels for these map the values (each maps zero to zero).
runs_on_sparse_values(("asin", "asinh", "atan", "atanh", "deg2rad", "erf", "erfinv", "expm1", "log1p",
                       "rad2deg", "sin", "sinh", "sqrt", "tan", "tanh"))


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def _onnx_unary(op_type):
    def lower(g, self):
        from .elementwise import onnx_promote  # defined beside the elementwise ops, imported after them
        (self,) = onnx_promote(g, self, floating=True)
        return g.op(op_type, self)
    return lower


for _op_def, _onnx_op in ((exp, "Exp"), (log, "Log"), (sqrt, "Sqrt"), (tanh, "Tanh")):
    _op_def.symbolic(_onnx_unary(_onnx_op))


@rsqrt.symbolic
def _(g, self):
    return g.op("Reciprocal", _onnx_unary("Sqrt")(g, self))

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("exp2", "logit", "sinc", "xlogy.Tensor"))
