"""The binomial distribution."""
import numpy as np

from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .discrete import _one_of, logits_to_probs, probs_to_logits
from .distribution import Distribution, broadcast_all, lazy_property

F = FUNCTIONS
__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """max(x, 0) with gradient 1/2 at 0 (as the reference writes it)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _draw_binomial(counts, probs):
    """Binomial draws (on the host, returned to the device of ``probs``)."""
    from .. import _random
    n, p = counts.detach().cpu().numpy(), probs.detach().cpu().numpy()
    draws = _random.numpy_rng(None).binomial(n.astype(np.int64), p.astype(np.float64))
    return _factories.tensor(np.asarray(draws).astype(p.dtype), device=probs.device)


class Binomial(Distribution):
    """Number of successes in ``total_count`` trials of probability ``probs`` (or
    ``sigmoid(logits)``).

    >>> import chainrule as cr
    >>> d = cr.distributions.Binomial(10, cr.tensor(0.3))
    >>> round(d.log_prob(cr.tensor(3.0)).item(), 4), d.mean
    (-1.3211, tensor(3.))
    """
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    _param = property(lambda self: self.__dict__.get("probs", self.__dict__.get("logits")))
    param_shape = property(lambda self: self._param.size())

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    mean = property(lambda self: self.total_count * self.probs)
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        return _draw_binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_norm = (n * _clamp_by_zero(logits) + n * F["log1p"]((-logits.abs()).exp())
                    - F["lgamma"](n + 1))
        return (value * logits - log_norm - F["lgamma"](value + 1)
                - F["lgamma"](n - value + 1))

    def _homogeneous_count(self, what):
        top = int(self.total_count.max())
        if not bool((self.total_count.min() == top)):
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return top

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        top = self._homogeneous_count("enumerate_support")
        values = _factories.arange(1 + top, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
