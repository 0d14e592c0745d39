"""The LKJ distribution over Cholesky factors of correlation matrices, sampled by the
onion method (Lewandowski, Kurowicka & Joe, 2009)."""
import math

import numpy as np

from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution, broadcast_all

F = FUNCTIONS
__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ distribution (``concentration`` eta) of the lower Cholesky factor of a
    ``dim`` x ``dim`` correlation matrix.

    >>> import chainrule as cr
    >>> d = cr.distributions.LKJCholesky(3, cr.tensor(2.0))
    >>> d.event_shape, round(d.log_prob(cr.eye(3)).item(), 4)
    (chainrule.Size([3, 3]), -0.6155)
    """
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # row i of the factor has its squared off-diagonal norm ~ Beta(i/2, eta + (dim-2-i)/2)
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = _factories.arange(dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = F["cat"]([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        return new

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        shape = tuple(self._extended_shape(sample_shape))
        normal = _factories.randn(*shape, dtype=y.dtype, device=y.device).tril(-1)
        tiny = float(np.finfo(y.dtype.np).tiny)
        norm = normal.norm(dim=-1, keepdim=True)
        direction = F["where"](norm > 0, normal / norm.clamp(min=tiny), 0.0)  # row 0: none
        w = y.sqrt() * direction
        diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
        return w + diagonal.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _factories.arange(2, self.dim + 1, dtype=self.concentration.dtype, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diagonal.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = (0.5 * dm1 * math.log(math.pi) + F["mvlgamma"](alpha - 0.5, dm1)
                      - F["lgamma"](alpha) * dm1)
        return unnormalized - normalizer
