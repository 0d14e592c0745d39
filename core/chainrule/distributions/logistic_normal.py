"""The logistic-normal distribution: a Normal pushed onto the simplex by stick
breaking."""
from . import constraints
from .continuous import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """``StickBreakingTransform()(X)`` for ``X ~ Normal(loc, scale)`` over vectors of
    length K-1, giving points of the K-simplex.

    >>> import chainrule as cr
    >>> d = cr.distributions.LogisticNormal(cr.zeros(2), cr.ones(2))
    >>> d.event_shape, round(d.log_prob(cr.tensor([0.2, 0.3, 0.5])).item(), 4)
    (chainrule.Size([3]), 1.298)
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    loc = property(lambda self: self.base_dist.base_dist.loc)
    scale = property(lambda self: self.base_dist.base_dist.scale)

