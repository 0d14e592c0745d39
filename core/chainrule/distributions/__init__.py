"""``chainrule.distributions``: probability distributions with differentiable
log-densities and reparametrized samples, transforms and transformed distributions,
constraint registries and KL divergences, as the reference's ``torch.distributions``
(Note [distribution validation] in distribution.py). Each distribution also lives in
the submodule of the reference's name (``chainrule.distributions.gamma``, ...).

>>> import chainrule as cr
>>> from chainrule.distributions import Normal
>>> d = Normal(cr.tensor(0.0), cr.tensor(1.0))
>>> round(d.log_prob(cr.tensor(0.0)).item(), 4)
-0.9189
"""
from . import constraints, transforms  # noqa: F401
from .continuous import Exponential, Laplace, MultivariateNormal, Normal, Uniform  # noqa: F401
from .discrete import Bernoulli, Categorical, Independent, OneHotCategorical, Poisson  # noqa: F401
from .distribution import Distribution, ExponentialFamily  # noqa: F401
from .beta import Beta  # noqa: F401
from .binomial import Binomial  # noqa: F401
from .cauchy import Cauchy  # noqa: F401
from .chi2 import Chi2  # noqa: F401
from .constraint_registry import biject_to, transform_to  # noqa: F401
from .continuous_bernoulli import ContinuousBernoulli  # noqa: F401
from .dirichlet import Dirichlet  # noqa: F401
from .fishersnedecor import FisherSnedecor  # noqa: F401
from .gamma import Gamma  # noqa: F401
from .generalized_pareto import GeneralizedPareto  # noqa: F401
from .geometric import Geometric  # noqa: F401
from .gumbel import Gumbel  # noqa: F401
from .half_cauchy import HalfCauchy  # noqa: F401
from .half_normal import HalfNormal  # noqa: F401
from .inverse_gamma import InverseGamma  # noqa: F401
from .kumaraswamy import Kumaraswamy  # noqa: F401
from .lkj_cholesky import LKJCholesky  # noqa: F401
from .log_normal import LogNormal  # noqa: F401
from .logistic_normal import LogisticNormal  # noqa: F401
from .lowrank_multivariate_normal import LowRankMultivariateNormal  # noqa: F401
from .mixture_same_family import MixtureSameFamily  # noqa: F401
from .multinomial import Multinomial  # noqa: F401
from .negative_binomial import NegativeBinomial  # noqa: F401
from .one_hot_categorical import OneHotCategoricalStraightThrough  # noqa: F401
from .pareto import Pareto  # noqa: F401
from .relaxed_bernoulli import RelaxedBernoulli  # noqa: F401
from .relaxed_categorical import RelaxedOneHotCategorical  # noqa: F401
from .studentT import StudentT  # noqa: F401
from .transformed_distribution import TransformedDistribution  # noqa: F401
from .transforms import *  # noqa: F401,F403
from .von_mises import VonMises  # noqa: F401
from .weibull import Weibull  # noqa: F401
from .wishart import Wishart  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from . import (bernoulli, categorical, exp_family, exponential, independent,  # noqa: F401
               laplace, multivariate_normal, normal, poisson, uniform, utils)

__all__ = ["Distribution", "ExponentialFamily", "Normal", "Uniform", "Exponential", "Laplace",
           "MultivariateNormal", "Bernoulli", "Categorical", "OneHotCategorical", "Poisson",
           "Independent", "kl_divergence", "register_kl", "constraints",
           "Beta", "Binomial", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel",
           "HalfCauchy", "HalfNormal", "InverseGamma", "Kumaraswamy", "LogNormal",
           "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
           "NegativeBinomial", "OneHotCategoricalStraightThrough", "Pareto",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT",
           "TransformedDistribution", "VonMises", "Weibull", "LKJCholesky", "Wishart",
           "biject_to", "transform_to",
           "transforms", *transforms.__all__]
