"""The negative binomial distribution: failures before ``total_count`` successes."""
from .._ops import FUNCTIONS
from .._size import Size
from .. import _grad_mode, _random
from . import constraints
from .discrete import _one_of, logits_to_probs, probs_to_logits
from .distribution import Distribution, broadcast_all, lazy_property
from .gamma import Gamma

F = FUNCTIONS
__all__ = ["NegativeBinomial"]


def _logsigmoid(x):
    from ..nn import functional
    return functional.logsigmoid(x)


class NegativeBinomial(Distribution):
    """Number of successes (of probability ``probs``) before ``total_count`` failures.

    >>> import chainrule as cr
    >>> d = cr.distributions.NegativeBinomial(cr.tensor(3.0), cr.tensor(0.4))
    >>> round(d.log_prob(cr.tensor(2.0)).item(), 4), d.mean
    (-1.5733, tensor(2.))
    """
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        param = self.__dict__.get("probs", self.__dict__.get("logits"))
        super().__init__(param.shape, validate_args=validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    mean = property(lambda self: self.total_count * self.logits.exp())
    variance = property(lambda self: self.mean / F["sigmoid"](-self.logits))

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    def sample(self, sample_shape=Size()):
        with _grad_mode.no_grad():
            gamma = Gamma(self.total_count, (-self.logits).exp(), validate_args=False)
            rate = gamma.sample(sample_shape)
            return _random.poisson(rate.cpu()).to(rate.device)   # (a host sampler)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        unnormalized = n * _logsigmoid(-self.logits) + value * _logsigmoid(self.logits)
        normalization = -F["lgamma"](n + value) + F["lgamma"](1.0 + value) + F["lgamma"](n)
        normalization = normalization.masked_fill(n + value == 0.0, 0.0)   # 0 successes of 0
        return unnormalized - normalization
