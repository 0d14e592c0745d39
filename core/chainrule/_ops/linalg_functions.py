"""The functions of ``chainrule.linalg`` (argument checks with the reference's
messages, then the table ops of linalg.py or a composition of them) and the
top-level aliases torch has for them (det, inverse, svd, qr, cholesky, ...).

``LINALG`` holds the ``chainrule.linalg`` namespace; ``@public`` ones are also at the
top level (and Tensor methods).
"""
import functools
import inspect

import numpy as np

from .. import _dtypes
from .. import return_types
from .._grad_mode import no_grad
from .._batched import on_values, unwrap_all
from .._tensor import Tensor
from ._common import (FUNCTIONS, as_tensor_arg, kernel_error, numpy_spellings, public,
                      require_tensors, wrap_dim)
from ._registry import apply_op
from ._out import write_out
from .linalg import (CDIST, CHOLESKY, CHOLESKY_INVERSE, CHOLESKY_SOLVE, CROSS, EUCLIDEAN_DIST, DET, EIG, EIGH, INV, LSTSQ, LU, MATRIX_EXP, PINV, QR,
                     SLOGDET, SOLVE, SOLVE_TRIANGULAR, SVD, LinAlgError, _check_bmm_sizes,
                     _refuse_bool, decompose, lu_info)
from .shape import _expanded_shape

LINALG = {"LinAlgError": LinAlgError}


def linalg(fn=None, *, name=None):
    """Register a function of ``chainrule.linalg`` (Note [NumPy spellings of arguments];
    ``out=`` by ``writes_out`` where the signature has it)."""
    def register(f):
        public_name = name or f.__name__
        LINALG[public_name] = writes_out(f, f"linalg_{public_name}") if "out" in \
            inspect.signature(f).parameters else numpy_spellings(f)
        return f
    return register(fn) if fn is not None else register


def writes_out(fn, name=None):
    """``out=`` (Note [out= arguments]): the result is written into the given tensor (or
    tuple of tensors, for a named-tuple result) and returned; like the reference's
    LAPACK kernels, ``out`` must have the result's dtype. ``name``: the reference's
    name for the function in messages (``linalg_inv``)."""
    fn = numpy_spellings(fn)
    name = name or fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return write_out(name, out, list(args) + list(kwargs.values()),
                         lambda: fn(*args, **kwargs), same_dtype=True)
    wrapper.numpy_spellings = getattr(fn, "numpy_spellings", False)
    return wrapper


def _f(name):
    return FUNCTIONS[name]


# --- argument checks ----------------------------------------------------------------------
def _low_precision(fn):
    return lambda np_dtype: RuntimeError(f"{fn}: Low precision dtypes not supported. Got "
                                         f"{_dtypes.scalar_type_name(np_dtype)}")


def _float_or_double_only(np_dtype):
    return RuntimeError("This function doesn't handle types other than float and double")


def _no_complex_type(np_dtype):
    return RuntimeError(f"Unknown Complex ScalarType for {_dtypes.scalar_type_name(np_dtype)}")


# The reference's errors for the dtypes its LAPACK kernels lack (Note [kernels without a
# dtype]): fn -> (error for float16 and bfloat16, error for integers and bool or None
# for the common "Expected a floating point or complex tensor" message).
_LAPACK_DTYPES = {
    "linalg.cholesky": (kernel_error("cholesky_cpu"), None),
    "linalg.det": (kernel_error("lu_cpu"), None), "linalg.solve": (kernel_error("lu_cpu"), None),
    "linalg.lu": (kernel_error("lu_cpu"), kernel_error("lu_cpu")),
    "linalg.lu_factor": (kernel_error("lu_cpu"), kernel_error("lu_cpu")),
    "linalg.eig": (kernel_error("linalg_eig_out_cpu"), _no_complex_type),
    "linalg.eigvals": (kernel_error("linalg_eig_out_cpu"), _no_complex_type),
    "linalg.eigh": (kernel_error("linalg_eigh_cpu"), kernel_error("linalg_eigh_cpu")),
    "linalg.inv": (_low_precision("linalg.inv"), None),
    "linalg.slogdet": (_low_precision("linalg.slogdet"), None),
    "logdet": (_low_precision("logdet"), None),
    "linalg.qr": (kernel_error("geqrf_cpu"), None),
    "linalg.svd": (kernel_error("linalg_svd_cpu"), None),
    "linalg.solve_triangular": (kernel_error("triangular_solve_cpu"),
                                kernel_error("triangular_solve_cpu")),
    "torch.linalg.lstsq": (_float_or_double_only, _float_or_double_only),
    "linalg.matrix_exp": (None, None)}       # half precision: computed in float32


def _check_matrix_dtype(A, fn):
    dtype = A._data.dtype
    if dtype.kind == "c" or (dtype.kind == "f" and dtype.itemsize > 2):
        return
    low, integral = _LAPACK_DTYPES.get(fn, (None, None))
    if dtype.kind in "fV":
        if low is not None:
            raise low(dtype)
        return
    if integral is not None:
        raise integral(dtype)
    raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                       f"{_dtypes.scalar_type_name(dtype)}")


