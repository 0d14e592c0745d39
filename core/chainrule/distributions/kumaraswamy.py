"""The Kumaraswamy distribution: a closed-form cousin of Beta, by transforms of a
Uniform."""
import numpy as np

from .. import _factories
from .._ops import FUNCTIONS
from . import constraints
from .continuous import Uniform
from .distribution import broadcast_all
from .gumbel import euler_constant
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform

F = FUNCTIONS
__all__ = ["Kumaraswamy"]


def _moment(a, b, n):
    """E[X^n] = b * B(1 + n / a, b), by log-gammas."""
    arg1 = 1 + n / a
    log_value = F["lgamma"](arg1) + F["lgamma"](b) - F["lgamma"](arg1 + b)
    return b * log_value.exp()


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy distribution on (0, 1) with ``concentration1`` (a) and
    ``concentration0`` (b).

    >>> import chainrule as cr
    >>> d = cr.distributions.Kumaraswamy(cr.tensor(2.0), cr.tensor(3.0))
    >>> round(d.log_prob(cr.tensor(0.4)).item(), 4), round(d.mean.item(), 4)
    (0.5268, 0.4571)
    """
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        info = np.finfo(self.concentration0.dtype.np)
        low = _factories.full_like(self.concentration0, float(info.tiny))
        high = _factories.full_like(self.concentration0, 1 - float(info.eps))
        base = Uniform(low, high, validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        shape = tuple(batch_shape)
        new.concentration1 = self.concentration1.expand(shape)
        new.concentration0 = self.concentration0.expand(shape)
        return new

    mean = property(lambda self: _moment(self.concentration1, self.concentration0, 1))

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a   # ((a-1)/(ab-1))^(1/a)
        return F["where"]((a < 1) | (b < 1), float("nan"), log_mode.exp())

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _moment(a, b, 2) - _moment(a, b, 1).pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        h_b = F["digamma"](b + 1) + euler_constant
        return t0 + t1 * h_b - a.log() - b.log()
