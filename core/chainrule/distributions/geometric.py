"""The geometric distribution: failures before the first success."""
import numpy as np

from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .discrete import _bce_with_logits, _one_of, logits_to_probs, probs_to_logits
from .distribution import Distribution, broadcast_all, lazy_property

F = FUNCTIONS
__all__ = ["Geometric"]


class Geometric(Distribution):
    """Number of failures before the first success of Bernoulli(``probs``) trials.

    >>> import chainrule as cr
    >>> d = cr.distributions.Geometric(cr.tensor(0.25))
    >>> round(d.log_prob(cr.tensor(2.0)).item(), 4), d.mean
    (-1.9617, tensor(3.))
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        param = self.__dict__.get("probs", self.__dict__.get("logits"))
        super().__init__(param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to be "
                             f"positive but found invalid values:\n{self.probs}")

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    mean = property(lambda self: 1.0 / self.probs - 1.0)
    mode = property(lambda self: _factories.zeros_like(self.probs))
    variance = property(lambda self: (1.0 / self.probs - 1.0) / self.probs)

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = float(np.finfo(self.probs.dtype.np).tiny)
        u = _factories.rand(*shape, dtype=self.probs.dtype, device=self.probs.device).clamp(min=tiny)
        return (u.log() / F["log1p"](-self.probs.detach())).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        certain = (probs == 1) & (value == 0)      # 0 * log(0) counts as 0
        probs = F["where"](certain, _factories.zeros_like(probs), probs)
        return value * F["log1p"](-probs) + self.probs.log()

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs) / self.probs
