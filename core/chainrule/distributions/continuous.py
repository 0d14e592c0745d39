"""Continuous distributions: Normal, Uniform, Exponential, Laplace, MultivariateNormal.
Every formula is written with chainrule ops, so log_prob, entropy, cdf and the
reparametrized samples are differentiable in the parameters."""
import math

from .. import _factories, linalg
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .distribution import ExponentialFamily, Distribution, broadcast_all, lazy_property

F = FUNCTIONS


def _noise(kind, shape, like):
    """Standard normal or uniform [0, 1) draws of ``shape`` in ``like``'s dtype (from
    chainrule's generator, so ``manual_seed`` makes them reproducible)."""
    draw = _factories.randn if kind == "normal" else _factories.rand
    return draw(*shape, dtype=like.dtype, device=like.device)


class Normal(ExponentialFamily):
    """Normal distribution with mean ``loc`` and standard deviation ``scale``.

    >>> import chainrule as cr
    >>> d = cr.distributions.Normal(cr.tensor([0.0]), cr.tensor([2.0]))
    >>> round(d.log_prob(cr.tensor([1.0])).item(), 4), d.rsample((5,)).shape
    (-1.7371, chainrule.Size([5, 1]))
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape if self.loc.ndim else Size(), validate_args=validate_args)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale ** 2)

    def rsample(self, sample_shape=Size()):
        eps = _noise("normal", self._extended_shape(sample_shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() \
            - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + F["erf"]((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * F["erfinv"](2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Uniform(Distribution):
    """Uniform distribution on ``[low, high)``.

    >>> import chainrule as cr
    >>> round(cr.distributions.Uniform(0.0, 4.0).log_prob(cr.tensor(1.0)).item(), 4)
    -1.3863
    """
    arg_constraints = {"low": constraints.real, "high": constraints.real}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)
        if self._validate_args and not bool((self.low < self.high).all()):
            raise ValueError("Uniform is not defined when low>= high")

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    mean = property(lambda self: (self.high + self.low) / 2)
    mode = property(lambda self: self.high * float("nan"))
    stddev = property(lambda self: (self.high - self.low) / 12 ** 0.5)
    variance = property(lambda self: (self.high - self.low).pow(2) / 12)

    def rsample(self, sample_shape=Size()):
        u = _noise("uniform", self._extended_shape(sample_shape), self.low)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value).type_as(self.low) * (self.high > value).type_as(self.low)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()


class Exponential(ExponentialFamily):
    """Exponential distribution with ``rate``.

    >>> import chainrule as cr
    >>> cr.distributions.Exponential(cr.tensor(2.0)).mean
    tensor(0.5000)
    """
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    mean = property(lambda self: self.rate.reciprocal())
    mode = property(lambda self: _factories.zeros_like(self.rate))
    stddev = property(lambda self: self.rate.reciprocal())
    variance = property(lambda self: self.rate.pow(-2))

    def rsample(self, sample_shape=Size()):
        u = _noise("uniform", self._extended_shape(sample_shape), self.rate)
        return -F["log1p"](-u) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -F["log1p"](-value) / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()


class Laplace(Distribution):
    """Laplace distribution with location ``loc`` and scale ``scale``.

    >>> import chainrule as cr
    >>> round(cr.distributions.Laplace(0.0, 1.0).cdf(cr.tensor(0.5)).item(), 4)
    0.6967
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: 2 ** 0.5 * self.scale)
    variance = property(lambda self: 2 * self.scale.pow(2))

    def rsample(self, sample_shape=Size()):
        finfo_eps = 1e-7 if self.loc.dtype.itemsize <= 4 else 1e-16
        u = _noise("uniform", self._extended_shape(sample_shape), self.loc) * 2 - 1
        u = u.clamp(min=-1 + finfo_eps, max=1)
        return self.loc - self.scale * u.sign() * F["log1p"](-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * F["expm1"](-(value - self.loc).abs()
                                                                   / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * F["log1p"](-2 * term.abs())

    def entropy(self):
        return 1 + (2 * self.scale).log()


class MultivariateNormal(Distribution):
    """Multivariate normal with mean ``loc`` and one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (its lower Cholesky factor).

    >>> import chainrule as cr
    >>> d = cr.distributions.MultivariateNormal(cr.zeros(2), cr.eye(2))
    >>> d.event_shape, round(d.log_prob(cr.zeros(2)).item(), 4)
    (chainrule.Size([2]), -1.8379)
    """
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        matrix = given[0]
        if matrix.ndim < 2:
            raise ValueError("scale_tril matrix must be at least two-dimensional, with "
                             "optional leading batch dimensions")
        batch = Size(F["broadcast_shapes"](tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        event = loc.shape[-1:]
        self.loc = loc.expand(tuple(batch) + tuple(event))
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(tuple(batch) + tuple(matrix.shape[-2:]))
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(tuple(batch) + tuple(matrix.shape[-2:]))
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = precision_matrix.expand(tuple(batch) + tuple(matrix.shape[-2:]))
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        super().__init__(batch, event, validate_args=validate_args)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        return F["cholesky_inverse"](self._unbroadcasted_scale_tril).expand(
            tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        L = self._unbroadcasted_scale_tril
        return L.pow(2).sum(-1).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        eps = _noise("normal", self._extended_shape(sample_shape), self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h


def _batch_mahalanobis(L, x):
    """``x^T (L L^T)^-1 x`` for every batch entry, by one triangular solve."""
    shape = F["broadcast_shapes"](tuple(L.shape[:-1]), tuple(x.shape))
    L = L.expand(tuple(shape[:-1]) + tuple(L.shape[-2:]))
    solved = linalg.solve_triangular(L, x.expand(tuple(shape)).unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    flipped = linalg.cholesky(P.flip((-2, -1)))
    L_inv = flipped.flip((-2, -1)).mT
    eye = _factories.eye(P.shape[-1], dtype=P.dtype)
    return linalg.solve_triangular(L_inv, eye, upper=False)
