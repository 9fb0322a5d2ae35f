"""``toolkit.distributions``: parametrizable probability distributions and sampling, as
``torch.distributions``.

Each distribution takes its parameters as tensors or numbers, checks them against ``arg_constraints``
(validation is on by default), and offers ``sample``/``rsample``, ``log_prob``, ``entropy``, moments and
``expand``; ``kl_divergence`` dispatches on pairs of types; transforms and ``biject_to``/``transform_to`` map
unconstrained values into supports.

>>> from toolkit.distributions import Normal
>>> Normal(0.0, 1.0).log_prob(toolkit.tensor(0.0))
tensor(-0.9189)
"""

from toolkit.distributions import constraints, kl_pairs, kl_transformed, transforms  # noqa: F401
from toolkit.distributions.bernoulli import Bernoulli
from toolkit.distributions.beta import Beta
from toolkit.distributions.binomial import Binomial
from toolkit.distributions.categorical import Categorical
from toolkit.distributions.cauchy import Cauchy
from toolkit.distributions.chi2 import Chi2
from toolkit.distributions.constraint_registry import biject_to, transform_to
from toolkit.distributions.continuous_bernoulli import ContinuousBernoulli
from toolkit.distributions.dirichlet import Dirichlet
from toolkit.distributions.distribution import Distribution
from toolkit.distributions.exp_family import ExponentialFamily
from toolkit.distributions.exponential import Exponential
from toolkit.distributions.fishersnedecor import FisherSnedecor
from toolkit.distributions.gamma import Gamma
from toolkit.distributions.generalized_pareto import GeneralizedPareto
from toolkit.distributions.geometric import Geometric
from toolkit.distributions.gumbel import Gumbel
from toolkit.distributions.half_cauchy import HalfCauchy
from toolkit.distributions.half_normal import HalfNormal
from toolkit.distributions.independent import Independent
from toolkit.distributions.inverse_gamma import InverseGamma
from toolkit.distributions.kl import kl_divergence, register_kl
from toolkit.distributions.kumaraswamy import Kumaraswamy
from toolkit.distributions.laplace import Laplace
from toolkit.distributions.lkj_cholesky import LKJCholesky
from toolkit.distributions.log_normal import LogNormal
from toolkit.distributions.logistic_normal import LogisticNormal
from toolkit.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from toolkit.distributions.mixture_same_family import MixtureSameFamily
from toolkit.distributions.multinomial import Multinomial
from toolkit.distributions.multivariate_normal import MultivariateNormal
from toolkit.distributions.negative_binomial import NegativeBinomial
from toolkit.distributions.normal import Normal
from toolkit.distributions.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from toolkit.distributions.pareto import Pareto
from toolkit.distributions.poisson import Poisson
from toolkit.distributions.relaxed_bernoulli import RelaxedBernoulli
from toolkit.distributions.relaxed_categorical import RelaxedOneHotCategorical
from toolkit.distributions.studentT import StudentT
from toolkit.distributions.transformed_distribution import TransformedDistribution
from toolkit.distributions.transforms import *  # noqa: F403
from toolkit.distributions.uniform import Uniform
from toolkit.distributions.von_mises import VonMises
from toolkit.distributions.weibull import Weibull
from toolkit.distributions.wishart import Wishart

__all__ = [
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ContinuousBernoulli",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "StudentT",
    "Poisson",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "TransformedDistribution",
    "biject_to",
    "kl_divergence",
    "register_kl",
    "transform_to",
]
__all__.extend(transforms.__all__)
