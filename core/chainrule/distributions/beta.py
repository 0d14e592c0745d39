"""The Beta distribution, the two-category Dirichlet."""
import numbers

from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .dirichlet import Dirichlet
from .distribution import ExponentialFamily, broadcast_all

F = FUNCTIONS
__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """Beta distribution with ``concentration1`` (alpha) and ``concentration0`` (beta).

    >>> import chainrule as cr
    >>> d = cr.distributions.Beta(cr.tensor(2.0), cr.tensor(3.0))
    >>> round(d.log_prob(cr.tensor(0.4)).item(), 4), d.mean
    (0.547, tensor(0.4000))
    """
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, numbers.Real) and isinstance(concentration0, numbers.Real):
            pair = _factories.tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            pair = F["stack"]([c1, c0], -1)
        self._dirichlet = Dirichlet(pair, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=Size()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(F["stack"]([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    concentration1 = property(lambda self: self._dirichlet.concentration[..., 0])
    concentration0 = property(lambda self: self._dirichlet.concentration[..., 1])

    @property
    def _natural_params(self):
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x, y):
        return F["lgamma"](x) + F["lgamma"](y) - F["lgamma"](x + y)