def _matrix(A, fn, square=True, arg="A"):
    """``A`` checked as a (batch of) floating or complex (square) matrices."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    shape = A._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"{fn}: The input tensor {arg} must have at least 2 dimensions.")
    _check_matrix_dtype(A, fn)
    if square and shape[-1] != shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{shape[-2]} by {shape[-1]} matrices")
    return A


def _same_dtype(A, B, fn):
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtypes.scalar_type_name(A._data.dtype)} and B of type "
                           f"{_dtypes.scalar_type_name(B._data.dtype)} instead")


def _is_vector_rhs(A, B):
    """The reference's rule: B is a (batch of) vector(s) when it is 1-D or has A's batch
    shape plus one dim."""
    b = B._data.shape
    return len(b) == 1 or (len(b) == A._data.ndim - 1 and b == A._data.shape[:-1])


def _check_rhs(A, B, fn):
    n, rows = A._data.shape[-1], B._data.shape[-2]
    if rows != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation AX = B "
                           f"({A._data.shape[-2]}x{n} and {rows}x{B._data.shape[-1]})")


def _mT(x):
    return x.transpose(-2, -1)


def _mH(x):
    return _mT(x).conj() if x.is_complex() else _mT(x)


# --- determinants and inverses -------------------------------------------------------------
@linalg
def det(A, *, out=None):
    """Determinant of a (batch of) square matrices.

    >>> import chainrule as cr
    >>> cr.linalg.det(cr.tensor([[2., 1.], [1., 3.]])).item()
    5.0...
    """
    return apply_op(DET, (_matrix(A, "linalg.det"),), {})


@linalg
def slogdet(A, *, out=None):
    """Sign (a unit complex number for complex input) and log of the absolute value of
    the determinant: ``det = sign * exp(logabsdet)``, a named pair.

    >>> import chainrule as cr
    >>> r = cr.linalg.slogdet(cr.tensor([[-2., 0.], [0., 3.]]))
    >>> r.sign.item(), round(r.logabsdet.item(), 4)
    (-1.0, 1.7918)
    """
    return return_types.linalg_slogdet(*decompose(SLOGDET, (_matrix(A, "linalg.slogdet"),), {}))


@linalg
def inv(A, *, out=None):
    """Inverse of a (batch of) square matrices; a singular one raises LinAlgError.

    >>> import chainrule as cr
    >>> cr.linalg.inv(cr.tensor([[2., 0.], [0., 4.]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return apply_op(INV, (_matrix(A, "linalg.inv"),), {})


@linalg
def inv_ex(A, *, check_errors=False, out=None):
    """``inv`` and an ``info`` tensor (0, or the order of the zero pivot) instead of an
    error for singular matrices (their inverse is then nan), unless ``check_errors``.

    >>> import chainrule as cr
    >>> cr.linalg.inv_ex(cr.tensor([[1., 2.], [2., 4.]])).info.item()
    2
    """
    A = _matrix(A, "linalg.inv")
    info = lu_info(A._data)
    if check_errors or not info.any():
        return return_types.linalg_inv_ex(inv(A), Tensor._wrap(info))
    failed = Tensor._wrap((info != 0)[..., None, None])
    eye = Tensor._wrap(np.eye(A._data.shape[-1], dtype=A._data.dtype))
    inverse = inv(_f("where")(failed, eye, A))       # identity stand-ins for the failures
    nan = Tensor._wrap(np.array(np.nan, A._data.dtype))
    return return_types.linalg_inv_ex(_f("where")(failed, nan, inverse), Tensor._wrap(info))


def _cholesky_info(a):
    """Per matrix: 0, or the order of its first leading minor that is not positive
    definite (checked matrix by matrix only when the batch fails)."""
    from .linalg import _not_pd_order
    try:
        np.linalg.cholesky(a)
        return np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        flat = a.reshape((-1,) + a.shape[-2:])
        return np.array([_not_pd_order(m) for m in flat], np.int32).reshape(a.shape[:-2])


@linalg
def solve(A, B, *, left=True, out=None):
    """X with ``A @ X = B`` (``X @ A = B`` when ``left=False``); B may be a (batch of)
    vector(s); batch dims broadcast.

    >>> import chainrule as cr
    >>> cr.linalg.solve(cr.tensor([[2., 0.], [0., 4.]]), cr.tensor([2., 2.])).tolist()
    [1.0, 0.5]
    """
    A = _matrix(A, "linalg.solve")
    B = as_tensor_arg(B, "B")
    _same_dtype(A, B, "linalg.solve")
    if not left:
        return _mT(solve(_mT(A), _mT(B)))
    if _is_vector_rhs(A, B):
        return _solve_matrix(A, B.unsqueeze(-1)).squeeze(-1)
    return _solve_matrix(A, B)


def _solve_matrix(A, B):
    _check_rhs(A, B, "linalg.solve")
    return apply_op(SOLVE, (A, B), {})


@linalg
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``solve`` and an ``info`` tensor (0 where A is invertible).

    >>> import chainrule as cr
    >>> cr.linalg.solve_ex(cr.eye(2), cr.ones(2)).info.item()
    0
    """
    A = _matrix(A, "linalg.solve")
    info = lu_info(A._data)
    if check_errors or not info.any():
        return return_types.linalg_solve_ex(solve(A, B, left=left), Tensor._wrap(info))
    raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is "
                      "singular.")


@linalg
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with ``A @ X = B`` for triangular A (only its ``upper`` or lower triangle is
    read; its diagonal is taken as ones when ``unitriangular``).

    >>> import chainrule as cr
    >>> A = cr.tensor([[2., 1.], [0., 4.]])
    >>> cr.linalg.solve_triangular(A, cr.tensor([[3.], [4.]]), upper=True).tolist()
    [[1.0], [1.0]]
    """
    A = _matrix(A, "linalg.solve_triangular")
    B = as_tensor_arg(B, "B")
    _same_dtype(A, B, "linalg.solve_triangular")
    if not left:
        return _mT(solve_triangular(_mT(A), _mT(B), upper=not upper,
                                    unitriangular=unitriangular))
    if B._data.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    _check_rhs(A, B, "linalg.solve_triangular")
    return apply_op(SOLVE_TRIANGULAR, (A, B), {"upper": bool(upper),
                                               "unitriangular": bool(unitriangular)})


# --- factorizations ----------------------------------------------------------------------------
@linalg
def cholesky(A, *, upper=False, out=None):
    """Cholesky factor L (lower, ``A = L @ L.mH``) of a Hermitian positive-definite
    matrix, or U = L.mH when ``upper``; only that triangle of A is read.

    >>> import chainrule as cr
    >>> cr.linalg.cholesky(cr.tensor([[4., 2.], [2., 5.]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    A = _matrix(A, "linalg.cholesky")
    return apply_op(CHOLESKY, (A,), {"upper": bool(upper)})


@linalg
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``cholesky`` and an ``info`` tensor (0, or the order of the first leading minor
    that is not positive-definite; that factor is then nan) instead of an error.

    >>> import chainrule as cr
    >>> cr.linalg.cholesky_ex(cr.tensor([[1., 2.], [2., 1.]])).info.item()
    2
    """
    A = _matrix(A, "linalg.cholesky")
    info = _cholesky_info(A._data)
    if check_errors or not info.any():
        return return_types.linalg_cholesky_ex(cholesky(A, upper=upper), Tensor._wrap(info))
    eye = np.eye(A._data.shape[-1], dtype=A._data.dtype)
    stand_in = np.where((info != 0)[..., None, None], eye, A._data)
    nan = np.where((info != 0)[..., None, None], np.nan, 0).astype(A._data.dtype)
    L = cholesky(Tensor._wrap(stand_in), upper=upper) + Tensor._wrap(nan)
    return return_types.linalg_cholesky_ex(L, Tensor._wrap(info))


_QR_MODES = ("reduced", "complete", "r")


@linalg
def qr(A, mode="reduced", *, out=None):
    """QR decomposition ``A = Q @ R`` (``mode``: "reduced", "complete", or "r" for R
    only, with an empty Q), a named pair.

    >>> import chainrule as cr
    >>> Q, R = cr.linalg.qr(cr.tensor([[3., 1.], [4., 2.]]))
    >>> [round(abs(v), 4) for v in R.diagonal().tolist()]
    [5.0, 0.4]
    """
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    A = _matrix(A, "linalg.qr", square=False)
    return return_types.linalg_qr(*decompose(QR, (A,), {"mode": mode}))


@linalg
def svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition ``A = U @ diag(S) @ Vh``, S descending, a named
    triple. Note [gauge of singular and eigen vectors] in linalg.py: where singular
    values repeat, a loss that depends on U or Vh has no gradient (inf/nan, with a
    warning); for complex A, one that depends on the vectors' phases raises.

    >>> import chainrule as cr
    >>> cr.linalg.svd(cr.tensor([[3., 0.], [0., -4.]])).S.tolist()
    [4.0, 3.0]
    """
    A = _matrix(A, "linalg.svd", square=False)
    return return_types.linalg_svd(*decompose(SVD, (A,), {"full_matrices": bool(full_matrices)}))


@linalg
def svdvals(A, *, driver=None, out=None):
    """The singular values, descending (their gradient needs no distinct values).

    >>> import chainrule as cr
    >>> cr.linalg.svdvals(cr.tensor([[0., 2.], [1., 0.]])).tolist()
    [2.0, 1.0]
    """
    A = _matrix(A, "linalg.svd", square=False)
    return decompose(SVD, (A,), {"full_matrices": False})[1]


def _uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


@linalg
def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending, real) and orthonormal eigenvectors of a Hermitian matrix,
    from its lower (``UPLO="L"``) or upper triangle, a named pair.

    >>> import chainrule as cr
    >>> cr.linalg.eigh(cr.tensor([[2., 1.], [1., 2.]])).eigenvalues.tolist()
    [1.0, 3.0]
    """
    A = _matrix(A, "linalg.eigh")
    return return_types.linalg_eigh(*decompose(EIGH, (A,), {"UPLO": _uplo(UPLO)}))


@linalg
def eigvalsh(A, UPLO="L", *, out=None):
    """Eigenvalues of a Hermitian matrix, ascending.

    >>> import chainrule as cr
    >>> cr.linalg.eigvalsh(cr.tensor([[2., 1.], [1., 2.]])).tolist()
    [1.0, 3.0]
    """
    A = _matrix(A, "linalg.eigh")
    return decompose(EIGH, (A,), {"UPLO": _uplo(UPLO)})[0]


@linalg
def eig(A, *, out=None):
    """Eigenvalues and eigenvectors (norm 1) of a square matrix, always complex.

    >>> import chainrule as cr
    >>> cr.linalg.eig(cr.tensor([[2., 0.], [0., 3.]])).eigenvalues.tolist()
    [(2+0j), (3+0j)]
    """
    A = _matrix(A, "linalg.eig")
    return return_types.linalg_eig(*decompose(EIG, (A,), {}))


@linalg
def eigvals(A, *, out=None):
    """Eigenvalues of a square matrix (complex).

    >>> import chainrule as cr
    >>> cr.linalg.eigvals(cr.tensor([[0., -1.], [1., 0.]])).tolist()
    [1j, -1j]
    """
    A = _matrix(A, "linalg.eigvals")
    return decompose(EIG, (A,), {})[0]


@linalg
def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Moore-Penrose pseudo-inverse; singular values below ``max(atol, rtol * largest)``
    count as zero (rtol defaults to eps * max(m, n) when neither is given).

    >>> import chainrule as cr
    >>> cr.linalg.pinv(cr.tensor([[2., 0.], [0., 0.]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    dtype = A._data.dtype
    if A._data.ndim < 2 or dtype.kind not in "fc" or dtype.itemsize == 2:
        raise RuntimeError(f"linalg.pinv({_dtypes.scalar_type_name(A._data.dtype)}"
                           f"{{{list(A._data.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    attrs = {"atol": _tolerance(atol), "rtol": _tolerance(rtol), "hermitian": bool(hermitian)}
    return apply_op(PINV, (A,), attrs)


def _tolerance(value):
    if isinstance(value, Tensor):
        return value._data
    return value


@linalg
def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of ``A @ X = B`` (the minimum-norm one when A is rank
    deficient), with the reference's ``residuals``, ``rank`` and ``singular_values``
    for each ``driver`` ("gelsy" by default, "gels", "gelsd", "gelss").

    >>> import chainrule as cr
    >>> A = cr.tensor([[1., 0.], [0., 1.], [0., 0.]])
    >>> cr.linalg.lstsq(A, cr.tensor([[1.], [2.], [3.]])).solution.tolist()
    [[1.0], [2.0]]
    """
    if driver is not None and driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    A = _matrix(A, "torch.linalg.lstsq", square=False)
    B = as_tensor_arg(B, "B")
    if not 0 <= A._data.ndim - B._data.ndim <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    vector = B._data.ndim == A._data.ndim - 1
    B2 = B.unsqueeze(-1) if vector else B
    if B2._data.shape[-2] != A._data.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    X = apply_op(LSTSQ, (A, B2), {"rcond": rcond})
    residuals, rank, values = _lstsq_extras(A, B2, X, rcond, driver or "gelsy")
    return return_types.linalg_lstsq(X.squeeze(-1) if vector else X, residuals, rank, values)


def _lstsq_extras(A, B, X, rcond, driver):
    """Residuals (m > n and full rank, drivers other than gelsy), rank (not for gels),
    singular values (gelsd, gelss)."""
    m, n = A._data.shape[-2:]
    empty = Tensor._wrap(np.zeros((0,), A._data.real.dtype))
    no_residuals = X.real.reshape(-1)[:0] if X.is_complex() else X.reshape(-1)[:0]
    with no_grad():
        s = svdvals(A)
        cut = (np.finfo(s._data.dtype).eps * max(m, n) if rcond is None else rcond) * \
            (s._data[..., :1] if n and m else 0)
        rank = np.sum(s._data > cut, axis=-1).astype(np.int64)
    full = bool(np.all(rank == min(m, n)))
    residuals = no_residuals          # empty, but part of the graph, like the reference's
    if driver != "gelsy" and m > n and full:
        r = _f("matmul")(A, X) - B
        residuals = (r.abs() ** 2).sum(-2) if r.is_complex() else (r * r).sum(-2)
    return (residuals, Tensor._wrap(rank) if driver != "gels" else
            Tensor._wrap(np.zeros((0,), np.int64)), s if driver in ("gelsd", "gelss") else empty)


@linalg
def matrix_exp(A):
    """The matrix exponential ``sum_k A^k / k!``.

    >>> import chainrule as cr
    >>> cr.linalg.matrix_exp(cr.zeros(2, 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return apply_op(MATRIX_EXP, (_matrix(A, "linalg.matrix_exp"),), {})


@linalg
def matrix_power(A, n, *, out=None):
    """``A`` to the integer power ``n`` (by repeated squaring; a negative ``n`` inverts
    first, ``n = 0`` gives the identity).

    >>> import chainrule as cr
    >>> cr.linalg.matrix_power(cr.tensor([[1., 1.], [0., 1.]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    A = _matrix_any_dtype(A, "linalg.matrix_power")
    if n == 0:
        eye = np.broadcast_to(np.eye(A._data.shape[-1], dtype=A._data.dtype), A._data.shape)
        return Tensor._wrap(eye.copy())
    if n < 0:
        A, n = inv(A), -n
    result, square = None, A
    while n:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if n:
            square = square @ square
    return result


def _matrix_any_dtype(A, fn):
    shape = A._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{shape[-2]} by {shape[-1]} matrices")
    return A



def _lu_input(A, pivot, fn):
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    if not isinstance(A, Tensor) or A._data.ndim < 2:
        shape = list(A.shape) if isinstance(A, Tensor) else []
        raise RuntimeError(f"{fn}: Expected tensor with 2 or more dimensions. Got size: {shape} "
                           "instead")
    return _matrix(A, fn, square=False)


@linalg
def lu(A, *, pivot=True, out=None):
    """LU decomposition with partial pivoting, ``A = P @ L @ U`` (L unit lower
    triangular, U upper triangular), a named triple; batched, any shape.

    >>> import chainrule as cr
    >>> P, L, U = cr.linalg.lu(cr.tensor([[1., 2.], [3., 4.]]))
    >>> [[round(v, 4) for v in row] for row in U.tolist()]
    [[3.0, 4.0], [0.0, 0.6667]]
    """
    A = _lu_input(A, pivot, "linalg.lu")
    return return_types.linalg_lu(*decompose(LU, (A,), {}))


@linalg
def lu_factor(A, *, pivot=True, out=None):
    """The compact LU: L's strict lower triangle and U in one matrix, and LAPACK's
    1-based row-swap ``pivots`` (int32).

    >>> import chainrule as cr
    >>> cr.linalg.lu_factor(cr.tensor([[1., 2.], [3., 4.]])).pivots.tolist()
    [2, 2]
    """
    LU_, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return return_types.linalg_lu_factor(LU_, pivots)


@linalg
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``lu_factor`` and ``info`` (0, or the 1-based index of the first zero on U's
    diagonal).

    >>> import chainrule as cr
    >>> cr.linalg.lu_factor_ex(cr.tensor([[1., 2.], [2., 4.]])).info.item()
    2
    """
    from .linalg import _lu_packed
    A = _lu_input(A, pivot, "linalg.lu_factor")
    P, L, U = decompose(LU, (A,), {})
    m, n = A._data.shape[-2:]
    k = min(m, n)
    lower = _f("tril")(L, -1)
    if n > k:
        lower = _f("cat")([lower, _zeros(L, L.shape[:-1] + (n - k,))], -1)
    upper = U if m == k else _f("cat")([U, _zeros(U, U.shape[:-2] + (m - k, n))], -2)
    pivots = on_values(lambda a: _lu_packed(a)[1], A)       # under vmap: in one call
    info = on_values(lu_info, A)
    if check_errors and unwrap_all(info)[0]._data.any():
        raise LinAlgError("linalg.lu_factor: U is singular")
    return return_types.linalg_lu_factor_ex(lower + upper, pivots, info)


def _zeros(like, shape):
    return Tensor._wrap(np.zeros(tuple(shape), like._data.dtype))


@linalg
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with ``A @ X = B`` from ``lu_factor``'s output (``A^H`` when ``adjoint``;
    ``X @ A = B`` when not ``left``).

    >>> import chainrule as cr
    >>> A = cr.tensor([[2., 1.], [1., 3.]])
    >>> LU, piv = cr.linalg.lu_factor(A)
    >>> [round(v, 4) for v in cr.linalg.lu_solve(LU, piv, cr.tensor([[3.], [4.]])).flatten().tolist()]
    [1.0, 1.0]
    """
    if not left:
        return _mH(lu_solve(LU, pivots, _mH(B), adjoint=not adjoint))
    from .linalg import _permutation_from_pivots
    P = Tensor._wrap(_permutation_from_pivots(pivots._data, LU.shape[-1], LU._data.dtype))
    if adjoint:
        y = solve_triangular(_mH(LU), B, upper=False)
        return P @ solve_triangular(_mH(LU), y, upper=True, unitriangular=True)
    y = solve_triangular(LU, _mT(P) @ B, upper=False, unitriangular=True)
    return solve_triangular(LU, y, upper=True)

# --- norms, condition number, rank ------------------------------------------------------------
@linalg
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector ``ord``-norm over ``dim`` (all elements by default).

    >>> import chainrule as cr
    >>> cr.linalg.vector_norm(cr.tensor([3., 4.])).item()
    5.0
    """
    return _f("norm")(x, p=float(ord), dim=dim, keepdim=keepdim, dtype=dtype, out=out)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf"))


@linalg
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norms over the two dims ``dim``: "fro", "nuc" (sum of singular values),
    2 / -2 (largest / smallest singular value), 1 / -1 (max / min column sum of |A|),
    inf / -inf (max / min row sum).

    >>> import chainrule as cr
    >>> cr.linalg.matrix_norm(cr.tensor([[1., -2.], [3., 4.]]), ord=1).item()
    6.0
    """
    fn = "linalg.matrix_norm"
    if not isinstance(A, Tensor) or A._data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A._data.dtype.kind in "biu":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtypes.scalar_type_name(A._data.dtype)}")
    d0, d1 = _matrix_dims(A, dim, fn)
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"{fn}: Order {ord} not supported.")
    if dtype is not None:
        A = A.to(_dtypes.to_dtype(dtype))
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        values = svdvals(_f("movedim")(A, (d0, d1), (-2, -1)))
        out = values.sum(-1) if ord == "nuc" else (values.amax(-1) if ord == 2 else values.amin(-1))
        return _keep(out, (d0, d1), A._data.ndim) if keepdim else out
    rows, cols = (d0, d1) if abs(ord) == 1 else (d1, d0)
    summed = A.abs().sum(rows, keepdim=True)
    out = summed.amax(cols, keepdim=True) if ord > 0 else summed.amin(cols, keepdim=True)
    return out if keepdim else out.squeeze((d0, d1))


def _matrix_dims(A, dim, fn):
    nd = A._data.ndim
    if len(dim) != 2:
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = (d % nd for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _keep(out, dims, nd):
    for d in sorted(dims):
        out = out.unsqueeze(d)
    return out


@linalg
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm (1-D input, an int ``dim``, or no ``ord`` and no ``dim``: all
    elements) or a matrix norm (2-D input or a 2-tuple ``dim``).

    >>> import chainrule as cr
    >>> cr.linalg.norm(cr.tensor([[3., 0.], [0., 4.]]), "nuc").item()
    7.0
    """
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    nd = A._data.ndim
    if nd not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {nd}D.")
    if nd == 1 and not isinstance(ord, str):
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)


@linalg
def cond(A, p=None, *, out=None):
    """Condition number: largest over smallest singular value (``p`` None or 2; -2 the
    reverse), or ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` for the other orders.

    >>> import chainrule as cr
    >>> cr.linalg.cond(cr.tensor([[4., 0.], [0., 2.]])).item()
    2.0
    """
    if not isinstance(A, Tensor) or A._data.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p in (None, 2, -2):
        s = svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


@linalg
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """Number of singular values above ``max(atol, rtol * largest)`` (int64, no
    gradient); ``tol`` is the old spelling of ``atol``.

    >>> import chainrule as cr
    >>> cr.linalg.matrix_rank(cr.tensor([[1., 2.], [2., 4.]])).item()
    1
    """
    if not isinstance(A, Tensor) or A._data.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    if A._data.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise _float_or_double_only(A._data.dtype)
    from .linalg import _pinv_threshold
    atol = atol if tol is None else tol
    with no_grad():
        s = eigvalsh(A).abs() if hermitian else svdvals(A)
    m, n = A._data.shape[-2:]
    cut = _pinv_threshold(s._data, _tolerance(atol), _tolerance(rtol), m, n)
    return Tensor._wrap(np.sum(s._data > cut, axis=-1).astype(np.int64))


# --- products ---------------------------------------------------------------------------------
@linalg
def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices, in the cheapest order (the first may be 1-D,
    a row; the last 1-D, a column).

    >>> import chainrule as cr
    >>> cr.linalg.multi_dot([cr.ones(2), cr.ones(2, 3), cr.ones(3)]).item()
    6.0
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    _check_chain(tensors)
    first_vec, last_vec = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = [tensors[0].unsqueeze(0) if first_vec else tensors[0]] + tensors[1:-1] + \
        [tensors[-1].unsqueeze(-1) if last_vec else tensors[-1]]
    out = _chain_product(mats, _chain_order(mats), 0, len(mats) - 1)
    if first_vec:
        out = out.squeeze(0)
    return out.squeeze(-1) if last_vec else out


def _check_chain(tensors):
    last = len(tensors) - 1
    for i, t in enumerate(tensors):
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, last))
        if not ok:
            where = "first" if i == 0 else ("last" if i == last else None)
            if where:
                raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got "
                                   f"{t.ndim}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    dtypes = [_dtypes.cpp_type_name(t._data.dtype) for t in tensors]
    for i, name in enumerate(dtypes):             # before any shape (Note [product checks])
        if name != dtypes[0]:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {dtypes[0]} and tensor {i} {name}")
    for i in range(last):
        a, b = tensors[i], tensors[i + 1]
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(a.shape)} and {list(b.shape)} cannot be multiplied")


def _chain_order(mats):
    """split[i][j]: where the cheapest product of mats[i..j] splits (dynamic programming
    over the chain's dims)."""
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    n = len(mats)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = float("inf")
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain_product(mats, split, i, j):
    """The product of mats[i..j] in the order ``split`` gives (an explicit stack, no
    recursion over the chain)."""
    stack, results = [(i, j, False)], []
    while stack:
        a, b, ready = stack.pop()
        if a == b:
            results.append(mats[a])
        elif ready:
            right, left = results.pop(), results.pop()
            results.append(left @ right)
        else:
            k = split[a][b]
            stack.extend([(a, b, True), (k + 1, b, False), (a, k, False)])
    return results[0]


@linalg
def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim``; batch dims broadcast.

    >>> import chainrule as cr
    >>> cr.linalg.cross(cr.tensor([1., 0., 0.]), cr.tensor([0., 1., 0.])).tolist()
    [0.0, 0.0, 1.0]
    """
    require_tensors("cross", ("input", "other"), input, other)
    return _cross(input, other, dim, "linalg.cross")


def _cross(input, other, dim, fn):
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected scalar type {_dtypes.scalar_type_name(input._data.dtype)}"
                           f" but found {_dtypes.scalar_type_name(other._data.dtype)}")
    a, b = input._data.shape, other._data.shape
    if len(a) != len(b):
        raise RuntimeError(f"{fn}: inputs must have the same number of dimensions.")
    nd = len(a)
    d = dim % nd if nd else 0
    sa = a[d - nd + len(a)] if d - nd + len(a) >= 0 else 1
    sb = b[d - nd + len(b)] if d - nd + len(b) >= 0 else 1
    if sa != 3 or sb != 3:
        raise RuntimeError(f"{fn}: inputs dimension {dim} must have length 3. Got {sa} and {sb}")
    return apply_op(CROSS, (input, other), {"dim": d - nd})


@linalg
def vecdot(x, y, *, dim=-1, out=None):
    """``sum(conj(x) * y)`` along ``dim`` (batch dims broadcast).

    >>> import chainrule as cr
    >>> cr.linalg.vecdot(cr.tensor([1., 2.]), cr.tensor([3., 4.])).item()
    11.0
    """
    if x._data.dtype.kind not in "fcV":
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_dtypes.scalar_type_name(x._data.dtype)}")
    if x._data.dtype != y._data.dtype:
        names = [_dtypes.scalar_type_name(t._data.dtype) for t in (x, y)]
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {names[0]} and y of type {names[1]} instead")
    x = x.conj() if x.is_complex() else x
    return (x * y).sum(dim)


@linalg
def matmul(input, other, *, out=None):
    """``chainrule.matmul``.

    >>> import chainrule as cr
    >>> cr.linalg.matmul(cr.ones(2, 3), cr.ones(3)).tolist()
    [3.0, 3.0]
    """
    return _f("matmul")(input, other)


@linalg
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of each matrix in a batch (the last two dims by default; a view).

    >>> import chainrule as cr
    >>> cr.linalg.diagonal(cr.eye(2).expand(3, 2, 2)).shape
    chainrule.Size([3, 2])
    """
    return _f("diagonal")(A, offset, dim1, dim2)


@linalg
def tensorinv(A, ind=2, *, out=None):
    """The inverse of A for ``tensordot(A, X, ind)``: A reshaped to a square matrix
    (first ``ind`` dims by the rest), inverted and reshaped back.

    >>> import chainrule as cr
    >>> cr.linalg.tensorinv(cr.eye(4).reshape(4, 2, 2), ind=1).shape
    chainrule.Size([2, 2, 4])
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = A.shape[:ind], A.shape[ind:]
    m, n = int(np.prod(rows)), int(np.prod(cols))
    if m != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {n} != {m}")
    return inv(A.reshape(m, -1)).reshape(tuple(cols) + tuple(rows))


@linalg
def tensorsolve(A, B, dims=None, *, out=None):
    """X with ``tensordot(A, X, X.ndim) = B``.

    >>> import chainrule as cr
    >>> cr.linalg.tensorsolve(cr.eye(6).reshape(2, 3, 6), cr.ones(2, 3)).shape
    chainrule.Size([6])
    """
    if dims is not None:
        nd = A.ndim
        order = [d % nd for d in dims]
        A = A.permute(*([d for d in range(nd) if d not in order] + order))
    rest = A.shape[B.ndim:]
    n = int(np.prod(rest))
    return solve(A.reshape(-1, n), B.reshape(-1)).reshape(tuple(rest))


@linalg
def vander(x, *, N=None):
    """The Vandermonde matrix with columns ``x ** 0, x ** 1, ..., x ** (N - 1)``.

    >>> import chainrule as cr
    >>> cr.linalg.vander(cr.tensor([1., 2., 3.])).tolist()
    [[1.0, 1.0, 1.0], [1.0, 2.0, 4.0], [1.0, 3.0, 9.0]]
    """
    dtype = x._data.dtype
    if dtype.kind == "b" or (dtype.kind in "fV" and dtype.itemsize == 2):
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {_dtypes.scalar_type_name(dtype)}")
    if dtype.kind in "iu":
        x = x.to(_dtypes.int64)            # the reference's powers are a cumulative product
    n = x.shape[-1] if N is None else N
    cols = [x * 0 + 1] + [x ** k for k in range(1, n)]
    return _f("stack")(cols[:n], -1)


# === top-level aliases (torch.det, torch.svd, ...) ==============================================
@public
def det(input):
    """``linalg.det``.

    >>> import chainrule as cr
    >>> cr.det(cr.eye(3) * 2).item()
    8.0
    """
    return LINALG["det"](input)


@public
def logdet(input):
    """log(det(input)): nan where the determinant is negative, -inf where it is 0
    (complex input: the complex logarithm).

    >>> import chainrule as cr
    >>> round(cr.logdet(cr.eye(2) * 3).item(), 4)
    2.1972
    """
    sign, logabsdet = decompose(SLOGDET, (_matrix(input, "logdet"),), {})
    with np.errstate(divide="ignore", invalid="ignore"):
        return logabsdet + sign.log() if input.is_complex() else \
            logabsdet + _f("log")(sign)


@public
def slogdet(input):
    """``linalg.slogdet`` (the named pair ``sign, logabsdet``).

    >>> import chainrule as cr
    >>> cr.slogdet(cr.eye(2) * -1).sign.item()
    1.0
    """
    return return_types.slogdet(*LINALG["slogdet"](input))


@public
@writes_out
def inverse(input, *, out=None):
    """``linalg.inv``.

    >>> import chainrule as cr
    >>> cr.inverse(cr.eye(2) * 4).tolist()
    [[0.25, 0.0], [0.0, 0.25]]
    """
    return LINALG["inv"](input)


@public(name="cholesky")
@functools.partial(writes_out, name="cholesky")
def cholesky_upper_flag(input, upper=False, *, out=None):
    """The Cholesky factor (``upper``: U with A = U^H U), like ``linalg.cholesky``.

    >>> import chainrule as cr
    >>> cr.cholesky(cr.eye(2) * 4, upper=True).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """
    try:
        return LINALG["cholesky"](input, upper=upper)
    except LinAlgError as e:
        raise LinAlgError(str(e).replace("linalg.cholesky:", "cholesky:", 1)) from None


@public
@writes_out
def cholesky_solve(input, input2, upper=False, *, out=None):
    """X with ``A @ X = input`` for A given by its Cholesky factor ``input2`` (lower,
    or upper when ``upper``).

    >>> import chainrule as cr
    >>> cr.cholesky_solve(cr.ones(2, 1), cr.eye(2) * 2).tolist()
    [[0.25], [0.25]]
    """
    require_tensors("cholesky_solve", ("input", "input2"), input, input2)
    b, L = input, input2
    for name, x in (("b", b), ("u", L)):
        if x.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {x.ndim} "
                               "dimensions instead")
    if b._data.dtype != L._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtypes.scalar_type_name(b._data.dtype)} and A of type "
                           f"{_dtypes.scalar_type_name(L._data.dtype)} instead.")
    if b.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{L.shape[-2]} by {L.shape[-1]} but each b matrix is "
                           f"{b.shape[-2]} by {b.shape[-1]}")
    _check_lapack_kernel(b, "cholesky_solve_cpu")
    return apply_op(CHOLESKY_SOLVE, (b, L), {"upper": bool(upper)})


def _check_lapack_kernel(x, kernel):
    if not (x.is_floating_point() or x.is_complex()) or x._data.dtype.itemsize < 4:
        raise kernel_error(kernel)(x._data.dtype)


@public
@writes_out
def cholesky_inverse(input, upper=False, *, out=None):
    """The inverse of A from its Cholesky factor ``input``.

    >>> import chainrule as cr
    >>> cr.cholesky_inverse(cr.eye(2) * 2).tolist()
    [[0.25, 0.0], [0.0, 0.25]]
    """
    if input.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they "
                           f"are {input.shape[-2]} by {input.shape[-1]} matrices")
    _check_lapack_kernel(input, "cholesky_inverse_out_cpu")
    return apply_op(CHOLESKY_INVERSE, (input,), {"upper": bool(upper)})


@public(name="qr")
@writes_out
def qr_some(input, some=True, *, out=None):
    """``linalg.qr`` with mode "reduced" (``some``) or "complete".

    >>> import chainrule as cr
    >>> cr.qr(cr.ones(3, 2), some=False).Q.shape
    chainrule.Size([3, 3])
    """
    return return_types.qr(*LINALG["qr"](input, "reduced" if some else "complete"))


@public(name="svd")
@writes_out
def svd_v(input, some=True, compute_uv=True, *, out=None):
    """The old SVD: ``U, S, V`` with ``input = U @ diag(S) @ V.mH`` (``some``: reduced).
    Without ``compute_uv``, U and V are zeros (full size) and only S has a gradient.

    >>> import chainrule as cr
    >>> U, S, V = cr.svd(cr.tensor([[3., 0.], [0., 4.]]))
    >>> S.tolist()
    [4.0, 3.0]
    """
    A = _matrix(input, "linalg.svd", square=False)
    if not compute_uv:
        m, n = A._data.shape[-2:]
        batch, dtype = A._data.shape[:-2], A._data.dtype
        return return_types.svd(Tensor._wrap(np.zeros(batch + (m, m), dtype)), svdvals(A),
                                Tensor._wrap(np.zeros(batch + (n, n), dtype)))
    U, S, Vh = LINALG["svd"](A, full_matrices=not some)
    return return_types.svd(U, S, _mH(Vh))


@public
def pinverse(input, rcond=1e-15):
    """``linalg.pinv`` with relative tolerance ``rcond``.

    >>> import chainrule as cr
    >>> cr.pinverse(cr.eye(2) * 2).tolist()
    [[0.5, 0.0], [0.0, 0.5]]
    """
    return LINALG["pinv"](input, rtol=rcond)


public(matrix_exp)


@public
def matrix_power(input, n, *, out=None):
    """``chainrule.matrix_power`` (``input``, the reference's name there): see
    ``linalg.matrix_power``.

    >>> import chainrule as cr
    >>> cr.matrix_power(cr.tensor([[2., 0.], [0., 1.]]), 2).tolist()
    [[4.0, 0.0], [0.0, 1.0]]
    """
    return LINALG["matrix_power"](input, n, out=out)


@public(method=False)
@writes_out
def chain_matmul(*matrices, out=None):
    """The product of 2-D matrices in the cheapest order (``linalg.multi_dot``).

    >>> import chainrule as cr
    >>> cr.chain_matmul(cr.ones(2, 3), cr.ones(3, 2)).tolist()
    [[3.0, 3.0], [3.0, 3.0]]
    """
    if len(matrices) == 1:
        return matrices[0]
    return multi_dot(matrices)


@public(name="cross")
@writes_out
def cross_dim(input, other, dim=None, *, out=None):
    """Cross product along ``dim`` (by default the first dim of size 3, as the reference
    does today; ``linalg.cross`` uses the last).

    >>> import chainrule as cr
    >>> cr.cross(cr.tensor([[0.], [1.], [0.]]), cr.tensor([[0.], [0.], [1.]])).tolist()
    [[1.0], [0.0], [0.0]]
    """
    require_tensors("cross", ("input", "other"), input, other)
    if dim is None:
        sizes = np.broadcast_shapes(input._data.shape, other._data.shape)
        dim = next((d for d, n in enumerate(sizes) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross(input, other, dim, "linalg.cross")


# === the matmul family ===========================================================================
def _scaled_sum(input, product, beta, alpha):
    """beta * input + alpha * product, input broadcast to the product's shape (beta = 0
    ignores input, nan and inf included, like the reference)."""
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        if input.requires_grad:     # a zero gradient for input, whatever its values
            input = _f("where")(Tensor._wrap(np.zeros((), bool)), input.expand(*product.shape),
                                product * 0)
            return product + input
        return product
    input = input.expand(*product.shape)
    return product + (input if beta == 1 else input * beta)


@public
@writes_out
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``.

    >>> import chainrule as cr
    >>> cr.addmm(cr.ones(2, 2), cr.ones(2, 3), cr.ones(3, 2), alpha=2).tolist()
    [[7.0, 7.0], [7.0, 7.0]]
    """
    _check_addmm_dtypes(input, mat1, mat2)
    if beta == 1 and alpha == 1 and _plain_addmm(input, mat1, mat2):
        _refuse_bool(mat1, "addmm_impl_cpu_")     # (the mm below refuses it for the rest)
        from .nn import ADDMM                      # AddmmBackward0 (Note [linear's graph])
        return apply_op(ADDMM, (input, mat1, mat2), {})
    if mat1.ndim == mat2.ndim == 2 and mat1.shape[1] == mat2.shape[0]:
        _check_expands(input, (mat1.shape[0], mat2.shape[1]))      # before mm's bool kernel
    return _scaled_sum(input, _f("mm")(mat1, mat2), beta, alpha)


def _check_expands(input, sizes):
    """Note [product checks]: the input of addmm, addbmm, baddbmm must expand to the
    product's shape, which the reference checks before its kernel does anything."""
    if input.ndim <= len(sizes):
        _expanded_shape(input._data.shape, sizes, len(sizes) - input.ndim)


def _plain_addmm(input, mat1, mat2):
    """Matrices that multiply, and an input that broadcasts to their product."""
    a, b, c = input._data.shape, mat1._data.shape, mat2._data.shape
    if len(b) != 2 or len(c) != 2 or b[1] != c[0] or len(a) > 2:
        return False
    return all(n in (1, m) for n, m in zip(a[::-1], (c[1], b[0])))


def _check_addmm_dtypes(input, mat1, mat2):
    """The reference checks dtypes before shapes (an in-place ``x_long.addmm_``), input's
    against mat2's first."""
    names = [_dtypes.scalar_type_name(t._data.dtype) for t in (input, mat1, mat2)]
    if names[0] != names[2]:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {names[0]} and "
                           f"{names[2]}")
    if names[1] != names[2]:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {names[1]} and "
                           f"{names[2]}")


@public
@writes_out
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``.

    >>> import chainrule as cr
    >>> cr.addmv(cr.ones(2), cr.ones(2, 3), cr.ones(3)).tolist()
    [4.0, 4.0]
    """
    if _addmv_sizes_differ(input, mat, vec, beta):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    names = [_dtypes.scalar_type_name(t._data.dtype) for t in (input, mat, vec)]
    if len(set(names)) > 1:        # sizes are checked first, then all three dtypes at once
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{names[0]}, {names[1]}, and {names[2]}")
    return _scaled_sum(input, _f("mv")(mat, vec), beta, alpha)


def _addmv_sizes_differ(input, mat, vec, beta):
    """mat's columns against vec, or a 1-D input (unless beta is 0) against mat's rows."""
    if mat.ndim != 2 or vec.ndim != 1:
        return False                    # mv's own error
    rows, cols = mat.shape
    return cols != vec.shape[0] or beta != 0 and input.ndim == 1 and \
        input.shape[0] not in (1, rows)


@public
@writes_out
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``.

    >>> import chainrule as cr
    >>> cr.addr(cr.zeros(2, 2), cr.tensor([1., 2.]), cr.tensor([3., 4.])).tolist()
    [[3.0, 4.0], [6.0, 8.0]]
    """
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    return _scaled_sum(input, _f("outer")(vec1, vec2), beta, alpha)


@public
@writes_out
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``.

    >>> import chainrule as cr
    >>> cr.baddbmm(cr.zeros(1), cr.ones(2, 2, 3), cr.ones(2, 3, 1)).shape
    chainrule.Size([2, 2, 1])
    """
    if batch1.ndim == batch2.ndim == 3:                 # shapes first (Note [product checks])
        _check_expands(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
        _check_bmm_sizes(batch1, batch2)
    dtypes = [t._data.dtype for t in (input, batch1, batch2)]
    if dtypes[0] != dtypes[1]:          # batch2's dtype is bmm's check, after the kernel's
        names = [_dtypes.cpp_type_name(d) for d in dtypes]
        raise RuntimeError(f"Input dtypes must be the same, got: input {names[0]}, batch1: "
                           f"{names[1]}, batch2: {names[2]}")
    _refuse_bool(batch1, "baddbmm")
    return _scaled_sum(input, _f("bmm")(batch1, batch2), beta, alpha)


@public
@writes_out
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``.

    >>> import chainrule as cr
    >>> cr.addbmm(cr.zeros(2, 1), cr.ones(3, 2, 4), cr.ones(3, 4, 1)).tolist()
    [[12.0], [12.0]]
    """
    if batch1.ndim >= 2 and batch2.ndim == 3:          # shapes first (Note [product checks])
        _check_expands(input, (batch1.shape[1], batch2.shape[2]))
        _check_addbmm_sizes(batch1, batch2)
    _check_addmm_dtypes(input, batch1, batch2)
    _refuse_bool(batch1, "addmm_impl_cpu_")
    product = _f("bmm")(batch1, batch2).sum(0, dtype=batch1.dtype)    # integers stay as they are
    return _scaled_sum(input, product, beta, alpha)


def _check_addbmm_sizes(batch1, batch2):
    if batch1.ndim != 3:
        return                                        # bmm's own message
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")


@public
@writes_out
def kron(input, other, *, out=None):
    """Kronecker product: blocks ``input[i] * other`` (dims aligned from the right).

    >>> import chainrule as cr
    >>> cr.kron(cr.tensor([1., 2.]), cr.tensor([1., 10.])).tolist()
    [1.0, 10.0, 2.0, 20.0]
    """
    require_tensors("kron", ("input", "other"), input, other)
    nd = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.ndim) + tuple(other.shape))
    a_split = tuple(s for n in a.shape for s in (n, 1))
    b_split = tuple(s for n in b.shape for s in (1, n))
    out = a.reshape(a_split) * b.reshape(b_split)
    return out.reshape(tuple(x * y for x, y in zip(a.shape, b.shape)))


