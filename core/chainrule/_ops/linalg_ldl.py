"""``linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve``: the Bunch-Kaufman LDL^T
factorization of symmetric (or Hermitian) matrices in LAPACK's compact form.

The factor comes from SciPy's LAPACK binding (?sytrf / ?hetrf) where SciPy is
importable (Note [optional scipy] in _special.py), else from a NumPy port of LAPACK's
unblocked ?sytf2 (symmetric matrices; the blocked LAPACK routine makes the same pivot
choices up to rounding). The solve unpacks the blocks itself. Like the reference, the
results carry no gradient (its derivatives for these raise "not implemented").
"""
import numpy as np

from .. import _dtypes, return_types
from ._common import kernel_error
from .._tensor import Tensor
from .linalg_functions import linalg

_ALPHA = (1 + np.sqrt(17.0)) / 8          # Bunch-Kaufman's growth bound


def _cabs1(v):
    return np.abs(np.real(v)) + np.abs(np.imag(v))


def _choose_pivot(a, k):
    """(kp, kstep): the Bunch-Kaufman choice for column k (0-based kp)."""
    n = a.shape[0]
    absakk = _cabs1(a[k, k])
    if k == n - 1:
        return k, 1, absakk == 0
    imax = k + 1 + int(np.argmax(_cabs1(a[k + 1:, k])))
    colmax = _cabs1(a[imax, k])
    if max(absakk, colmax) == 0:
        return k, 1, True
    if absakk >= _ALPHA * colmax:
        return k, 1, False
    rowmax = _cabs1(a[imax, k:imax]).max()
    if imax < n - 1:
        rowmax = max(rowmax, _cabs1(a[imax + 1:, imax]).max())
    if absakk >= _ALPHA * colmax * (colmax / rowmax):
        return k, 1, False
    if _cabs1(a[imax, imax]) >= _ALPHA * rowmax:
        return imax, 1, False
    return imax, 2, False


def _interchange(a, k, kk, kp, kstep):
    """Swap rows and columns kk and kp of the trailing lower triangle."""
    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    middle = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
    a[kp, kk + 1:kp] = middle
    a[[kk, kp], [kk, kp]] = a[[kp, kk], [kp, kk]]
    if kstep == 2:
        a[[k + 1, kp], k] = a[[kp, k + 1], k]


def _eliminate(a, k, kstep):
    """The rank-1 or rank-2 update of the trailing lower triangle by the pivot block."""
    n = a.shape[0]
    if kstep == 1:
        if k < n - 1:
            d11 = 1 / a[k, k]
            x = a[k + 1:, k].copy()
            a[k + 1:, k + 1:] -= d11 * np.outer(x, x)
            a[k + 1:, k] *= d11
        return
    if k < n - 2:
        d21 = a[k + 1, k]
        d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
        d21 = (1 / (d11 * d22 - 1)) / d21
        for j in range(k + 2, n):
            wk = d21 * (d11 * a[j, k] - a[j, k + 1])
            wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
            a[j:, j] -= a[j:, k] * wk + a[j:, k + 1] * wkp1
            a[j, k], a[j, k + 1] = wk, wkp1


def sytf2(a):
    """(LD lower, 1-based LAPACK pivots, info) of one symmetric matrix."""
    a = np.array(a, copy=True)
    n = a.shape[0]
    ipiv = np.zeros(n, np.int32)
    info, k = 0, 0
    while k < n:
        kp, kstep, singular = _choose_pivot(a, k)
        if singular and info == 0:
            info = k + 1
        kk = k + kstep - 1
        if kp != kk:
            _interchange(a, k, kk, kp, kstep)
        if not singular:
            _eliminate(a, k, kstep)
        ipiv[k:k + kstep] = kp + 1 if kstep == 1 else -(kp + 1)
        k += kstep
    return np.tril(a), ipiv, info


def _factor_one(a, hermitian):
    try:
        from scipy.linalg import lapack
    except ImportError:
        if hermitian and np.iscomplexobj(a):
            raise RuntimeError("linalg.ldl_factor: hermitian=True for complex matrices needs SciPy")
        return sytf2(a)
    name = "hetrf" if hermitian and np.iscomplexobj(a) else "sytrf"
    ldu, ipiv, info = lapack.get_lapack_funcs(name, (a,))(a, lower=1)
    return np.tril(ldu), ipiv.astype(np.int32), int(info)


def _check_ldl_dtype(A):
    """The reference's sytrf kernel: single and double precision only."""
    dtype = A._data.dtype
    if dtype.kind in "biu":
        raise RuntimeError("torch.linalg.ldl_factor_ex: Expected a floating point or complex "
                           f"tensor as input. Got {_dtypes.scalar_type_name(dtype)}")
    if dtype.itemsize == 2:
        raise kernel_error("ldl_factor_kernel_cpu")(dtype)


