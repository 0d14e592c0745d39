"""``chainrule.distributions``: probability distributions with differentiable
log-densities and reparametrized samples, and KL divergences, as the reference's
``torch.distributions`` (Note [distribution validation] in distribution.py).

>>> import chainrule as cr
>>> from chainrule.distributions import Normal
>>> d = Normal(cr.tensor(0.0), cr.tensor(1.0))
>>> round(d.log_prob(cr.tensor(0.0)).item(), 4)
-0.9189
"""
from . import constraints  # noqa: F401
from .continuous import Exponential, Laplace, MultivariateNormal, Normal, Uniform  # noqa: F401
from .discrete import Bernoulli, Categorical, Independent, OneHotCategorical, Poisson  # noqa: F401
from .distribution import Distribution, ExponentialFamily  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401

__all__ = ["Distribution", "ExponentialFamily", "Normal", "Uniform", "Exponential", "Laplace",
           "MultivariateNormal", "Bernoulli", "Categorical", "OneHotCategorical", "Poisson",
           "Independent", "kl_divergence", "register_kl", "constraints"]
