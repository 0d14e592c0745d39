"""The Wishart distribution over positive-definite matrices, reparametrized by the
Bartlett decomposition (chi-squared diagonal, normal strict lower triangle)."""
import math
import numbers
import warnings

import numpy as np

from .. import _factories, linalg
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .chi2 import Chi2
from .continuous import _precision_to_scale_tril
from .distribution import ExponentialFamily, lazy_property

F = FUNCTIONS
__all__ = ["Wishart"]
_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """sum_i digamma(x - i/2), i = 0..p-1 (the derivative of mvlgamma)."""
    steps = _factories.arange(p, dtype=x.dtype, device=x.device) / 2
    return F["digamma"](x.unsqueeze(-1) - steps).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart distribution with ``df`` degrees of freedom and one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``.

    >>> import chainrule as cr
    >>> d = cr.distributions.Wishart(cr.tensor(4.0), cr.eye(2))
    >>> d.mean, round(d.log_prob(cr.eye(2)).item(), 4)
    (tensor([[4., 0.],
            [0., 4.]]), -4.2242)
    """
    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch = Size(param.shape[:-2])
            self.df = _factories.tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch = Size(F["broadcast_shapes"](tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(tuple(batch))
        event = param.shape[-2:]
        if bool(self.df.le(event[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event[-1] - 1}.")
        full = tuple(batch) + tuple(event)
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = param.expand(full)
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        if bool(self.df.lt(event[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch, event, validate_args=validate_args)
        self._dist_chi2 = self._chi2()

    def _chi2(self):
        """Chi2(df - i) for the squared diagonal entries of the Bartlett factor."""
        p = self._event_shape[-1]
        steps = _factories.arange(p, dtype=self._unbroadcasted_scale_tril.dtype, device=self._unbroadcasted_scale_tril.device)
        return Chi2(self.df.unsqueeze(-1) - steps.expand(tuple(self._batch_shape) + (p,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        new.__dict__.update(self.__dict__)
        batch_shape = Size(batch_shape)
        full = tuple(batch_shape) + tuple(self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(full)
        new.df = self.df.expand(tuple(batch_shape))
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name].expand(full)
        new._batch_shape = batch_shape
        new._dist_chi2 = new._chi2()
        return new

    def _full(self, matrix):
        return matrix.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._full(L @ L.mT)

    @lazy_property
    def precision_matrix(self):
        return self._full(F["cholesky_inverse"](self._unbroadcasted_scale_tril))

    def _df_matrix(self):
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    mean = property(lambda self: self._df_matrix() * self.covariance_matrix)

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = F["where"](factor <= 0, math.nan, factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=Size()):
        p = self._event_shape[-1]
        eps = float(np.finfo(self.df.dtype.np).eps)
        diagonal = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        rows, cols = np.tril_indices(p, k=-1)
        lower = _factories.randn(*(tuple(Size(sample_shape)) + tuple(self._batch_shape)
                                   + (len(rows),)), dtype=diagonal.dtype,
                                 device=diagonal.device)
        noise = diagonal.diag_embed()
        if len(rows):
            index = _factories.tensor(rows * p + cols, device=noise.device)
            flat = noise.flatten(-2)
            flat = F["scatter"](flat, -1, index.expand(tuple(lower.shape)), lower)
            noise = flat.reshape(tuple(noise.shape))
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Samples by the Bartlett decomposition; a draw that is numerically singular
        is drawn again up to ``max_try_correction`` (10) times."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett_sampling(sample_shape)
        for _ in range(max_try_correction):
            singular = ~self.support.check(sample)
            if not bool(singular.any()):
                break
            warnings.warn("Singular sample detected.", stacklevel=2)
            fresh = self._bartlett_sampling(sample_shape)
            sample = F["where"](singular.unsqueeze(-1).unsqueeze(-1), fresh, sample)
        return sample

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = F["cholesky_solve"](value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + self._half_log_det()) - F["mvlgamma"](nu / 2, p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._half_log_det()) + F["mvlgamma"](nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)
