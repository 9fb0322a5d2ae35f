"""The gamma family and its kin: lgamma, digamma, polygamma, mvlgamma, the incomplete gamma functions, i0, i1.

numpy has none of these, so each runs its own ``formula`` as a numba map kernel: the helpers of
``toolkit.backends.cpu.scalar`` (PyTorch's algorithms, in float64), so eager and fused results agree to the
bit. Integers and bool compute in the default float dtype, as in PyTorch; the incomplete gamma functions take
floating-point inputs only. Derivatives: ``lgamma' = digamma``, ``digamma' = polygamma(1)``,
``polygamma(n)' = polygamma(n + 1)``, ``i0' = i1``.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core import names as _names
from . import api
from .complex_refusal import no_complex_kernel, refuse_complex
from .elementwise import (
    float_only,
    float_samples,
    float_unary,
    formula_kernel,
    not_implemented,
    unary_samples,
)
from .registry import ELEMENTWISE, INPLACE, PROMOTE_INT_TO_FLOAT, op, refuses_names

lgamma = float_unary("lgamma", lambda a: formula_kernel("lgamma")(a), "lgamma(self)",
                     "``log|gamma(self)|``; ``inf`` at 0 and the negative integers.")
digamma = float_unary("digamma", lambda a: formula_kernel("digamma")(a), "digamma(self)",
                      "The logarithmic derivative of gamma; ``-inf`` at 0, ``nan`` at the negative integers.")


@lgamma.grad
def _(grad, self):
    return grad * self.digamma()


@digamma.grad
def _(grad, self):
    return grad * api.polygamma(1, self)


def _check_n(n: int) -> None:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


@op("polygamma(int n, Tensor self) -> Tensor", kind=ELEMENTWISE, formula="polygamma(n, self)",
    promotion=PROMOTE_INT_TO_FLOAT, method=False)
def polygamma(n, self):
    """The ``n``-th derivative of digamma (``n = 0`` is digamma itself)."""
    _check_n(n)
    return formula_kernel("polygamma", constants={"n": int(n)})(self)  # one kernel per order


@polygamma.grad
def _(grad, n, self):
    return grad * api.polygamma(n + 1, self)


@op("polygamma_(Tensor(a!) self, int n) -> Tensor(a!)", kind=INPLACE, function=False, composite=True,
    name_rule=_names.KEEP)
def polygamma_(self, n):
    """In-place version of :func:`polygamma` (``x.polygamma_(n)``: the tensor comes first here)."""
    return self.copy_(api.polygamma(n, self)) if self.dtype.is_floating_point else _refuse_inplace(self)


def _refuse_inplace(self):
    raise RuntimeError(f"polygamma_: result type Float can't be cast to the desired output type "
                       f"{_dt.title(self.dtype)}")


@op("mvlgamma(Tensor self, int p) -> Tensor", kind=ELEMENTWISE, formula="mvlgamma(self, p)",
    promotion=PROMOTE_INT_TO_FLOAT, inplace=True)
def mvlgamma(self, p):
    """The log of the multivariate gamma function of dimension ``p``; every element must exceed ``(p - 1) / 2``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if np.any(self <= (p - 1) / 2):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    return formula_kernel("mvlgamma", params=("p",))(self, p)


@mvlgamma.grad
def _(grad, self, p):
    total = self.digamma()
    for i in range(1, p):
        total = total + (self - 0.5 * i).digamma()
    return grad * total


i0 = float_unary("i0", lambda a: formula_kernel("i0")(a), "bessel_i0(self)",
                 "The modified Bessel function of the first kind of order 0.")


@op("special_i1(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="bessel_i1(self)", promotion=PROMOTE_INT_TO_FLOAT,
    method=False, function="i1", namespace="special")
def special_i1(self):
    """The modified Bessel function of the first kind of order 1 (``torch.special.i1``): the derivative of i0."""
    return formula_kernel("special_i1")(self)


@i0.grad
def _(grad, self):
    return grad * api.special_i1(self)


@special_i1.grad
def _(grad, self, result):
    safe = api.where(self == 0, 1.0, self)
    return grad * api.where(self == 0, 0.5, api.i0(self) - result / safe)


def _incomplete_gamma(name: str, doc: str):
    def kernel(self, other):
        dt = np.result_type(self, other)
        if dt.kind != "f":
            raise not_implemented(name, f"{name}_cpu", dt)
        return formula_kernel(name)(self, other)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = doc
    d = op(f"{name}(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula=f"{name}(self, other)",
           inplace=True, nondiff_args=("self",))(kernel)
    float_only(d, f"{name}_cpu")
    return d


igamma = _incomplete_gamma("igamma", "The regularized lower incomplete gamma function ``P(self, other)``; "
                                     "differentiable in ``other`` only, as in PyTorch.")
igammac = _incomplete_gamma("igammac", "The regularized upper incomplete gamma function ``Q(self, other) = "
                                       "1 - P(self, other)``; differentiable in ``other`` only, as in PyTorch.")


def _igamma_density(self, other):
    return ((self - 1) * other.log() - other - self.lgamma()).exp()


@igamma.grad
def _(grad, self, other):
    return grad * _igamma_density(self, other)


@igammac.grad
def _(grad, self, other):
    return -grad * _igamma_density(self, other)


# ----------------------------------------------------------------------------- samples
float_samples(lgamma, digamma, low=0.2, high=4.0)
float_samples(i0, special_i1, low=-3.0, high=3.0)


@polygamma.sample_inputs
def _(rng):
    for n in (0, 1, 2, 3):
        yield (n, rng.uniform(0.3, 3.0, (3, 4))), {}
    yield (1, rng.uniform(0.3, 3.0, (4, 3)).T), {}
    yield (2, np.array(1.7)), {}
    yield (1, rng.integers(1, 5, (2, 3))), {}


@mvlgamma.sample_inputs
def _(rng):
    yield (rng.uniform(20.0, 40.0, (3, 4)),), {"p": 3}  # first: mvlgamma_ applied again and again stays valid
    for (x,), _kw in unary_samples(rng, 1.6, 4.0):
        yield (x,), {"p": 1}
        yield (x,), {"p": 3}
    yield (rng.integers(2, 6, (2, 3)),), {"p": 2}


def _incomplete_gamma_samples(rng):
    yield (rng.uniform(0.5, 4.0, (3, 4)), rng.uniform(0.2, 5.0, (3, 4))), {}
    yield (rng.uniform(0.5, 4.0, (2, 3, 4)), rng.uniform(0.2, 5.0, (4,))), {}
    yield (rng.uniform(0.5, 4.0, (4, 3)).T, np.array(1.5)), {}
    yield (np.array(2.5), rng.uniform(0.2, 5.0, (2, 2))), {}
    yield (rng.uniform(20.0, 30.0, (3,)), rng.uniform(18.0, 32.0, (3,))), {}


igamma.sample_inputs(_incomplete_gamma_samples)
igammac.sample_inputs(_incomplete_gamma_samples)


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("lgamma",), no_complex_kernel("lgamma_vml_cpu"))
refuse_complex(("digamma",), no_complex_kernel("digamma"))

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("mvlgamma", "special_i1"))
