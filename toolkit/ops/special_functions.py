"""``torch.special``'s own pointwise functions: the normal distribution (ndtr, log_ndtr, ndtri), erfcx, entr,
xlog1py, zeta, the exponentially scaled Bessel functions i0e and i1e, modified_bessel_i0/i1 and
spherical_bessel_j0.

Each runs its ``formula`` as a numba map kernel, so eager and fused results agree: the helpers of
:mod:`.special_scalar` (computed in float64). Integers and bool compute in the default float dtype, as in
PyTorch. Derivatives are PyTorch's, written with registered ops; the functions PyTorch does not differentiate
(``modified_bessel_*``, ``spherical_bessel_j0``) are ``differentiable=False``, and ``zeta`` is differentiable
in ``other`` only.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.fp_errors import ignore_fp_errors
from . import api, special_scalar  # noqa: F401  (special_scalar adds the formulas' helpers)
from .elementwise import formula_kernel, unary_samples
from .grad_fn_rules import by_scalar_operand
from .registry import ELEMENTWISE, PROMOTE_INT_TO_FLOAT, op, refuses_names

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def special_op(schema: str, formula: str, doc: str, **options):
    """Register a ``toolkit.special`` function computed by its own formula (integers promote to float)."""
    name = schema.split("(", 1)[0]

    def kernel(*args):
        with ignore_fp_errors():
            return formula_kernel(name)(*args)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = doc
    return op(schema, kind=ELEMENTWISE, formula=formula, promotion=PROMOTE_INT_TO_FLOAT, method=False,
              function=name.removeprefix("special_"), namespace="special", **options)(kernel)


entr = special_op(
    "special_entr(Tensor self) -> Tensor",
    "self if self != self else (-math.inf if self < 0 else (0.0 if self == 0 else -self * math.log(self)))",
    "The elementwise entropy ``-x log x``: 0 at 0, ``-inf`` for negative ``x``.")
erfcx = special_op("special_erfcx(Tensor self) -> Tensor", "erfcx(self)",
                   "The scaled complementary error function ``exp(x**2) erfc(x)``, finite where erfc underflows.")
ndtr = special_op("special_ndtr(Tensor self) -> Tensor", "ndtr(self)",
                  "The standard normal cumulative distribution function.")
ndtr.grad_fn = "MulBackward1"  # PyTorch computes it as ``0.5 * erfc(-x / sqrt(2))``
log_ndtr = special_op("special_log_ndtr(Tensor self) -> Tensor", "log_ndtr(self)",
                      "The log of the standard normal CDF, accurate far into the left tail.")
ndtri = special_op("special_ndtri(Tensor self) -> Tensor", "ndtri(self)",
                   "The standard normal quantile, the inverse of ndtr: ``±inf`` at 0 and 1, nan outside [0, 1].")
i0e = special_op("special_i0e(Tensor self) -> Tensor", "bessel_i0e(self)",
                 "The exponentially scaled modified Bessel function of order 0, ``i0(x) exp(-|x|)``.")
i1e = special_op("special_i1e(Tensor self) -> Tensor", "bessel_i1e(self)",
                 "The exponentially scaled modified Bessel function of order 1, ``i1(x) exp(-|x|)``.")
modified_bessel_i0 = special_op(
    "special_modified_bessel_i0(Tensor self) -> Tensor", "bessel_i0(self)",
    "The modified Bessel function of the first kind of order 0 (not differentiable, as in PyTorch).",
    differentiable=False)
modified_bessel_i1 = special_op(
    "special_modified_bessel_i1(Tensor self) -> Tensor", "bessel_i1(self)",
    "The modified Bessel function of the first kind of order 1 (not differentiable, as in PyTorch).",
    differentiable=False)
spherical_bessel_j0 = special_op(
    "special_spherical_bessel_j0(Tensor x) -> Tensor", "spherical_j0(x)",
    "The spherical Bessel function of the first kind of order 0, ``sin(x) / x`` (not differentiable).",
    differentiable=False)
xlog1py = special_op(
    "special_xlog1py(Tensor self, Tensor other) -> Tensor",
    "math.nan if other != other else (0.0 if self == 0 else self * math.log1p(other))",
    "``self * log1p(other)``, 0 where ``self`` is 0 (unless ``other`` is nan).", scalar_self=True)
zeta = special_op(
    "special_zeta(Tensor self, Tensor other) -> Tensor", "zeta(self, other)",
    "The Hurwitz zeta function ``sum_k (k + other) ** -self``; differentiable in ``other`` only.",
    scalar_self=True, nondiff_args=("self",))
# PyTorch's Tensor, Scalar-self and Scalar-other formulas of each
xlog1py.grad_fn = by_scalar_operand(
    "SpecialXlog1PyBackward0", "SpecialXlog1PyBackward2", "SpecialXlog1PyBackward1")
zeta.grad_fn = by_scalar_operand("SpecialZetaBackward0", "SpecialZetaBackward2", "SpecialZetaBackward1")


@entr.grad
def _(grad, self):
    return grad * -(1 + self.log())


@erfcx.grad
def _(grad, self):
    return grad * (2 * self * api.special_erfcx(self) - 2 / math.sqrt(math.pi))


@ndtr.grad
def _(grad, self):
    return grad * ((self * self) * -0.5).exp() * _INV_SQRT_2PI


@log_ndtr.grad
def _(grad, self):
    return grad * ((self * self) * -0.5 - api.special_log_ndtr(self)).exp() * _INV_SQRT_2PI


@ndtri.grad
def _(grad, self):
    q = api.special_ndtri(self)
    return grad * ((q * q) * 0.5).exp() * math.sqrt(2.0 * math.pi)


@i0e.grad
def _(grad, self):
    return grad * (api.special_i1e(self) - self.sign() * api.special_i0e(self))


@i1e.grad
def _(grad, self):
    safe = api.where(self == 0, 1.0, self)
    i1e_x = api.special_i1e(self)
    return grad * api.where(self == 0, 0.5, api.special_i0e(self) - i1e_x * (self.sign() + 1 / safe))


@xlog1py.grad
def _(grad, self, other, needs_input_grad):
    g_self = g_other = None
    if needs_input_grad[0]:
        g_self = grad * api.where((self == 0) & (other <= -1), 0.0, api.special_xlog1py(1.0, other))
    if needs_input_grad[1]:
        g_other = grad * self / (other + 1)
    return g_self, g_other


@zeta.grad
def _(grad, self, other):
    return grad * -self * api.special_zeta(self + 1.0, other)


# ----------------------------------------------------------------------------- samples
def _unary(low: float, high: float, edges: tuple = ()):
    def gen(rng):
        yield from unary_samples(rng, low, high)
        yield (rng.integers(1, 4, (2, 3)),), {}
        if edges:
            yield (np.array(edges),), {}
    return gen


entr.sample_inputs(_unary(0.2, 3.0))
erfcx.sample_inputs(_unary(-2.0, 4.0))
ndtr.sample_inputs(_unary(-3.0, 3.0))
log_ndtr.sample_inputs(_unary(-4.0, 3.0))
i0e.sample_inputs(_unary(0.2, 5.0))
i1e.sample_inputs(_unary(0.2, 5.0))
modified_bessel_i0.sample_inputs(_unary(-5.0, 5.0, (0.0, -0.0, 30.0, -40.0)))
modified_bessel_i1.sample_inputs(_unary(-5.0, 5.0, (0.0, -0.0, 30.0, -40.0)))
spherical_bessel_j0.sample_inputs(_unary(-8.0, 8.0, (0.0, 0.1, -0.3, math.inf)))


@ndtri.sample_inputs
def _(rng):
    yield from unary_samples(rng, 0.05, 0.95)
    yield (np.array([1e-4, 0.5, 0.999]),), {}


@xlog1py.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 4)), rng.uniform(-0.5, 2, (3, 4))), {}
    yield (rng.uniform(-2, 2, (2, 3, 4)), rng.uniform(-0.5, 2, (4,))), {}
    yield (rng.uniform(-2, 2, (4, 3)).T, 1.5), {}
    yield (2.0, rng.uniform(-0.5, 2, (2, 3))), {}
    yield (rng.integers(-3, 4, (3,)), rng.integers(0, 4, (3,))), {}


@zeta.sample_inputs
def _(rng):
    yield (rng.uniform(1.5, 4.0, (3, 4)), rng.uniform(0.5, 3.0, (3, 4))), {}
    yield (rng.uniform(1.5, 4.0, (2, 3, 4)), rng.uniform(0.5, 3.0, (4,))), {}
    yield (rng.uniform(1.5, 4.0, (4, 3)).T, 1.5), {}
    yield (2.0, rng.uniform(0.5, 3.0, (2, 3))), {}
    yield (rng.integers(2, 5, (3,)), rng.integers(1, 4, (3,))), {}

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("special_entr", "special_erfcx", "special_i0e", "special_i1e", "special_log_ndtr",
               "special_modified_bessel_i0", "special_modified_bessel_i1", "special_ndtri",
               "special_spherical_bessel_j0", "special_xlog1py", "special_zeta"))
