"""``parametrizations.orthogonal``'s parametrization: an orthogonal (unitary) matrix,
or batch of them, from an unconstrained one by the matrix exponential or the Cayley
map of a skew-Hermitian matrix, or by a product of Householder reflectors; with the
dynamic trivialization, the result multiplies a stored orthogonal ``base``."""
import enum

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
    eps = 10.0 * n * _root().finfo(Q.dtype).eps
    return bool(_F["allclose"](Q.mH @ Q, eye, atol=eps))


def _make_orthogonal(A):
    """The Q of A = QR with diag(R) real and non-negative (A tall)."""
    X, tau = _root().geqrf(A)
    Q = _root().linalg.householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _root():
    import chainrule
    return chainrule


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
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _root().linalg.householder_product(A, tau)
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
            Q = _root().linalg.solve(_F["add"](eye, A, alpha=-0.5), _F["add"](eye, A, alpha=0.5))
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
        A, tau = _root().geqrf(Q)
        A.diagonal(dim1=-2, dim2=-1).sign_()
        A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
        return A.mT if transpose else A
