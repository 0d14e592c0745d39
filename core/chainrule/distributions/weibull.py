"""The Weibull distribution: a power of an Exponential."""

from .. import _factories
from .._ops import FUNCTIONS
from . import constraints
from .continuous import Exponential
from .distribution import broadcast_all
from .gumbel import euler_constant
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform

F = FUNCTIONS
__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Weibull distribution with ``scale`` and shape ``concentration``.

    >>> import chainrule as cr
    >>> d = cr.distributions.Weibull(cr.tensor(1.0), cr.tensor(2.0))
    >>> round(d.log_prob(cr.tensor(0.5)).item(), 4), round(d.mean.item(), 4)
    (-0.25, 0.8862)
    """
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(_factories.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    _expand_attrs = ("scale", "concentration", "concentration_reciprocal")

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        shape = tuple(batch_shape)
        for name in self._expand_attrs:
            setattr(new, name, getattr(self, name).expand(shape))
        new.transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                          AffineTransform(loc=0, scale=new.scale)]
        return new

    mean = property(lambda self: self.scale * F["lgamma"](1 + self.concentration_reciprocal).exp())

    @property
    def mode(self):
        c = self.concentration
        return self.scale * ((c - 1) / c).pow(c.reciprocal())

    @property
    def variance(self):
        g2 = F["lgamma"](1 + 2 * self.concentration_reciprocal).exp()
        g1 = F["lgamma"](1 + self.concentration_reciprocal).exp()
        return self.scale.pow(2) * (g2 - g1.pow(2))

    def entropy(self):
        return (euler_constant * (1 - self.concentration_reciprocal)
                + (self.scale * self.concentration_reciprocal).log() + 1)


