"""Exponentials, logarithms, roots, trigonometric and hyperbolic functions, and the error function.

All compute in floating point: integer and bool inputs promote to the default
float dtype, as in PyTorch. numpy kernels where numpy has the function;
``erf`` and ``erfinv``, which numpy lacks, run their own ``formula`` as a numba
map kernel (``toolkit.backends.cpu``), compiled on first use and cached on disk.
"""

from __future__ import annotations

import math

import numpy as np

from .elementwise import float_samples, float_unary, formula_kernel
from .registry import ELEMENTWISE, PROMOTE_INT_TO_FLOAT, op

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


# ----------------------------------------------------------------------------- error function
erf = float_unary("erf", lambda a: formula_kernel("erf")(a), "math.erf(self)",
                   "Gauss error function (a numba kernel: numpy has none).")
erfinv = float_unary("erfinv", lambda a: formula_kernel("erfinv")(a), "erfinv(self)",
                      "Inverse error function on [-1, 1] (``±inf`` at ±1, ``nan`` outside).")


@erf.grad
def _(grad, self):
    return grad * _TWO_OVER_SQRT_PI * (-self * self).exp()


@erfinv.grad
def _(grad, result):
    return grad * (0.5 * math.sqrt(math.pi)) * (result * result).exp()


# ----------------------------------------------------------------------------- samples
float_samples(exp, exp2, expm1, sin, cos, atan, sinh, cosh, tanh, erf)
float_samples(tan, low=-1.2, high=1.2)
float_samples(asin, acos, erfinv, low=-0.9, high=0.9)
float_samples(log, log2, log10, sqrt, rsqrt, low=0.5, high=3.0)
float_samples(log1p, low=-0.5, high=2.0)
