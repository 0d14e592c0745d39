"""The Gumbel distribution: ``loc - scale * log(-log U)`` for uniform U, written as a
Uniform pushed through log and affine transforms."""
import math

import numpy as np

from .. import _factories
from . import constraints
from .distribution import broadcast_all
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .continuous import Uniform
from .utils import euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """Gumbel distribution with location ``loc`` and scale ``scale``.

    >>> import chainrule as cr
    >>> d = cr.distributions.Gumbel(cr.tensor(1.0), cr.tensor(2.0))
    >>> round(d.log_prob(cr.tensor(0.0)).item(), 4), round(d.mean.item(), 4)
    (-1.8419, 2.1544)
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = np.finfo(self.loc.dtype.np)
        low = _factories.full_like(self.loc, float(info.tiny))
        high = _factories.full_like(self.loc, 1 - float(info.eps))
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-_ones(self.loc)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(Uniform(low, high, validate_args=validate_args), transforms,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        shape = tuple(batch_shape)
        new.loc, new.scale = self.loc.expand(shape), self.scale.expand(shape)
        return new

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    mean = property(lambda self: self.loc + self.scale * euler_constant)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: (math.pi / math.sqrt(6)) * self.scale)
    variance = property(lambda self: self.stddev.pow(2))

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)


def _ones(like):
    return _factories.ones_like(like)
