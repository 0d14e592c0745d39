"""``parametrizations.orthogonal``'s parametrization: an orthogonal (unitary) matrix,
or batch of them, from an unconstrained one by the matrix exponential or the Cayley
map of a skew-Hermitian matrix, or by a product of Householder reflectors; with the
dynamic trivialization, the result multiplies a stored orthogonal ``base``."""
import enum

import numpy as np

from ... import _factories, _grad_mode
from ..._ops import FUNCTIONS
from ..modules.module import Module

_F = FUNCTIONS


class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eye = _factories.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * float(np.finfo(Q.numpy().dtype).eps)
    return bool(_F["allclose"](Q.mH @ Q, eye, atol=eps))


def _qr_raw(A):
    """LAPACK geqrf of each matrix of ``A`` (an ndarray): the reflectors below the
    diagonal with R on and above it, and the scalar factors tau."""
    flat = A.reshape(-1, *A.shape[-2:])
    pairs = [np.linalg.qr(m, mode="raw") for m in flat]
    packed = np.stack([h.T for h, _ in pairs]).reshape(A.shape)
    taus = np.stack([t for _, t in pairs]).reshape(A.shape[:-2] + (min(A.shape[-2:]),))
    return packed, taus


def _make_orthogonal(A):
    """The Q of A = QR with diag(R) real and non-negative (A tall)."""
    Q, R = _linalg().qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _linalg():
    from ... import linalg
    return linalg


def householder_product(A, tau):
    """The first columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H with v_i column i of
    ``A`` below the diagonal and 1 on it (differentiable, composed of matmuls)."""
    n, k = A.size(-2), A.size(-1)
    V = A.tril(-1) + _factories.eye(n, k, dtype=A.dtype)
    Q = _factories.eye(n, k, dtype=A.dtype).expand(*A.shape[:-2], n, k)
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mH @ Q))
    return Q


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        transposed = X.size(-2) < X.size(-1)
        if transposed:
            X = X.mT
        if self.orthogonal_map == _OrthMaps.householder:
            A = X.tril(diagonal=-1)
            Q = householder_product(A, 2.0 / (1.0 + (A * A).sum(dim=-2)))
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            Q = self._skew_map(X)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def _skew_map(self, X):
        n, k = X.size(-2), X.size(-1)
        X = X.tril()
        if n != k:
            X = _F["cat"]([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
        A = X - X.mH
        if self.orthogonal_map == _OrthMaps.matrix_exp:
            Q = _F["matrix_exp"](A)
        else:
            eye = _factories.eye(n, dtype=A.dtype)
            Q = _linalg().solve(_F["add"](eye, A, alpha=-0.5), _F["add"](eye, A, alpha=0.5))
        return Q[..., :k] if n != k else Q

    def right_inverse(self, Q):
        with _grad_mode.no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q, n, k = Q.mT, k, n
        if not hasattr(self, "base"):
            return self._householder_inverse(Q, transpose)
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = _factories.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(_F["cat"]([Q, N], dim=-1))
        self.base = Q
        neg_id = _factories.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id

    def _householder_inverse(self, Q, transpose):
        if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
            raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                      "or the Cayley parametrizations when "
                                      "use_trivialization=False.")
        packed, tau = _qr_raw(Q.numpy())
        for i in range(tau.shape[-1]):
            sign = np.sign(packed[..., i, i])
            packed[..., i, i] = np.where(tau[..., i] == 0.0, -sign, sign)
        A = _factories.tensor(packed, dtype=Q.dtype)
        return A.mT if transpose else A
