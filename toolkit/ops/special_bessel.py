"""The Bessel and Airy functions of ``torch.special``: ``bessel_j0``, ``bessel_j1``, ``bessel_y0``,
``bessel_y1``, ``modified_bessel_k0``, ``modified_bessel_k1``, their exponentially scaled
``scaled_modified_bessel_k0``/``k1``, and ``airy_ai``.

Each runs its formula (the helpers of :mod:`.special_bessel_scalar`, in float64) as a numba map kernel.
PyTorch does not differentiate any of them, so neither do we. The values are accurate to about 1e-12
relative; PyTorch's own float64 J and Y are off by up to about 1e-6 for ``2 < |x| < 15`` and its Ai by about
3e-6 for ``-5 < x < -2``.
"""

from __future__ import annotations

import math

import numpy as np

from . import special_bessel_scalar  # noqa: F401  (adds the formulas' helpers)
from .elementwise import unary_samples
from .registry import refuses_names
from .special_functions import special_op

# torch.special name -> (argument name in PyTorch's schema, formula, what it is, sample range)
_FUNCTIONS = {
    "bessel_j0": ("self", "bessel_j0(self)", "The Bessel function of the first kind of order 0.", (-2.0, 2.0)),
    "bessel_j1": ("self", "bessel_j1(self)", "The Bessel function of the first kind of order 1.", (-2.0, 2.0)),
    "bessel_y0": ("self", "bessel_y0(self)", "The Bessel function of the second kind of order 0 "
                                             "(``-inf`` at 0, nan for negative ``x``).", (0.1, 2.0)),
    "bessel_y1": ("self", "bessel_y1(self)", "The Bessel function of the second kind of order 1 "
                                             "(``-inf`` at 0, nan for negative ``x``).", (0.1, 2.0)),
    "modified_bessel_k0": ("self", "bessel_k(self, 0, False)",
                           "The modified Bessel function of the second kind of order 0.", (0.1, 6.0)),
    "modified_bessel_k1": ("self", "bessel_k(self, 1, False)",
                           "The modified Bessel function of the second kind of order 1.", (0.1, 6.0)),
    "scaled_modified_bessel_k0": ("x", "bessel_k(x, 0, True)",
                                  "``modified_bessel_k0(x) * exp(x)``, finite where ``exp(-x)`` underflows.",
                                  (0.1, 6.0)),
    "scaled_modified_bessel_k1": ("x", "bessel_k(x, 1, True)",
                                  "``modified_bessel_k1(x) * exp(x)``, finite where ``exp(-x)`` underflows.",
                                  (0.1, 6.0)),
    "airy_ai": ("x", "airy_ai(x)", "The Airy function Ai, the solution of ``y'' = x y`` that decays as "
                                   "``x -> inf``.", (-2.0, 4.0)),
}

# Values where PyTorch's float64 results are accurate too: the far range and the edges.
_EDGES = (0.0, -0.0, 1e-30, 30.0, -40.0, 55.5, math.inf, -math.inf, math.nan)


def _bessel(public: str, arg: str, formula: str, doc: str, bounds: tuple):
    d = special_op(f"special_{public}(Tensor {arg}) -> Tensor", formula,
                   f"{doc} Not differentiable, as in PyTorch.", differentiable=False)

    @d.sample_inputs
    def _(rng):
        yield from unary_samples(rng, *bounds)
        yield (rng.integers(1, 3, (2, 3)),), {}
        yield (np.array(_EDGES),), {}
        yield (np.array(_EDGES, dtype=np.float32),), {}

    return d


FUNCTIONS = {public: _bessel(public, *spec) for public, spec in _FUNCTIONS.items()}

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(f"special_{public}" for public in _FUNCTIONS)
