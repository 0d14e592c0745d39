"""Discrete distributions: Bernoulli, Categorical, OneHotCategorical, Poisson; and
Independent (batch dimensions reinterpreted as event dimensions)."""
import numpy as np

from .. import _dtypes, _factories, _random
from .._ops import FUNCTIONS
from .._size import Size
from .._tensor import Tensor
from . import constraints
from .distribution import Distribution, ExponentialFamily, broadcast_all, lazy_property

F = FUNCTIONS


def _clamp_probs(probs):
    eps = float(np.finfo(probs._data.dtype).eps) if probs._data.dtype.kind == "f" else 1e-7
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits of probabilities (``log p - log(1 - p)`` for a binary variable)."""
    p = _clamp_probs(probs)
    return (p.log() - F["log1p"](-p)) if is_binary else p.log()


def logits_to_probs(logits, is_binary=False):
    """Probabilities of logits (sigmoid for binary, softmax over the last dimension)."""
    return F["sigmoid"](logits) if is_binary else F["softmax"](logits, -1)


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Bernoulli(ExponentialFamily):
    """Bernoulli distribution: 1 with probability ``probs`` (or ``sigmoid(logits)``).

    >>> import chainrule as cr
    >>> round(cr.distributions.Bernoulli(cr.tensor([0.3])).log_prob(cr.tensor([1.0])).item(), 4)
    -1.204
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            shape = self.probs.shape
        else:
            (self.logits,) = broadcast_all(logits)
            shape = self.logits.shape
        super().__init__(shape, validate_args=validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    param_shape = property(lambda self: self._param.size())
    _param = property(lambda self: self.__dict__.get("probs", self.__dict__.get("logits")))
    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach().expand(tuple(shape))
        return _random.bernoulli(probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = _factories.tensor([0.0, 1.0], dtype=self._param.dtype,
                                   device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


def _bce_with_logits(logits, target):
    """``-target * log(sigmoid(logits)) - (1 - target) * log(1 - sigmoid(logits))``,
    written stably (softplus, so the gradient in logits is sigmoid(logits) - target
    everywhere, at 0 too)."""
    from ..nn.functional import softplus
    return softplus(logits) - logits * target


class Categorical(Distribution):
    """A categorical distribution over ``0 .. K-1`` (the last dimension of ``probs``
    or ``logits``, normalised).

    >>> import chainrule as cr
    >>> d = cr.distributions.Categorical(logits=cr.tensor([0.0, 1.0, 2.0]))
    >>> d.mode, round(d.entropy().item(), 4)
    (tensor(2), 0.8324)
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        if given.ndim < 1:
            raise ValueError(f"`{'probs' if probs is not None else 'logits'}` parameter must be "
                             "at least one-dimensional.")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            self.logits = logits - F["logsumexp"](logits, -1, keepdim=True)
        self._num_events = given.shape[-1]
        super().__init__(given.shape[:-1], validate_args=validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    _param = property(lambda self: self.__dict__.get("probs", self.__dict__.get("logits")))
    param_shape = property(lambda self: self._param.size())

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return _factories.full(tuple(self._extended_shape()), float("nan"),
                               dtype=self.probs.dtype)

    variance = mean

    @property
    def mode(self):
        return self.probs.argmax(-1)

    def sample(self, sample_shape=Size()):
        shape = Size(sample_shape)
        probs = self.probs.detach().reshape(-1, self._num_events)
        draws = _random.multinomial(probs, int(np.prod(shape)) if len(shape) else 1, True)
        return draws.T.reshape(tuple(shape) + tuple(self._batch_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = F["broadcast_tensors"](value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        finfo_min = float(np.finfo(self.logits._data.dtype).min)
        logits = self.logits.clamp(min=finfo_min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = _factories.arange(self._num_events, dtype=_dtypes.int64,
                                   device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class OneHotCategorical(Distribution):
    """Categorical draws as one-hot vectors.

    >>> import chainrule as cr
    >>> d = cr.distributions.OneHotCategorical(cr.tensor([0.5, 0.5]))
    >>> round(d.log_prob(cr.tensor([0.0, 1.0])).item(), 4), d.sample().shape
    (-0.6931, chainrule.Size([2]))
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        shape = self._categorical.param_shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    param_shape = property(lambda self: self._categorical.param_shape)
    mean = property(lambda self: self._categorical.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @property
    def mode(self):
        return _one_hot(self.probs.argmax(-1), self._event_shape[0], self.probs.dtype)

    def sample(self, sample_shape=Size()):
        indices = self._categorical.sample(sample_shape)
        return _one_hot(indices, self._event_shape[0], self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._event_shape[0]
        values = _factories.eye(n, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + tuple(self._batch_shape) + (n,)) if expand else values


def _one_hot(indices, n, dtype):
    """One-hot vectors of ``indices`` in ``dtype``, on the indices' device."""
    return (indices.unsqueeze(-1) == _factories.arange(n, device=indices.device)).to(dtype)


class Poisson(ExponentialFamily):
    """Poisson distribution with ``rate``.

    >>> import chainrule as cr
    >>> round(cr.distributions.Poisson(cr.tensor(2.0)).log_prob(cr.tensor(3.0)).item(), 4)
    -1.7123
    """
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    mean = property(lambda self: self.rate)
    mode = property(lambda self: self.rate.floor())
    variance = property(lambda self: self.rate)

    def sample(self, sample_shape=Size()):
        rate = self.rate.detach().expand(tuple(self._extended_shape(sample_shape)))
        return _random.poisson(rate.cpu()).to(rate.device)      # (a host sampler)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return F["xlogy"](value, rate) - rate - F["lgamma"](value + 1)


class Independent(Distribution):
    """``base_distribution`` with its rightmost ``reinterpreted_batch_ndims`` batch
    dimensions treated as event dimensions (log_prob and entropy sum over them).

    >>> import chainrule as cr
    >>> d = cr.distributions.Independent(cr.distributions.Normal(cr.zeros(3), 1.0), 1)
    >>> d.batch_shape, d.event_shape
    (chainrule.Size([]), chainrule.Size([3]))
    """
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution."
                             f"batch_shape), actual {reinterpreted_batch_ndims} vs "
                             f"{len(base_distribution.batch_shape)}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    has_rsample = property(lambda self: self.base_dist.has_rsample)
    has_enumerate_support = property(lambda self: False)

    @property
    def support(self):
        base = self.base_dist.support
        return constraints.independent(base, self.reinterpreted_batch_ndims) \
            if self.reinterpreted_batch_ndims else base

    mean = property(lambda self: self.base_dist.mean)
    mode = property(lambda self: self.base_dist.mode)
    variance = property(lambda self: self.base_dist.variance)

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape)

    def _sum_rightmost(self, value):
        return value.sum(tuple(range(-self.reinterpreted_batch_ndims, 0))) \
            if self.reinterpreted_batch_ndims else value

    def log_prob(self, value):
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum_rightmost(self.base_dist.entropy())

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