def _check_square(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"torch.linalg.{name}: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.{name}: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """``(LD, pivots, info)``: the compact LDL^T factorization of symmetric ``A`` (Hermitian
    with ``hermitian``) with Bunch-Kaufman pivoting, as LAPACK's sytrf/hetrf give it.

    >>> import chainrule as cr
    >>> LD, pivots, info = cr.linalg.ldl_factor_ex(cr.tensor([[4., 2.], [2., 3.]], dtype=cr.float64))
    >>> LD.tolist(), pivots.tolist(), info.item()
    ([[4.0, 0.0], [0.5, 2.0]], [1, 2], 0)
    """
    _check_square(A, "ldl_factor_ex")
    _check_ldl_dtype(A)
    data = np.asarray(A.detach().cpu().numpy())
    n = data.shape[-1]
    batch = data.shape[:-2]
    flat = data.reshape((-1, n, n))
    results = [_factor_one(m, hermitian) for m in flat]
    LD = np.stack([r[0] for r in results]).reshape(data.shape) if results else data.copy()
    pivots = np.stack([r[1] for r in results]).reshape(batch + (n,)) if results else \
        np.zeros(batch + (n,), np.int32)
    info = np.array([r[2] for r in results], np.int32).reshape(batch)
    if check_errors and np.any(info < 0):
        raise RuntimeError("torch.linalg.ldl_factor_ex: an argument had an illegal value")
    return return_types.linalg_ldl_factor_ex(Tensor._wrap(LD), Tensor._wrap(pivots),
                                             Tensor._wrap(info))


def ldl_factor(A, *, hermitian=False, out=None):
    """``(LD, pivots)`` of :func:`ldl_factor_ex`.

    >>> import chainrule as cr
    >>> cr.linalg.ldl_factor(cr.tensor([[0., 1.], [1., 0.]], dtype=cr.float64)).pivots.tolist()
    [-2, -2]
    """
    LD, pivots, _ = ldl_factor_ex(A, hermitian=hermitian)
    return return_types.linalg_ldl_factor(LD, pivots)


def _forward_solve(a, ipiv, b):
    """Solve P L D X = B in place (LAPACK's sytrs, first half, lower)."""
    n, k = a.shape[0], 0
    while k < n:
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] = b[k] / a[k, k]
            k += 1
            continue
        kp = -ipiv[k] - 1
        b[[k + 1, kp]] = b[[kp, k + 1]]
        b[k + 2:] -= np.outer(a[k + 2:, k], b[k]) + np.outer(a[k + 2:, k + 1], b[k + 1])
        akm1k = a[k + 1, k]
        akm1, ak = a[k, k] / akm1k, a[k + 1, k + 1] / akm1k
        denom = akm1 * ak - 1
        bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
        b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
        k += 2


def _backward_solve(a, ipiv, b):
    """Solve L^T P^T X = B in place (sytrs, second half)."""
    k = a.shape[0] - 1
    while k >= 0:
        step = 1 if ipiv[k] > 0 else 2
        b[k] -= a[k + 1:, k] @ b[k + 1:]
        if step == 2:
            b[k - 1] -= a[k + 1:, k - 1] @ b[k + 1:]
        kp = abs(ipiv[k]) - 1
        b[[k, kp]] = b[[kp, k]]
        k -= step


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Solve ``A X = B`` from :func:`ldl_factor`'s ``(LD, pivots)`` of ``A``.

    >>> import chainrule as cr
    >>> A = cr.tensor([[4., 2.], [2., 3.]], dtype=cr.float64)
    >>> LD, pivots = cr.linalg.ldl_factor(A)
    >>> cr.linalg.ldl_solve(LD, pivots, cr.tensor([[6.], [5.]], dtype=cr.float64)).tolist()
    [[1.0], [1.0]]
    """
    if hermitian and LD.is_complex():
        raise NotImplementedError("linalg.ldl_solve: hermitian=True for complex matrices is not "
                                  "supported")
    ld = np.asarray(LD.detach().cpu().numpy())
    piv = np.asarray(pivots.detach().cpu().numpy())
    b = np.asarray(B.detach().cpu().numpy())
    n = ld.shape[-1]
    shape = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    ld = np.broadcast_to(ld, shape + (n, n)).reshape((-1, n, n))
    piv = np.broadcast_to(piv, shape + (n,)).reshape((-1, n))
    x = np.array(np.broadcast_to(b, shape + b.shape[-2:]), dtype=np.result_type(ld, b))
    flat = x.reshape((-1,) + b.shape[-2:])
    for m, p, rhs in zip(ld, piv, flat):
        _forward_solve(m, p, rhs)
        _backward_solve(m, p, rhs)
    return Tensor._wrap(flat.reshape(x.shape))


for _fn in (ldl_factor, ldl_factor_ex, ldl_solve):      # out= by writes_out, as the others'
    linalg(_fn)
