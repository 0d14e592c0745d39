"""The half-normal distribution: |X| for a centred Normal."""
import math

from .. import _factories
from . import constraints
from .continuous import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(TransformedDistribution):
    """``|X|`` for ``X ~ Normal(0, scale)``.

    >>> import chainrule as cr
    >>> d = cr.distributions.HalfNormal(cr.tensor(2.0))
    >>> round(d.log_prob(cr.tensor(1.0)).item(), 4), round(d.mean.item(), 4)
    (-1.0439, 1.5958)
    """
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base = Normal(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    scale = property(lambda self: self.base_dist.scale)
    mean = property(lambda self: self.scale * math.sqrt(2 / math.pi))
    mode = property(lambda self: _factories.zeros_like(self.scale))
    variance = property(lambda self: self.scale.pow(2) * (1 - 2 / math.pi))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return log_prob.masked_fill(value.expand(log_prob.shape) < 0, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
