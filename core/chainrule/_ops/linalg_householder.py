"""Householder representations: ``linalg.householder_product`` (``orgqr``), ``ormqr``
and ``geqrf``.

householder_product and ormqr are composed from the table's ops (each reflector
``H_i = I - tau_i v_i v_i^H`` applied in turn), so their gradients in both ``input``
and ``tau`` are the reference's (it differentiates both). geqrf computes LAPACK's
compact QR (SciPy's LAPACK binding where importable, Note [optional scipy] in
_special.py, else the same Householder steps in NumPy); its outputs carry no graph
(the reference's backward for it raises "not implemented").
"""
import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ._common import FUNCTIONS, public, require_tensors
from .linalg_functions import LINALG, _check_lapack_kernel

F = FUNCTIONS
_NAME = "torch.linalg.householder_product"


def _check_householder(input, tau, name=_NAME):
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if input.shape[-2] < input.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if input.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != input.dtype:
        raise RuntimeError(f"{name}: tau dtype {_dtypes.scalar_type_name(tau._data.dtype)} does "
                           f"not match input dtype {_dtypes.scalar_type_name(input._data.dtype)}")


def _reflectors(input, k):
    """The Householder vectors: column i is 0 above row i, 1 at row i, input below."""
    m = input.shape[-2]
    eye = Tensor._wrap(np.eye(m, k, dtype=input._data.dtype))
    return F["tril"](input[..., :, :k], -1) + eye


def _apply_reflectors(V, tau, Q, reverse):
    """``H_0 H_1 ... H_{k-1} Q`` (``reverse``: the reflectors applied last to first), else
    ``(H_0 ... H_{k-1})^H Q`` (first to last, each with conj(tau))."""
    k = tau.shape[-1]
    order = range(k - 1, -1, -1) if reverse else range(k)
    for i in order:
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        t = t if reverse else t.conj()
        Q = Q - t * (v @ (v.mH @ Q))
    return Q


def householder_product(A, tau, *, out=None):
    """The first ``n`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H``, from the
    Householder vectors below the diagonal of ``A`` (m x n) and ``tau`` (k <= n);
    differentiable in both.

    >>> import chainrule as cr
    >>> A = cr.tensor([[1., 0.], [1., 1.]])
    >>> cr.linalg.householder_product(A, cr.tensor([1., 0.])).tolist()
    [[0.0, -1.0], [-1.0, 0.0]]
    """
    _check_householder(A, tau)
    _check_lapack_kernel(A, "orgqr_cpu")
    m, n = A.shape[-2], A.shape[-1]
    V = _reflectors(A, tau.shape[-1])
    Q = Tensor._wrap(np.broadcast_to(np.eye(m, n, dtype=A._data.dtype), A.shape).copy())
    return _apply_reflectors(V, tau, Q, reverse=True)


@public
def orgqr(input, tau):
    """``linalg.householder_product(input, tau)`` (LAPACK's name).

    >>> import chainrule as cr
    >>> cr.orgqr(cr.tensor([[1.], [0.]]), cr.tensor([0.])).tolist()
    [[1.0], [0.0]]
    """
    require_tensors("orgqr", ("input", "input2"), input, tau)
    return householder_product(input, tau)


@public
def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """``op(Q) @ other`` (``left``) or ``other @ op(Q)``, with ``Q`` the full m x m product of
    the reflectors in ``(input, tau)`` and ``op`` the conjugate transpose when
    ``transpose``; differentiable in all three.

    >>> import chainrule as cr
    >>> A, tau = cr.tensor([[1.], [1.]]), cr.tensor([1.])
    >>> cr.ormqr(A, tau, cr.tensor([[1.], [2.]])).tolist()
    [[-2.0], [-1.0]]
    """
    _check_householder(input, tau, "torch.ormqr")
    V = _reflectors(input, tau.shape[-1])
    if left:                 # H_0...H_{k-1} other, or its adjoint: reflectors in turn
        return _apply_reflectors(V, tau, other, reverse=not transpose)
    # other @ op(Q) = (op(Q)^H other^H)^H
    return _apply_reflectors(V, tau, other.mH, reverse=transpose).mH


@public
def geqrf(input, *, out=None):
    """LAPACK's QR in compact form ``(a, tau)``: R on and above the diagonal of ``a``, the
    Householder vectors below it; ``householder_product(a, tau)`` is Q. Not
    differentiable (neither is the reference's).

    >>> import chainrule as cr
    >>> a, tau = cr.geqrf(cr.tensor([[3.], [4.]], dtype=cr.float64))
    >>> a.tolist(), tau.tolist()
    ([[-5.0], [0.5]], [1.6])
    """
    from .. import return_types
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_lapack_kernel(input, "geqrf_cpu")
    data = np.asarray(input.detach().cpu().numpy())
    m, n = data.shape[-2:]
    a = np.array(data, copy=True).reshape((-1, m, n))
    taus = np.zeros((a.shape[0], min(m, n)), a.dtype)
    for b in range(a.shape[0]):
        a[b], taus[b] = _geqrf_one(a[b])
    return return_types.geqrf(Tensor._wrap(a.reshape(data.shape)),
                              Tensor._wrap(taus.reshape(data.shape[:-2] + (min(m, n),))))


def _geqrf_one(a):
    """One matrix's (a, tau): SciPy's LAPACK geqrf, else :func:`_householder_qr`."""
    try:
        from scipy.linalg import lapack
    except ImportError:
        return _householder_qr(a)
    fn = lapack.get_lapack_funcs("geqrf", (a,))
    qr, tau, _, _ = fn(a)
    return qr, tau


def _householder_qr(a):
    """LAPACK's unblocked geqrf (larfg + larf): column by column, the reflector that
    zeroes the column below the diagonal, applied to the columns right of it."""
    a = np.array(a, copy=True)
    m, n = a.shape
    tau = np.zeros(min(m, n), a.dtype)
    for i in range(min(m, n)):
        alpha, x = a[i, i], a[i + 1:, i]
        xnorm = np.linalg.norm(x)
        if xnorm == 0 and np.imag(alpha) == 0:
            continue                                        # H = I, tau = 0
        beta = -np.copysign(np.sqrt(abs(alpha) ** 2 + xnorm ** 2), np.real(alpha))
        tau[i] = (beta - alpha) / beta
        a[i + 1:, i] = x / (alpha - beta)
        a[i, i] = beta
        v = np.concatenate([[1.0], a[i + 1:, i]]).astype(a.dtype)
        trailing = a[i:, i + 1:]
        a[i:, i + 1:] = trailing - np.conj(tau[i]) * np.outer(v, v.conj() @ trailing)
    return a, tau


LINALG["householder_product"] = householder_product