_SUBSCRIPTS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@public(method=False)
@writes_out
def tensordot(a, b, dims=2, out=None):
    """Sum of products over ``dims``: the last ``dims`` dims of ``a`` with the first of
    ``b`` (an int), or the dims in a pair of lists.

    >>> import chainrule as cr
    >>> cr.tensordot(cr.ones(2, 3), cr.ones(3, 4), dims=1).shape
    chainrule.Size([2, 4])
    """
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    _check_same_dtype(a, b)                        # then sizes, then bool
    for da, db in zip(dims_a, dims_b):
        if a.shape[wrap_dim(da, a.ndim)] != b.shape[wrap_dim(db, b.ndim)]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} "
                               f"in dim {db}")
    dims_a = [wrap_dim(d, a.ndim) for d in dims_a]
    dims_b = [wrap_dim(d, b.ndim) for d in dims_b]
    _check_product_dtypes(a, b, whole=len(dims_a) == a.ndim == b.ndim)
    sub_a = list(_SUBSCRIPTS[:a.ndim])
    sub_b = list(_SUBSCRIPTS[a.ndim:a.ndim + b.ndim])
    for da, db in zip(dims_a, dims_b):
        sub_b[db] = sub_a[da]
    kept = [s for i, s in enumerate(sub_a) if i not in dims_a] + \
        [s for i, s in enumerate(sub_b) if i not in dims_b]
    return _f("einsum")(f"{''.join(sub_a)},{''.join(sub_b)}->{''.join(kept)}", a, b)


