"""The generalized Pareto distribution (peaks over a threshold)."""
import math

from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .distribution import Distribution, broadcast_all

F = FUNCTIONS
__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto distribution with ``loc``, ``scale`` and shape
    ``concentration`` (0: exponential tail, > 0: heavy, < 0: bounded).

    >>> import chainrule as cr
    >>> d = cr.distributions.GeneralizedPareto(cr.tensor(0.0), cr.tensor(1.0), cr.tensor(0.5))
    >>> round(d.log_prob(cr.tensor(1.0)).item(), 4), d.mean
    (-1.2164, tensor(2.))
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def _safe_concentration(self):
        """(concentration == 0, concentration with its zeros replaced by 1): the
        exponential limit is taken separately, the other branch kept finite."""
        zero = F["isclose"](self.concentration, _factories.zeros_like(self.concentration))
        return zero, F["where"](zero, _factories.ones_like(self.concentration),
                                self.concentration)

    def rsample(self, sample_shape=Size()):
        u = _factories.rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_concentration()
        y = 1 / c + 1
        nonzero = F["where"](y == 0, y, y * F["log1p"](c * z))
        return -self.scale.log() - F["where"](zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_concentration()
        return F["where"](zero, -z, -F["log1p"](c * z) / c)

    def log_cdf(self, value):
        return F["log1p"](-self.log_survival_function(value).exp())

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        zero, c = self._safe_concentration()
        log_u = F["log1p"](-value)
        nonzero = self.loc + self.scale / c * F["expm1"](-c * log_u)
        return F["where"](zero, self.loc - self.scale * log_u, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        c = F["where"](valid, self.concentration, 0.5)
        return F["where"](valid, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        c = F["where"](valid, self.concentration, 0.25)
        return F["where"](valid, self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c)), math.nan)

    mode = property(lambda self: self.loc)

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).broadcast_to(tuple(self._batch_shape))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = F["where"](self.concentration < 0, self.loc - self.scale / self.concentration,
                           math.inf)
        return constraints.interval(self.loc, upper)
