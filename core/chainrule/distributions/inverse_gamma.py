"""The inverse-gamma distribution: 1 / Gamma(concentration, rate)."""
import math

from .. import _factories
from .._ops import FUNCTIONS
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

F = FUNCTIONS
__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """Inverse-gamma distribution: ``1 / X`` for ``X ~ Gamma(concentration, rate)``.

    >>> import chainrule as cr
    >>> d = cr.distributions.InverseGamma(cr.tensor(3.0), cr.tensor(2.0))
    >>> d.mean, round(d.log_prob(cr.tensor(1.0)).item(), 4)
    (tensor(1.), -0.6137)
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = _factories.tensor(-1.0, dtype=base.rate.dtype, device=base.rate.device)
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    concentration = property(lambda self: self.base_dist.concentration)
    rate = property(lambda self: self.base_dist.rate)

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return F["where"](self.concentration > 1, result, math.inf)

    mode = property(lambda self: self.rate / (self.concentration + 1))

    @property
    def variance(self):
        c = self.concentration
        result = self.rate.pow(2) / ((c - 1).pow(2) * (c - 2))
        return F["where"](c > 2, result, math.inf)

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + F["lgamma"](c) - (1 + c) * F["digamma"](c)
