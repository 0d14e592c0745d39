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


@public(method=False)
def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """The ``k`` largest (or smallest) eigenpairs ``(E, X)`` of the symmetric problem
    ``A x = E B x`` (``B`` the identity by default; ``X`` B-orthonormal). LOBPCG iterates
    towards them; this solves the problem densely with ``linalg.eigh`` instead, so the
    result is the converged one (eigenvectors up to sign) and gradients follow eigh's.
    The iteration's knobs (``iK``, ``niter``, ``tol``, ``method``, ``tracker``, ``ortho_*``)
    have nothing to tune; an initial ``X`` only sets ``k`` and ``n``.

    >>> import chainrule as cr
    >>> E, X = cr.lobpcg(cr.diag(cr.arange(1.0, 7.0, dtype=cr.float64)), k=2)
    >>> E.tolist(), X.shape
    ([6.0, 5.0], chainrule.Size([6, 2]))
    """
    from .. import linalg
    k = (X.shape[-1] if X is not None else 1) if k is None else k
    n = X.shape[-1] if X is not None else (k if n is None else n)
    if A.shape[-1] < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows "
                         f"(={A.shape[-1]}) is smaller than 3 x the number of requested "
                         f"eigenpairs (={n})")
    if B is None:
        values, vectors = linalg.eigh(A)
    else:                              # L^-1 A L^-T y = e y with B = L L^T, x = L^-T y
        L = linalg.cholesky(B)
        half = linalg.solve_triangular(L, A, upper=False)
        values, vectors = linalg.eigh(linalg.solve_triangular(L, half.mT, upper=False))
        vectors = linalg.solve_triangular(L.mT, vectors, upper=True)
    if largest is None or largest:
        values, vectors = values.flip(-1), vectors.flip(-1)
    return values[..., :k], vectors[..., :k]
