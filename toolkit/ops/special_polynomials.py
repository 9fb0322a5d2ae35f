"""The orthogonal polynomials of ``torch.special``: Chebyshev (four kinds, and shifted to [0, 1]), Hermite
(physicists' and probabilists'), Laguerre and Legendre, each ``f(x, n)``.

``n`` is read per element and truncated toward zero; a negative ``n`` gives the zero polynomial. Either
argument may be a Python number (PyTorch's ``x_scalar`` and ``n_scalar`` overloads). The values come from the
three-term recurrences in :mod:`.special_scalar`; PyTorch does not differentiate these functions, so neither
do we.
"""

from __future__ import annotations

import numpy as np

from .._core.fp_errors import ignore_fp_errors
from ..backends.cpu.map_kernels import map_kernel
from . import special_scalar  # noqa: F401  (adds the formulas' helpers)
from .registry import ELEMENTWISE, PROMOTE_INT_TO_FLOAT, op, refuses_names

# torch.special name -> (its value as a call of a helper of special_scalar, ``{n}`` for the degree; what it is)
_POLYNOMIALS = {
    "chebyshev_polynomial_t": ("chebyshev(x, {n}, 1)", "The Chebyshev polynomial of the first kind ``T_n(x)``."),
    "chebyshev_polynomial_u": ("chebyshev(x, {n}, 2)", "The Chebyshev polynomial of the second kind ``U_n(x)``."),
    "chebyshev_polynomial_v": ("chebyshev(x, {n}, 3)", "The Chebyshev polynomial of the third kind ``V_n(x)``."),
    "chebyshev_polynomial_w": ("chebyshev(x, {n}, 4)", "The Chebyshev polynomial of the fourth kind ``W_n(x)``."),
    "shifted_chebyshev_polynomial_t": ("chebyshev(x + x - 1.0, {n}, 1)",
                                       "The shifted Chebyshev polynomial of the first kind ``T_n(2x - 1)``."),
    "shifted_chebyshev_polynomial_u": ("chebyshev(x + x - 1.0, {n}, 2)",
                                       "The shifted Chebyshev polynomial of the second kind ``U_n(2x - 1)``."),
    "shifted_chebyshev_polynomial_v": ("chebyshev(x + x - 1.0, {n}, 3)",
                                       "The shifted Chebyshev polynomial of the third kind ``V_n(2x - 1)``."),
    "shifted_chebyshev_polynomial_w": ("chebyshev(x + x - 1.0, {n}, 4)",
                                       "The shifted Chebyshev polynomial of the fourth kind ``W_n(2x - 1)``."),
    "hermite_polynomial_h": ("hermite_h(x, {n})", "The physicists' Hermite polynomial ``H_n(x)``."),
    "hermite_polynomial_he": ("hermite_he(x, {n})", "The probabilists' Hermite polynomial ``He_n(x)``."),
    "laguerre_polynomial_l": ("laguerre_l(x, {n})", "The Laguerre polynomial ``L_n(x)``."),
    "legendre_polynomial_p": ("legendre_p(x, {n})", "The Legendre polynomial ``P_n(x)``."),
}


def _polynomial(public: str, call: str, doc: str):
    name = f"special_{public}"
    # ``n`` is a name the map kernel generator keeps for itself: the eager kernel calls the degree ``degree``.
    eager = map_kernel(call.format(n="degree"), ("x", "degree"))

    def kernel(x, n):
        with ignore_fp_errors():
            return eager(x, n)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = doc
    d = op(f"{name}(Tensor x, Tensor n) -> Tensor", kind=ELEMENTWISE, formula=call.format(n="n"),
           promotion=PROMOTE_INT_TO_FLOAT, method=False, function=public, namespace="special", scalar_self=True,
           differentiable=False)(kernel)
    d.sample_inputs(_samples)
    return d


def _samples(rng):
    yield (rng.uniform(-1.2, 1.2, (3, 4)), rng.integers(0, 7, (3, 4))), {}
    yield (rng.uniform(-1.2, 1.2, (2, 3, 4)), rng.integers(-1, 5, (4,))), {}
    yield (rng.uniform(-1.2, 1.2, (4, 3)).T, 3), {}
    yield (0.25, rng.integers(0, 6, (2, 3))), {}
    yield (np.array([1.0, -1.0, 0.0, 0.5, 2.0]), np.array([4.0, 5.0, 3.0, 2.5, 12.0])), {}
    yield (rng.integers(-2, 3, (3,)), rng.integers(0, 4, (3,))), {}


POLYNOMIALS = {public: _polynomial(public, *spec) for public, spec in _POLYNOMIALS.items()}

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(f"special_{public}" for public in _POLYNOMIALS)
