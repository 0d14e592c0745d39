"""The Dirichlet distribution: normalised gamma draws (reparametrized through
``_standard_gamma``, Note [implicit reparametrization] in gamma.py)."""
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .distribution import ExponentialFamily
from .gamma import _standard_gamma

F = FUNCTIONS
__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution over the simplex of the last dimension of
    ``concentration``.

    >>> import chainrule as cr
    >>> d = cr.distributions.Dirichlet(cr.tensor([1.0, 2.0, 3.0]))
    >>> d.mean, round(d.log_prob(cr.tensor([0.2, 0.3, 0.5])).item(), 4)
    (tensor([0.1667, 0.3333, 0.5000]), 1.5041)
    """
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        gammas = _standard_gamma(self.concentration.expand(shape))
        return gammas / gammas.sum(-1, True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (F["xlogy"](c - 1.0, value).sum(-1) + F["lgamma"](c.sum(-1))
                - F["lgamma"](c).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        excess = (self.concentration - 1).clamp(min=0.0)
        mode = excess / excess.sum(-1, True)
        corner = (self.concentration < 1).all(-1, keepdim=True)   # all < 1: a vertex
        from ..nn.functional import one_hot
        vertex = one_hot(self.concentration.argmax(-1), excess.shape[-1]).to(mode.dtype)
        return F["where"](corner, vertex, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        c = self.concentration
        k, total = c.size(-1), c.sum(-1)
        return (F["lgamma"](c).sum(-1) - F["lgamma"](total) - (k - total) * F["digamma"](total)
                - ((c - 1.0) * F["digamma"](c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return F["lgamma"](x).sum(-1) - F["lgamma"](x.sum(-1))
