"""The multinomial distribution: counts of ``total_count`` categorical draws."""
from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .binomial import Binomial
from .discrete import Categorical
from .distribution import Distribution, broadcast_all

F = FUNCTIONS
__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Category counts of ``total_count`` draws from ``probs`` (or ``logits``).

    >>> import chainrule as cr
    >>> d = cr.distributions.Multinomial(4, cr.tensor([0.2, 0.3, 0.5]))
    >>> round(d.log_prob(cr.tensor([1.0, 1.0, 2.0])).item(), 4), d.mean
    (-1.7148, tensor([0.8000, 1.2000, 2.0000]))
    """
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    total_count: int

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        shape = self._categorical.param_shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    param_shape = property(lambda self: self._categorical.param_shape)
    mean = property(lambda self: self.probs * self.total_count)
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._binomial = self._binomial.expand(tuple(batch_shape) + tuple(self._event_shape))
        return new

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        draws = draws.permute(*range(1, draws.dim()), 0)      # the draws last
        counts = _factories.zeros(tuple(self._extended_shape(sample_shape)),
                                  dtype=draws.dtype, device=draws.device)
        counts = counts.scatter_add(-1, draws, _factories.ones_like(draws))
        return counts.type_as(self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        impossible = (value == 0) & (logits == float("-inf"))   # 0 * -inf counts as 0
        logits = logits.masked_fill(impossible, 0)
        log_factorial_n = F["lgamma"](value.sum(-1) + 1)
        log_factorial_xs = F["lgamma"](value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        n = _factories.tensor(float(self.total_count), dtype=self.probs.dtype, device=self.probs.device)
        support = self._binomial.enumerate_support()
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = F["lgamma"](support + 1)
        return (n * self._categorical.entropy() - F["lgamma"](n + 1)
                + (binomial_probs * weights).sum((0, -1)))
