"""Student's t distribution: a normal draw over the root of a scaled chi-squared one."""
import math

from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution, broadcast_all

F = FUNCTIONS
__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, ``loc`` and ``scale``.

    >>> import chainrule as cr
    >>> d = cr.distributions.StudentT(cr.tensor(3.0))
    >>> round(d.log_prob(cr.tensor(0.5)).item(), 4), d.variance
    (-1.161, tensor(3.))
    """
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    @property
    def mean(self):
        return F["where"](self.df > 1, self.loc, math.nan)

    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return F["where"](df > 2, finite, F["where"](df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        x = _factories.randn(*shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        norm = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
                + F["lgamma"](0.5 * df) - F["lgamma"](0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * F["log1p"](y.pow(2) / df) - norm

    def entropy(self):
        df = self.df
        lbeta = F["lgamma"](0.5 * df) + math.lgamma(0.5) - F["lgamma"](0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (F["digamma"](0.5 * (df + 1))
                                                    - F["digamma"](0.5 * df))
                + 0.5 * df.log() + lbeta)
