"""RelaxedBernoulli (the binary Concrete / Gumbel-softmax distribution) and its
logit-space base LogitRelaxedBernoulli."""
from .. import _factories
from .._size import Size
from . import constraints
from .discrete import _clamp_probs, _one_of, logits_to_probs, probs_to_logits
from .distribution import Distribution, broadcast_all, lazy_property
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli sample: ``(logit(U) + logits) / temperature``.

    >>> import chainrule as cr
    >>> from chainrule.distributions.relaxed_bernoulli import *
    >>> d = LogitRelaxedBernoulli(cr.tensor(0.5), logits=cr.tensor(0.3))
    >>> round(d.log_prob(cr.tensor(1.0)).item(), 4)
    -2.0894
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        self.__dict__["probs" if probs is not None else "logits"] = param
        self._param = param
        shape = Size() if isinstance(given, (int, float)) else param.size()
        super().__init__(shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    param_shape = property(lambda self: self._param.size())

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        probs = _clamp_probs(self.probs.expand(shape))
        u = _clamp_probs(_factories.rand(*shape, dtype=probs.dtype, device=probs.device))
        logistic = u.log() - (-u).log1p()
        return (logistic + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """A continuous relaxation of Bernoulli on (0, 1), reparametrized; ``temperature``
    near 0 approaches Bernoulli(``probs``).

    >>> import chainrule as cr
    >>> from chainrule.distributions.relaxed_bernoulli import *
    >>> d = cr.distributions.RelaxedBernoulli(cr.tensor(0.5), probs=cr.tensor(0.3))
    >>> round(d.log_prob(cr.tensor(0.2)).item(), 4), d.rsample((4,)).shape
    (-0.2528, chainrule.Size([4]))
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    temperature = property(lambda self: self.base_dist.temperature)
    logits = property(lambda self: self.base_dist.logits)
    probs = property(lambda self: self.base_dist.probs)
