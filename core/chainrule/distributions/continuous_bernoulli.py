"""The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem & Cunningham, 2019).
Near probs = 1/2 its normaliser and moments are 0/0 forms: there, probs is cut to
``lims[0]`` and Taylor expansions around 1/2 are used instead."""
import math

from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .discrete import _bce_with_logits, _clamp_probs, _one_of, logits_to_probs, \
    probs_to_logits
from .distribution import ExponentialFamily, broadcast_all, lazy_property

F = FUNCTIONS
__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Continuous Bernoulli distribution with ``probs`` (or ``logits``).

    >>> import chainrule as cr
    >>> d = cr.distributions.ContinuousBernoulli(cr.tensor(0.3))
    >>> round(d.log_prob(cr.tensor(0.2)).item(), 4), round(d.mean.item(), 4)
    (0.2245, 0.4302)
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            shape = self.probs.shape
            # checked before the clamp, which would hide values outside [0, 1] (as the
            # reference: whenever validate_args is given, even False)
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = _clamp_probs(self.probs)
        else:
            (self.logits,) = broadcast_all(logits)
            shape = self.logits.shape
        self._lims = lims
        super().__init__(shape, validate_args=validate_args)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return F["where"](self._outside_unstable_region(), self.probs,
                          self._lims[0] * _factories.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below = F["where"](cut <= 0.5, cut, _factories.zeros_like(cut))
        above = F["where"](cut >= 0.5, cut, _factories.ones_like(cut))
        log_norm = (F["log1p"](-cut) - cut.log()).abs().log() - F["where"](
            cut <= 0.5, F["log1p"](-2.0 * below), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return F["where"](self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (F["log1p"](-cut) - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return F["where"](self._outside_unstable_region(), mus, taylor)

    stddev = property(lambda self: self.variance.sqrt())

    @property
    def variance(self):
        cut = self._cut_probs()
        vs = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
              + 1.0 / (F["log1p"](-cut) - cut.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return F["where"](self._outside_unstable_region(), vs, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return _clamp_probs(logits_to_probs(self.logits, is_binary=True))

    param_shape = property(lambda self: self.__dict__.get(
        "probs", self.__dict__.get("logits")).size())

    def sample(self, sample_shape=Size()):
        u = _factories.rand(*self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        with _no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        u = _factories.rand(*self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = F["where"](self._outside_unstable_region(), cdfs, value)
        return F["where"](value <= 0.0, _factories.zeros_like(value),
                          F["where"](value >= 1.0, _factories.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inverse = ((F["log1p"](-cut + value * (2.0 * cut - 1.0)) - F["log1p"](-cut))
                   / (cut.log() - F["log1p"](-cut)))
        return F["where"](self._outside_unstable_region(), inverse, value)

    def entropy(self):
        log_p0, log_p1 = F["log1p"](-self.probs), self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self):
        return (self.logits,)


def _no_grad():
    from .. import _grad_mode
    return _grad_mode.no_grad()
