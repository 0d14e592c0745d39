"""The half-Cauchy distribution: |X| for a centred Cauchy."""
import math

from .. import _factories
from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """``|X|`` for ``X ~ Cauchy(0, scale)``.

    >>> import chainrule as cr
    >>> d = cr.distributions.HalfCauchy(cr.tensor(1.0))
    >>> round(d.log_prob(cr.tensor(1.0)).item(), 4)
    -1.1447
    """
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base = Cauchy(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    scale = property(lambda self: self.base_dist.scale)
    mean = property(lambda self: _factories.full_like(self.scale, math.inf))
    mode = property(lambda self: _factories.zeros_like(self.scale))
    variance = property(lambda self: self.base_dist.variance)

    def log_prob(self, value):
        value = _factories.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
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