def _check_product_dtypes(a, b, whole):
    """tensordot and inner: one dtype, and no bool product (the reference folds them into
    dot when every dim is contracted, ``whole``, else into mm)."""
    _check_same_dtype(a, b)
    if a.dtype == _dtypes.bool_:
        raise kernel_error("dot" if whole else "addmm_impl_cpu_")(a._data.dtype)


def _check_same_dtype(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")


@public
@writes_out
def inner(input, other, *, out=None):
    """Sum of products over the last dims (a 0-d operand multiplies).

    >>> import chainrule as cr
    >>> cr.inner(cr.tensor([1., 2.]), cr.tensor([3., 4.])).item()
    11.0
    """
    require_tensors("inner", ("input", "other"), input, other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:         # before dtypes (Note [product checks])
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    _check_product_dtypes(input, other, whole=input.ndim == other.ndim == 1)
    return tensordot(input, other, ([-1], [-1]))


@public(method=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between each row of ``x1`` and each row of ``x2`` (batch dims
    broadcast); the gradient at a zero distance is 0. For p=2 with more than 25 rows
    (or ``compute_mode="use_mm_for_euclid_dist"``) it uses one matrix product, faster
    and less exact (a zero distance comes out near 1e-8), as the reference does.

    >>> import chainrule as cr
    >>> cr.cdist(cr.tensor([[0., 0.]]), cr.tensor([[3., 4.], [0., 1.]])).tolist()
    [[5.0, 1.0]]
    """
    _check_cdist(x1, x2, p)
    mode = _CDIST_MODES.get(compute_mode)
    if mode is None:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        _check_same_cdist_dtype(x1, x2)
        return _euclidean_cdist(x1, x2)
    if x1._data.dtype.itemsize == 2:                     # the matmul form takes them
        raise kernel_error("cdist")(x1._data.dtype)
    _check_same_cdist_dtype(x1, x2)
    return apply_op(CDIST, (x1, x2), {"p": float(p)})


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def _check_cdist(x1, x2, p):
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_dtypes.scalar_type_name(x._data.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")


def _check_same_cdist_dtype(x1, x2):
    if x1._data.dtype != x2._data.dtype:
        raise RuntimeError(f"expected scalar type {_dtypes.scalar_type_name(x1._data.dtype)} "
                           f"but found {_dtypes.scalar_type_name(x2._data.dtype)}")


def _euclidean_cdist(x1, x2):
    """The matmul form on (B, P, M) and (B, R, M) views, viewed back to the output shape."""
    (r1, m), (r2, _) = x1.shape[-2:], x2.shape[-2:]
    if x1.ndim == 2 and x2.ndim == 2:
        return apply_op(EUCLIDEAN_DIST, (x1, x2), {}).view(r1, r2)
    batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    a = x1.expand(batch + (r1, m)).reshape(-1, r1, m)
    b = x2.expand(batch + (r2, m)).reshape(-1, r2, m)
    return apply_op(EUCLIDEAN_DIST, (a, b), {}).view(batch + (r1, r2))


@public(method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Integral of ``y`` along ``dim`` by the trapezoidal rule, at sample points ``x`` (a
    tensor) or a spacing ``dx`` (1 by default).

    >>> import chainrule as cr
    >>> cr.trapezoid(cr.tensor([1., 2., 3.])).item()
    4.0
    """
    _refuse_bool_samples("trapezoid", y, x)
    d = dim % y.ndim
    n = y.shape[d]
    if n == 0:
        return y.sum(d)
    pairs = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    if x is None:
        return pairs.sum(d) * ((1.0 if dx is None else dx) / 2)
    if x.ndim == 1:
        x = x.reshape((n,) + (1,) * (y.ndim - 1 - d))
        xd = 0 if x.ndim == 1 else x.ndim - (y.ndim - d)
        spacing = x.narrow(xd, 1, n - 1) - x.narrow(xd, 0, n - 1)
    else:
        xd = dim % x.ndim
        spacing = x.narrow(xd, 1, n - 1) - x.narrow(xd, 0, n - 1)
    return (spacing * pairs).sum(d) / 2


def _refuse_bool_samples(name, y, x):
    """The trapezoid rules refuse bool samples, naming ``x`` too where it is given."""
    if y._data.dtype.kind == "b" or x is not None and as_tensor_arg(x)._data.dtype.kind == "b":
        which = "`y`" if x is None else "`x` or `y`"
        raise RuntimeError(f"{name}: received a bool input for {which}, but bool is not "
                           "supported")


FUNCTIONS["_refuse_bool_samples"] = _refuse_bool_samples
_vector_or_frobenius_norm = FUNCTIONS["norm"]


@public(name="norm")
def norm_with_nuclear(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """``torch.norm``: the vector p-norm over ``dim`` (Frobenius for "fro"), or the
    nuclear norm (``p="nuc"``, over the two dims ``dim``) through ``linalg.matrix_norm``.

    >>> import chainrule as cr
    >>> cr.norm(cr.tensor([[3., 0.], [0., -4.]]), "nuc").item()
    7.0
    """
    if p == "nuc":
        dims = tuple(range(input.ndim)) if dim is None else dim
        return matrix_norm(input, "nuc", dims, keepdim, dtype=dtype)
    return _vector_or_frobenius_norm(input, p, dim, keepdim, out, dtype)


Tensor.norm = FUNCTIONS["norm"]          # norm_with_nuclear, taking axis=/keepdims=
