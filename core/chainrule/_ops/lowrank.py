"""Randomized low-rank SVD and PCA (``torch.svd_lowrank``, ``torch.pca_lowrank``): Halko,
Martinsson and Tropp's range finder with subspace iterations (arXiv:0909.4061, algorithms
4.4 and 5.1), composed from table ops, so differentiable. The random test matrix comes
from the default generator with the reference's draw (one ``randn(n, q)``), so a seeded
program gets the reference's factors.
"""
from .. import _dtypes, _factories
from ._common import public


def _floating(dtype):
    return dtype if dtype.is_floating_point or dtype.is_complex else _dtypes.float32


def _orthonormal(x):
    from .. import linalg                       # (imported after the table)
    return linalg.qr(x).Q


def _minus_mean(product, M, factor):
    """``product`` (A times ``factor``) less M times ``factor`` when a mean M is given."""
    return product if M is None else product - M.matmul(factor)


def approximate_basis(A, q, niter=2, M=None):
    """An (m, q) ``Q`` with orthonormal columns whose span holds most of ``A - M``'s range.

    >>> import chainrule as cr
    >>> _ = cr.manual_seed(0)
    >>> cr._ops.lowrank.approximate_basis(cr.randn(5, 4), 2).shape
    chainrule.Size([5, 2])
    """
    niter = 2 if niter is None else niter
    test = _factories.randn(A.shape[-1], q, dtype=_floating(A.dtype), device=A.device)
    basis = _orthonormal(_minus_mean(A.matmul(test), M, test))
    for _ in range(niter):
        back = _orthonormal(_minus_mean(A.mH.matmul(basis), None if M is None else M.mH, basis))
        basis = _orthonormal(_minus_mean(A.matmul(back), M, back))
    return basis


@public(method=False)
def svd_lowrank(A, q=6, niter=2, M=None):
    """An approximate rank-``q`` SVD ``(U, S, V)`` of ``A - M`` (``A ~ U diag(S) V^H``).

    >>> import chainrule as cr
    >>> _ = cr.manual_seed(0)
    >>> A = cr.randn(6, 2, dtype=cr.float64) @ cr.randn(2, 5, dtype=cr.float64)
    >>> U, S, V = cr.svd_lowrank(A, q=2)
    >>> bool(((U * S) @ V.mT - A).abs().max() < 1e-10)
    True
    """
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n                       # work on the tall transpose: a smaller B
    if wide:
        A, M = A.mH, None if M is None else M.mH
    basis = approximate_basis(A, q, niter, M)
    B = basis.mH.matmul(A)
    if M is not None:
        B = B - basis.mH.matmul(M)
    from .. import linalg
    U, S, Vh = linalg.svd(B, full_matrices=False)
    U, V = basis.matmul(U), Vh.mH
    return (V, S, U) if wide else (U, S, V)


@public(method=False)
def pca_lowrank(A, q=None, center=True, niter=2):
    """Principal components of ``A``'s rows: :func:`svd_lowrank` of ``A`` less its column
    means (``center``); ``q`` defaults to min(6, m, n).

    >>> import chainrule as cr
    >>> _ = cr.manual_seed(0)
    >>> U, S, V = cr.pca_lowrank(cr.randn(8, 3, dtype=cr.float64), q=2)
    >>> U.shape, S.shape, V.shape
    (chainrule.Size([8, 2]), chainrule.Size([2]), chainrule.Size([3, 2]))
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(-2, keepdim=True)
    return svd_lowrank(A, q, niter)
