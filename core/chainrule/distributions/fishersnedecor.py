"""The Fisher-Snedecor (F) distribution: a ratio of scaled chi-squared draws."""
import math

import numpy as np

from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .distribution import Distribution, broadcast_all
from .gamma import Gamma

F = FUNCTIONS
__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """Fisher-Snedecor distribution with ``df1`` and ``df2`` degrees of freedom.

    >>> import chainrule as cr
    >>> d = cr.distributions.FisherSnedecor(cr.tensor(4.0), cr.tensor(6.0))
    >>> round(d.log_prob(cr.tensor(1.0)).item(), 4), d.mean
    (-0.8802, tensor(1.5000))
    """
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.shape, validate_args=validate_args)

    @property
    def mean(self):
        df2 = self.df2
        return F["where"](df2 > 2, df2 / (df2 - 2), math.nan)

    @property
    def mode(self):
        df1, df2 = self.df1, self.df2
        return F["where"](df1 > 2, (df1 - 2) / df1 * df2 / (df2 + 2), math.nan)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        result = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return F["where"](df2 > 4, result, math.nan)

    def rsample(self, sample_shape=Size()):
        tiny = float(np.finfo(self.df1.dtype.np).tiny)
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        t1 = F["lgamma"](h1 + h2) - F["lgamma"](h1) - F["lgamma"](h2)
        t2 = h1 * ratio.log() + (h1 - 1) * value.log()
        t3 = (h1 + h2) * F["log1p"](ratio * value)
        return t1 + t2 - t3
