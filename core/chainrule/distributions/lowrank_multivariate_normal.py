"""The multivariate normal with a low-rank-plus-diagonal covariance
``cov_factor @ cov_factor.mT + diag(cov_diag)``, evaluated through the capacitance
matrix ``I + W^T D^-1 W`` (Woodbury identity and the matrix determinant lemma)."""
import math

from .. import _factories, linalg
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .continuous import _batch_mahalanobis
from .distribution import Distribution, lazy_property

F = FUNCTIONS
__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(W, D):
    m = W.size(-1)
    K = (W.mT / D.unsqueeze(-2)) @ W + _factories.eye(m, dtype=W.dtype, device=W.device)
    return linalg.cholesky(K)


class LowRankMultivariateNormal(Distribution):
    """Multivariate normal with mean ``loc`` and covariance
    ``cov_factor @ cov_factor.mT + diag(cov_diag)``.

    >>> import chainrule as cr
    >>> d = cr.distributions.LowRankMultivariateNormal(cr.zeros(2), cr.ones(2, 1), cr.ones(2))
    >>> round(d.log_prob(cr.zeros(2)).item(), 4), d.variance
    (-2.3872, tensor([2., 2.]))
    """
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        _check_lowrank_shapes(loc, cov_factor, cov_diag)
        event_shape = loc.shape[-1:]
        try:
            loc_, self.cov_factor, diag_ = F["broadcast_tensors"](
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc, self.cov_diag = loc_[..., 0], diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        shape = tuple(batch_shape) + tuple(self._event_shape)
        new.loc, new.cov_diag = self.loc.expand(shape), self.cov_diag.expand(shape)
        new.cov_factor = self.cov_factor.expand(shape + tuple(self.cov_factor.shape[-1:]))
        new._batch_shape = Size(batch_shape)
        return new

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    def _full(self, value):
        return value.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        return linalg.cholesky(self.covariance_matrix)

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return self._full(W @ W.mT + D.diag_embed())

    @lazy_property
    def precision_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = linalg.solve_triangular(self._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)
        return self._full(D.reciprocal().diag_embed() - A.mT @ A)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps_w = _factories.randn(*(shape[:-1] + tuple(self.cov_factor.shape[-1:])),
                                 dtype=self.loc.dtype, device=self.loc.device)
        eps_d = _factories.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return self.loc + (W @ eps_w.unsqueeze(-1)).squeeze(-1) + D.sqrt() * eps_d

    def _logdet(self):
        diag = self._capacitance_tril.diagonal(dim1=-2, dim2=-1)
        return 2 * diag.log().sum(-1) + self._unbroadcasted_cov_diag.log().sum(-1)

    def _mahalanobis(self, x):
        """x^T (W W^T + D)^-1 x by the Woodbury identity."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        wt_dinv_x = ((W.mT / D.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
        return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(self._capacitance_tril, wt_dinv_x)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = self._mahalanobis(value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + m)

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h


def _check_lowrank_shapes(loc, cov_factor, cov_diag):
    if loc.dim() < 1:
        raise ValueError("loc must be at least one-dimensional.")
    n = loc.shape[-1]
    if cov_factor.dim() < 2:
        raise ValueError("cov_factor must be at least two-dimensional, with optional leading "
                         "batch dimensions")
    if tuple(cov_factor.shape[-2:-1]) != (n,):
        raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m")
    if tuple(cov_diag.shape[-1:]) != (n,):
        raise ValueError(f"cov_diag must be a batch of vectors with shape {loc.shape[-1:]}")
