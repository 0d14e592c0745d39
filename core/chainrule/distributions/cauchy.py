"""The Cauchy distribution."""
import math

from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .distribution import Distribution, broadcast_all

F = FUNCTIONS
__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy (Lorentz) distribution with median ``loc`` and half width ``scale``.

    >>> import chainrule as cr
    >>> d = cr.distributions.Cauchy(cr.tensor(0.0), cr.tensor(1.0))
    >>> round(d.log_prob(cr.tensor(1.0)).item(), 4), round(d.cdf(cr.tensor(1.0)).item(), 4)
    (-1.8379, 0.75)
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    mean = property(lambda self: _factories.full_like(self.loc, math.nan))
    mode = property(lambda self: self.loc)
    variance = property(lambda self: _factories.full_like(self.loc, math.inf))

    def rsample(self, sample_shape=Size()):
        u = _factories.rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - F["log1p"](((value - self.loc) / self.scale).pow(2)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
