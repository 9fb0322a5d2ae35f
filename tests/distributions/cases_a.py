"""The table of distribution cases compared with PyTorch: each case builds the same distribution in
``toolkit.distributions`` and ``torch.distributions`` from the same numpy parameters.

A case is ``(id, build, params)`` where ``build(D, T, params)`` takes the distributions module, a function
turning a numpy array into that framework's tensor, and the case's numpy parameters; the tests pass a ``T``
that records the tensors it makes, so gradients can be compared parameter by parameter.
"""

from __future__ import annotations

import numpy as np

_rng = np.random.default_rng(1234)


def _pos(*shape: int, low: float = 0.5, high: float = 3.0) -> np.ndarray:
    return _rng.uniform(low, high, shape).astype(np.float32)


def _real(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def _prob(*shape: int) -> np.ndarray:
    return _rng.uniform(0.1, 0.9, shape).astype(np.float32)


def _simplex(*shape: int) -> np.ndarray:
    p = _pos(*shape)
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


def _spd(n: int) -> np.ndarray:
    a = _real(n, n)
    return (a @ a.T + n * np.eye(n)).astype(np.float32)


_LOC3, _SCALE3 = _real(3), _pos(3)
_LOW3 = _real(3)
_COV3 = _spd(3)
_TRIL3 = np.linalg.cholesky(_COV3).astype(np.float32)

# (id, build(D, T, p), p): p holds the numpy parameters, drawn once, so both frameworks see the same values
CASES = [
    ("Normal", lambda D, T, p: D.Normal(T(p["loc"]), T(p["scale"])), {"loc": _LOC3, "scale": _SCALE3}),
    ("Normal-numbers", lambda D, T, p: D.Normal(0.5, 2.0), {}),
    ("Uniform", lambda D, T, p: D.Uniform(T(p["low"]), T(p["low"] + 1.5)), {"low": _LOW3}),
    ("Exponential", lambda D, T, p: D.Exponential(T(p["rate"])), {"rate": _pos(3)}),
    ("Laplace", lambda D, T, p: D.Laplace(T(p["loc"]), T(p["scale"])), {"loc": _LOC3, "scale": _SCALE3}),
    ("Cauchy", lambda D, T, p: D.Cauchy(T(p["loc"]), T(p["scale"])), {"loc": _LOC3, "scale": _SCALE3}),
    ("Bernoulli-probs", lambda D, T, p: D.Bernoulli(probs=T(p["probs"])), {"probs": _prob(3)}),
    ("Bernoulli-logits", lambda D, T, p: D.Bernoulli(logits=T(p["logits"])), {"logits": _real(2, 3)}),
    ("Categorical-probs", lambda D, T, p: D.Categorical(probs=T(p["probs"])), {"probs": _simplex(2, 4)}),
    ("Categorical-logits", lambda D, T, p: D.Categorical(logits=T(p["logits"])), {"logits": _real(4)}),
    ("OneHotCategorical", lambda D, T, p: D.OneHotCategorical(probs=T(p["probs"])), {"probs": _simplex(2, 4)}),
    ("OneHotCategoricalStraightThrough",
     lambda D, T, p: D.OneHotCategoricalStraightThrough(logits=T(p["logits"])), {"logits": _real(2, 3)}),
    ("Geometric-probs", lambda D, T, p: D.Geometric(probs=T(p["probs"])), {"probs": _prob(3)}),
    ("Geometric-logits", lambda D, T, p: D.Geometric(logits=T(p["logits"])), {"logits": _real(3)}),
    ("Poisson", lambda D, T, p: D.Poisson(T(p["rate"])), {"rate": np.array([0.5, 3.0, 7.5], np.float32)}),
    ("Binomial-probs", lambda D, T, p: D.Binomial(10, probs=T(p["probs"])), {"probs": _prob(3)}),
    ("Binomial-logits", lambda D, T, p: D.Binomial(T(p["n"]), logits=T(p["logits"])),
     {"n": np.array([4.0, 6.0], np.float32), "logits": _real(2)}),
    ("Multinomial", lambda D, T, p: D.Multinomial(5, probs=T(p["probs"])), {"probs": _simplex(2, 3)}),
    ("NegativeBinomial", lambda D, T, p: D.NegativeBinomial(T(p["n"]), probs=T(p["probs"])),
     {"n": _pos(3), "probs": _prob(3)}),
    ("Gamma", lambda D, T, p: D.Gamma(T(p["c"]), T(p["rate"])),
     {"c": np.array([0.4, 1.5, 6.0], np.float32), "rate": _pos(3)}),
    ("Chi2", lambda D, T, p: D.Chi2(T(p["df"])), {"df": _pos(3, low=1.0, high=6.0)}),
    ("Beta", lambda D, T, p: D.Beta(T(p["c1"]), T(p["c0"])), {"c1": _pos(3), "c0": _pos(3)}),
    ("Dirichlet", lambda D, T, p: D.Dirichlet(T(p["c"])), {"c": _pos(2, 3)}),
    ("StudentT", lambda D, T, p: D.StudentT(T(p["df"]), T(p["loc"]), T(p["scale"])),
     {"df": _pos(3, low=2.5, high=6.0), "loc": _LOC3, "scale": _SCALE3}),
    ("FisherSnedecor", lambda D, T, p: D.FisherSnedecor(T(p["df1"]), T(p["df2"])),
     {"df1": _pos(3, low=1.0, high=6.0), "df2": _pos(3, low=4.5, high=9.0)}),
    ("ContinuousBernoulli", lambda D, T, p: D.ContinuousBernoulli(probs=T(p["probs"])),
     {"probs": np.array([0.2, 0.5, 0.8], np.float32)}),
    ("ContinuousBernoulli-logits", lambda D, T, p: D.ContinuousBernoulli(logits=T(p["logits"])),
     {"logits": _real(3)}),
    ("VonMises", lambda D, T, p: D.VonMises(T(p["loc"]), T(p["c"])), {"loc": _LOC3, "c": _pos(3)}),
    ("MultivariateNormal-cov", lambda D, T, p: D.MultivariateNormal(T(p["loc"]), covariance_matrix=T(p["m"])),
     {"loc": _real(2, 3), "m": _COV3}),
    ("MultivariateNormal-tril", lambda D, T, p: D.MultivariateNormal(T(p["loc"]), scale_tril=T(p["m"])),
     {"loc": _real(3), "m": _TRIL3}),
    ("MultivariateNormal-precision",
     lambda D, T, p: D.MultivariateNormal(T(p["loc"]), precision_matrix=T(p["m"])), {"loc": _real(3), "m": _COV3}),
    ("LowRankMultivariateNormal", lambda D, T, p: D.LowRankMultivariateNormal(T(p["loc"]), T(p["w"]), T(p["d"])),
     {"loc": _real(2, 3), "w": _real(3, 2), "d": _pos(3)}),
    ("LKJCholesky", lambda D, T, p: D.LKJCholesky(3, T(p["c"])), {"c": np.array([0.5, 2.0], np.float32)}),
    ("Wishart-cov", lambda D, T, p: D.Wishart(T(p["df"]), covariance_matrix=T(p["m"])),
     {"df": np.array([4.0, 6.5], np.float32), "m": _COV3}),
    ("Wishart-precision", lambda D, T, p: D.Wishart(T(p["df"]), precision_matrix=T(p["m"])),
     {"df": np.array(5.0, np.float32), "m": _COV3}),
    ("Independent", lambda D, T, p: D.Independent(D.Normal(T(p["loc"]), T(p["scale"])), 1),
     {"loc": _real(2, 3), "scale": _pos(2, 3)}),
    ("MixtureSameFamily", lambda D, T, p: D.MixtureSameFamily(D.Categorical(probs=T(p["mix"])),
                                                              D.Normal(T(p["loc"]), T(p["scale"]))),
     {"mix": _simplex(3), "loc": _LOC3, "scale": _SCALE3}),
]

# the gamma family draws through the standard gamma sampler, whose reparametrized gradient PyTorch computes
# with its own approximation: compared with a looser tolerance
GAMMA_FAMILY = {"Gamma", "Chi2", "Beta", "Dirichlet", "StudentT", "FisherSnedecor", "Wishart-cov", "Wishart-precision"}
