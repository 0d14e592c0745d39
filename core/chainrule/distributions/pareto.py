"""The Pareto distribution: scale * exp(Exponential(alpha))."""
from . import constraints
from .continuous import Exponential
from .distribution import broadcast_all
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """Pareto type-1 distribution with ``scale`` (the minimum) and shape ``alpha``.

    >>> import chainrule as cr
    >>> d = cr.distributions.Pareto(cr.tensor(1.0), cr.tensor(3.0))
    >>> round(d.log_prob(cr.tensor(2.0)).item(), 4), d.mean
    (-1.674, tensor(1.5000))
    """
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        shape = tuple(batch_shape)
        new.scale, new.alpha = self.scale.expand(shape), self.alpha.expand(shape)
        return new

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    mode = property(lambda self: self.scale)

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


