"""Derivative table: matrix products (matmul, mm, bmm, mv, dot, outer, einsum) and the
ops of ``chainrule.linalg`` (det, slogdet, inv, solve, solve_triangular, cholesky, qr,
svd, eigh, eig, lu, matrix_exp, pinv, lstsq, cross); their public functions are in
linalg_functions.py. NumPy's LAPACK-backed routines are the engine; SciPy is used
only where present (matrix_exp), with a NumPy fallback.

Complex inputs follow the conjugate-Wirtinger convention: for ``C = A @ B`` the
VJPs are ``gA = g @ B^H`` and ``gB = A^H @ g``.
"""
import functools
import string

import ml_dtypes
import numpy as np

from .. import _dtypes
from .._meta import MetaArray
from .._tensor import Tensor, asarray, on_device_of, zeros_on
from ._common import (EMPTY, FUNCTIONS, broadcast_error, check_same_dtype, formula_helper,
                      kernel_error, promote, public, require_tensor)
from ._formula_helpers import helper
from ._namespaces import array_fn
from ..autograd.saved_tensor import SavedTensor
from ._registry import apply_op, defop
from .reduction import _norm_forward, norm_direction

# --- formula helpers (both namespaces) ---------------------------------------------
@helper
def adjoint(F, x):
    """Conjugate transpose of the last two dims."""
    return F.conj(F.transpose(x, -2, -1))


@helper
def matmul_grad_self(F, g, self_shape, other):
    """VJP of batched matmul for its first operand (a 1-D operand acts as a row)."""
    if len(other.shape) == 1:
        g, other = _with_unit_dim(F, g, 0), _with_unit_dim(F, other, 0)
    if len(self_shape) == 1:
        g = _with_unit_dim(F, g, 1)
        return F.reshape(F.sum_to(F.matmul(g, F.adjoint(other)), (1,) + tuple(self_shape)),
                         tuple(self_shape))
    return F.sum_to(F.matmul(g, F.adjoint(other)), tuple(self_shape))


@helper
def matmul_grad_other(F, g, self, other_shape):
    """VJP of batched matmul for its second operand (a 1-D operand acts as a column).

    When only ``self`` is batched, the batch folds into the rows of one product
    instead of a batch of products summed afterwards."""
    if len(self.shape) == 1:
        g, self = _with_unit_dim(F, g, 1), _with_unit_dim(F, self, 1)
    if len(other_shape) == 1:
        g = _with_unit_dim(F, g, 0)
    if len(other_shape) <= 2 and len(self.shape) > 2:
        k, n = self.shape[-1], g.shape[-1]
        rows = _numel(self.shape[:-1])
        grad = F.matmul(F.adjoint(F.reshape(self, (rows, k))), F.reshape(g, (rows, n)))
    else:
        grad = F.matmul(F.adjoint(self), g)
    if len(other_shape) == 1:
        return F.reshape(F.sum_to(grad, tuple(other_shape) + (1,)), tuple(other_shape))
    return F.sum_to(grad, tuple(other_shape))


def _with_unit_dim(F, x, from_end):
    """``x`` with a size-1 dim inserted ``from_end`` dims before its end (a reshape)."""
    shape = tuple(x.shape)
    at = len(shape) - from_end
    return F.reshape(x, shape[:at] + (1,) + shape[at:])


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# --- the table -------------------------------------------------------------------------
def _product_jvp(F, t, self, other):
    # the operator, not F.matmul: a missing tangent stays a symbolic zero through it
    # (Note [symbolic zero tangents] in the forward_ad layer)
    return t[0] @ other + self @ t[1]


_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def _low_precision(dtype):
    return dtype.itemsize == 2 and dtype.kind in "fV"      # float16, bfloat16


def in_float32(fn):
    """Run ``fn`` (on arrays; the first one decides) on float32 copies of bfloat16 and
    float16 arrays and round its result once: the reference accumulates low-precision
    products in float32 (ml_dtypes returns them as float32, NumPy's float16 accumulates
    in float16)."""
    @functools.wraps(fn)
    def low_precision_in_float32(x, *rest, **kwargs):
        dtype = x.dtype
        if dtype.itemsize != 2 or dtype.kind not in "fV":    # not _low_precision (inlined:
            return fn(x, *rest, **kwargs)                     # every product runs this)
        rest = [r.astype(np.float32) if hasattr(r, "dtype") and _low_precision(r.dtype)
                else r for r in rest]
        return asarray(fn(x.astype(np.float32), *rest, **kwargs)).astype(x.dtype)
    return low_precision_in_float32


matmul_arrays = in_float32(np.matmul)


def _matmul_forward(a, b):
    """np.matmul, with a batched ``a`` times a matrix folded into one product."""
    if a.ndim > 2 and b.ndim <= 2 and a.flags.c_contiguous:
        k = a.shape[-1]
        out = matmul_arrays(a.reshape(_numel(a.shape[:-1]), k), b)
        return out.reshape(a.shape[:-1] + b.shape[1:])
    return matmul_arrays(a, b)


MM = defop("mm", matmul_arrays, inputs=("self", "mat2"),
           vjp=(lambda F, g, mat2: F.matmul(g, F.adjoint(mat2)),
                lambda F, g, self: F.matmul(F.adjoint(self), g)),
           jvp=lambda F, t, self, mat2: _product_jvp(F, t, self, mat2))
BMM = defop("bmm", matmul_arrays, inputs=("self", "mat2"),
            vjp=(lambda F, g, mat2: F.matmul(g, F.adjoint(mat2)),
                 lambda F, g, self: F.matmul(F.adjoint(self), g)),
            jvp=lambda F, t, self, mat2: _product_jvp(F, t, self, mat2))
MV = defop("mv", matmul_arrays, inputs=("self", "vec"),
           vjp=(lambda F, g, vec: F.outer(g, F.conj(vec)),
                lambda F, g, self: F.matmul(F.conj(F.transpose(self, 0, 1)), g)),
           jvp=lambda F, t, self, vec: _product_jvp(F, t, self, vec))
DOT = defop("dot", lambda a, b: asarray(np.dot(a, b)), inputs=("self", "tensor"),
            vjp=(lambda F, g, tensor: g * F.conj(tensor),
                 lambda F, g, self: g * F.conj(self)),
            jvp=lambda F, t, self, tensor: _product_jvp(F, t, self, tensor))
OUTER = defop("outer", np.multiply.outer, inputs=("self", "vec2"), node_name="MulBackward0",
              vjp=(lambda F, g, vec2: F.matmul(g, F.conj(vec2)),
                   lambda F, g, self: F.matmul(F.conj(self), g)),
              jvp=lambda F, t, self, vec2: F.outer(t[0], vec2) + F.outer(self, t[1]))
# The general case (batched, broadcast, or one 1-D operand); torch reaches it through a
# reshape of a bmm/mm result, hence its node name.
MATMUL = defop("matmul", _matmul_forward, inputs=("self", "other"),
               node_name="UnsafeViewBackward0",
               vjp=(lambda F, g, self_shape, other: F.matmul_grad_self(g, self_shape, other),
                    lambda F, g, self, other_shape: F.matmul_grad_other(g, self, other_shape)),
               jvp=_product_jvp)


# --- argument checks -----------------------------------------------------------------
def _dims(shape):
    return "x".join(str(s) for s in shape)


_MM_DTYPE = "expected m1 and m2 to have the same dtype, but got: {a_cpp} != {b_cpp}"


def _refuse_bool(a, kernel):
    """Products have no bool kernel in the reference (Note [kernels without a dtype])."""
    if a._data.dtype.kind == "b":
        raise kernel_error(kernel)(a._data.dtype)


# Note [product checks]
#     The reference's products check shapes in their meta functions, before a kernel
#     looks at dtypes, so a call wrong in both reports its shapes: mm, mv, bmm, the
#     matmul cases that fold into them, inner, linear (and the input of addmm, addbmm,
#     baddbmm, which must expand to the product's shape). Then the kernels: mm and mv
#     compare dtypes before refusing bool, bmm refuses bool first. dot compares dtypes
#     before sizes; addmm and the multi_dot family check dtypes before any shape.
def _check_mm(a, b, rows=None):
    """mm's checks (Note [product checks]); ``rows`` names mat1's rows where matmul
    folded a batch (or a vector) into them."""
    sa, sb = a._data.shape, b._data.shape
    if sa[-1] != sb[0]:
        if type(a._data) is MetaArray or type(b._data) is MetaArray:   # the meta kernel's words
            raise RuntimeError(f"a and b must have same reduction dim, but got {list(sa)} X "
                               f"{list(sb)}.")
        shown = _dims(sa) if rows is None else f"{rows}x{sa[-1]}"
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({shown} and "
                           f"{_dims(sb)})")
    check_same_dtype(a, b, _MM_DTYPE)
    _refuse_bool(a, "addmm_impl_cpu_")


def _check_dot(a, b):
    na, nb = a._data.ndim, b._data.ndim
    if na != 1 or nb != 1:
        raise RuntimeError(f"1D tensors expected, but got {na}D and {nb}D tensors")
    check_same_dtype(a, b, "dot : expected both vectors to have same dtype, but found {a} and {b}")
    n, m = a._data.shape[0], b._data.shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    _refuse_bool(a, "dot")


def _check_mv(a, v, rows=None):
    """mv's checks (Note [product checks]); ``rows`` as in ``_check_mm``. Its dtype
    message is addmv's, whose result (and first dtype named) is the vector's."""
    if a._data.ndim != 2 and rows is None or v._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a._data.ndim}, "
                           f"{v._data.ndim}")
    k = a._data.shape[-1]
    if k != v._data.shape[0]:
        rows = a._data.shape[0] if rows is None else rows
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k}), vec "
                           f"({v._data.shape[0]})")
    if a._data.dtype != v._data.dtype:
        names = [_dtypes.scalar_type_name(t._data.dtype) for t in (v, a, v)]
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{names[0]}, {names[1]}, and {names[2]}")
    _refuse_bool(a, "addmv_impl_cpu")


def _check_batched(a, b):
    """The general matmul case's checks (Note [product checks]): a matrix or vector
    second operand folds ``a``'s batch (or a vector ``a``) into one mm or mv, the rest
    is a broadcast bmm."""
    sa, sb = a._data.shape, b._data.shape
    if len(sb) == 1:
        return _check_mv(a, b, rows=_numel(sa[:-1]))
    if len(sb) == 2:
        return _check_mm(a, b, rows=_numel(sa[:-1]))
    batch_a, batch_b = sa[:-2], sb[:-2]
    try:
        batch = np.broadcast_shapes(batch_a, batch_b)
    except ValueError:
        raise broadcast_error(batch_a, batch_b) from None
    k_a, k_b = sa[-1], sb[-2]
    if k_a != k_b:
        n = _numel(batch)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {k_a}] but got: [{n}, {k_b}].")
    _refuse_bool(a, "bmm")
    check_same_dtype(a, b)


# --- public functions ------------------------------------------------------------------
@public
def matmul(input, other):
    """Matrix product with torch's rules for 1-D operands and broadcast batch dims.

    >>> import chainrule as cr
    >>> cr.matmul(cr.ones(2, 3), cr.ones(3)).tolist()
    [3.0, 3.0]
    >>> cr.matmul(cr.ones(5, 2, 3), cr.ones(3, 4)).shape
    chainrule.Size([5, 2, 4])
    """
    a, b = require_tensor(input, "matmul", "input", 1), require_tensor(other, "matmul", "other", 2)
    na, nb = a._data.ndim, b._data.ndim
    if na == 2 and nb == 2:
        _check_mm(a, b)
        return apply_op(MM, (a, b), EMPTY)
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if na == 1 and nb == 1:
        _check_dot(a, b)
        return apply_op(DOT, (a, b), EMPTY)
    if na == 2 and nb == 1:
        _check_mv(a, b)
        return apply_op(MV, (a, b), EMPTY)
    _check_batched(a, b)
    return apply_op(MATMUL, (a, b), EMPTY)


@public
def mm(input, mat2):
    """Product of two matrices (2-D only; see ``matmul`` for the general case).

    >>> import chainrule as cr
    >>> cr.mm(cr.ones(2, 3), cr.ones(3, 4)).shape
    chainrule.Size([2, 4])
    """
    a, b = require_tensor(input, "mm", "input", 1), require_tensor(mat2, "mm", "mat2", 2)
    if a._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_mm(a, b)
    return apply_op(MM, (a, b), EMPTY)


@public
def bmm(input, mat2):
    """Batched product of 3-D tensors with the same batch size (no broadcasting).

    >>> import chainrule as cr
    >>> cr.bmm(cr.ones(5, 2, 3), cr.ones(5, 3, 4)).shape
    chainrule.Size([5, 2, 4])
    """
    a, b = require_tensor(input, "bmm", "input", 1), require_tensor(mat2, "bmm", "mat2", 2)
    if a._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_bmm(a, b)
    return apply_op(BMM, (a, b), EMPTY)


def _check_bmm(a, b):
    """bmm's checks after the dims' (Note [product checks])."""
    _check_bmm_sizes(a, b)
    _refuse_bool(a, "bmm")
    check_same_dtype(a, b, "expected scalar type {a} but found {b}")


def _check_bmm_sizes(a, b):
    sa, sb = a._data.shape, b._data.shape
    if sb[:2] != (sa[0], sa[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}].")


@public
def mv(input, vec):
    """Matrix times vector.

    >>> import chainrule as cr
    >>> cr.mv(cr.ones(2, 3), cr.tensor([1., 2., 3.])).tolist()
    [6.0, 6.0]
    """
    a, v = require_tensor(input, "mv", "input", 1), require_tensor(vec, "mv", "vec", 2)
    _check_mv(a, v)
    return apply_op(MV, (a, v), EMPTY)


@public
def dot(input, tensor):
    """Inner product of two 1-D tensors (no conjugation; see ``vdot``).

    >>> import chainrule as cr
    >>> cr.dot(cr.tensor([1., 2.]), cr.tensor([3., 4.])).item()
    11.0
    """
    a, b = require_tensor(input, "dot", "input", 1), require_tensor(tensor, "dot", "tensor", 2)
    _check_dot(a, b)
    return apply_op(DOT, (a, b), EMPTY)


@public
def vdot(input, other):
    """Inner product of 1-D tensors, conjugating the first: ``sum(conj(input) * other)``.

    >>> import chainrule as cr
    >>> cr.vdot(cr.tensor([1j]), cr.tensor([1j])).item()
    (1+0j)
    """
    a, b = require_tensor(input, "vdot", "input", 1), require_tensor(other, "vdot", "other", 2)
    _check_dot(a, b)
    return dot(FUNCTIONS["conj"](a), b)


@public
def outer(input, vec2):
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``.

    >>> import chainrule as cr
    >>> cr.outer(cr.tensor([1., 2.]), cr.tensor([1., 10., 100.])).tolist()
    [[1.0, 10.0, 100.0], [2.0, 20.0, 200.0]]
    """
    a, b = require_tensor(input, "outer", "input", 1), require_tensor(vec2, "outer", "vec2", 2)
    for name, t in (("self", a), ("vec2", b)):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got "
                               f"{t._data.ndim}-D")
    if a._data.dtype != b._data.dtype:
        a, b = promote(a, b)
    return apply_op(OUTER, (a, b), EMPTY)


ger = public(outer, name="ger")


# --- einsum ------------------------------------------------------------------------------
# Every contraction is a table op on two operands (a one-operand equation pairs with a
# constant 0-d one); three or more operands contract pairwise in np.einsum_path's order.
def _einsum_pair_forward(a, b, equation):
    return einsum_arrays(equation, a, b)


EINSUM = defop("einsum", _einsum_pair_forward, inputs=("self", "other"), attrs=("equation",),
               vjp=(lambda F, g, other, equation, self_shape:
                    F.einsum_grad(g, other, equation, 0, self_shape),
                    lambda F, g, self, equation, other_shape:
                    F.einsum_grad(g, self, equation, 1, other_shape)),
               jvp=lambda F, t, self, other, equation:
                   F.einsum(equation, t[0], other) + F.einsum(equation, self, t[1]))

_LETTERS = string.ascii_uppercase + string.ascii_lowercase
_OPTIMIZE_WORK = 1 << 14     # below this many multiply-adds, einsum_path costs more than it saves


@array_fn("einsum")
def einsum_arrays(equation, *arrays):
    """np.einsum that takes the BLAS route (optimize) when the work is large."""
    if any(a.dtype == _BFLOAT16 for a in arrays):         # NumPy's einsum has no bfloat16
        return in_float32(lambda *xs: einsum_arrays(equation, *xs))(*arrays)
    if len(arrays) < 2:
        return np.einsum(equation, *arrays)
    optimize = _einsum_work(equation, tuple(a.shape for a in arrays)) > _OPTIMIZE_WORK
    return asarray(np.einsum(equation, *arrays, optimize=optimize))


@functools.lru_cache(maxsize=1024)
def _einsum_work(equation, shapes):
    sizes = {}
    for term, shape in zip(equation.split("->")[0].split(","), shapes):
        for letter, n in zip(term, shape):
            sizes[letter] = max(n, sizes.get(letter, 1))
    return _numel(sizes.values())


@helper
def einsum_grad(F, g, other, equation, which, shape):
    """VJP of a two-operand einsum for operand ``which``: an einsum of ``g`` with the
    other operand, plus identities for repeated subscripts and ones for subscripts that
    only this operand has."""
    eq, consts = _einsum_grad_equation(equation, which, tuple(shape))
    dtype = (g._data if F.is_tensor_path() else g).dtype
    like = g._data if F.is_tensor_path() else g
    extra = [on_device_of(np.ones(n, dtype) if kind == "ones" else np.eye(n, dtype=dtype), like)
             for kind, n in consts]
    return _broadcast_back(F, F.einsum(eq, g, F.conj(other), *extra), tuple(shape))


def _broadcast_back(F, grad, shape):
    """Note [einsum broadcast subscripts]: a subscript of size 1 in one operand and n
    in another broadcasts, so the gradient einsum gives it the partner's size (sum it
    back to 1) or, where this operand has n and every other operand 1, size 1 (the
    gradient is the same for each of the n entries: expand it)."""
    got = tuple(grad.shape)
    if got == shape:
        return grad
    kept = tuple(1 if n == 1 else want for n, want in zip(got, shape))
    return F.expand(F.sum_to(grad, kept), shape)


@functools.lru_cache(maxsize=1024)
def _einsum_grad_equation(equation, which, shape):
    lhs, out = equation.split("->")
    terms = lhs.split(",")
    target, partner = terms[which], terms[1 - which]
    sizes = dict(zip(target, shape))
    fresh = iter(c for c in _LETTERS if c not in equation)
    known = set(out) | set(partner)
    result, extra_terms, consts, seen = [], [], [], set()
    for letter in target:
        if letter in seen:                    # repeated: a fresh subscript tied by eye
            tied = next(fresh)
            result.append(tied)
            extra_terms.append(letter + tied)
            consts.append(("eye", sizes[letter]))
            continue
        seen.add(letter)
        result.append(letter)
        if letter not in known:               # summed out by this operand alone
            extra_terms.append(letter)
            consts.append(("ones", sizes[letter]))
    inputs = ",".join([out, partner] + extra_terms)
    return f"{inputs}->{''.join(result)}", tuple(consts)


def _einsum_error(message):
    return RuntimeError(f"einsum(): {message}")


def _parse_terms(equation, n_operands):
    """Split the equation into input terms (with '...' kept) and the output (or None)."""
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) < n_operands:
        raise _einsum_error("more operands were provided than specified in the equation")
    if len(terms) > n_operands:
        raise _einsum_error("fewer operands were provided than specified in the equation")
    offset = 0
    for i, term in enumerate(terms + ([rhs] if arrow else [])):
        _check_subscripts(term, i, offset, equation)
        offset += len(term) + 1
    return terms, (rhs if arrow else None)


def _check_subscripts(term, index, offset, equation):
    stripped = term.replace("...", "")
    if term.count("...") > 1:
        raise _einsum_error(f"found more than one ellipsis for operand {index}")
    for pos, c in enumerate(stripped):
        if c == ".":
            raise _einsum_error(f"found '.' for operand {index} that is not part of any "
                                "ellipsis")
        if c not in _LETTERS:
            at = offset + term.index(c)
            raise _einsum_error(f"invalid subscript given at index {at} in the equation "
                                "string, subscripts must be in [a-zA-Z]")


@functools.lru_cache(maxsize=1024)
def _parse_einsum(equation, shapes):
    """The equation with '...' spelled out and the output explicit, plus each
    subscript's (broadcast) size."""
    equation = equation.replace(" ", "")
    terms, out = _parse_terms(equation, len(shapes))
    free = [c for c in _LETTERS if c not in equation]
    ndims = [_ellipsis_ndim(t, s, i) for i, (t, s) in enumerate(zip(terms, shapes))]
    ell_ndim = max(ndims, default=0)
    if ell_ndim > len(free):
        raise _einsum_error("too many subscripts in the equation")
    ell = "".join(free[:ell_ndim])
    terms = [t.replace("...", ell[ell_ndim - n:]) for t, n in zip(terms, ndims)]
    sizes = _subscript_sizes(terms, shapes)
    out = _output_subscripts(terms, out, ell)
    return tuple(terms), out, tuple(sizes.items())


def _ellipsis_ndim(term, shape, index):
    explicit = len(term.replace("...", ""))
    if "..." not in term:
        if explicit != len(shape):
            raise _einsum_error(f"the number of subscripts in the equation ({explicit}) does "
                                f"not match the number of dimensions ({len(shape)}) for "
                                f"operand {index} and no ellipsis was given")
        return 0
    if explicit > len(shape):
        raise _einsum_error(f"the number of subscripts in the equation ({explicit}) is more "
                            f"than the number of dimensions ({len(shape)}) for operand {index}")
    return len(shape) - explicit


def _subscript_sizes(terms, shapes):
    sizes = {}
    for index, (term, shape) in enumerate(zip(terms, shapes)):
        own = {}
        for letter, n in zip(term, shape):
            if letter in own and own[letter] != n:
                raise _einsum_error(f"subscript {letter} is repeated for operand {index} but "
                                    f"the sizes don't match, {n} != {own[letter]}")
            own[letter] = n
        for letter, n in own.items():
            seen = sizes.get(letter)
            if seen is None or seen == 1:
                sizes[letter] = n
            elif n != 1 and n != seen:
                raise _einsum_error(f"subscript {letter} has size {n} for operand {index} "
                                    f"which does not broadcast with previously seen size {seen}")
    return sizes


def _output_subscripts(terms, out, ell):
    counts = {}
    for term in terms:
        for letter in term:
            counts[letter] = counts.get(letter, 0) + 1
    if out is None:             # implicit: ellipsis dims, then subscripts seen once, sorted
        return ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    out = out.replace("...", ell)
    for letter in out:
        if letter not in counts:
            raise _einsum_error(f"output subscript {letter} does not appear in the equation "
                                "for any input operand")
        if out.count(letter) > 1:
            raise _einsum_error(f"output subscript {letter} appears more than once in the "
                                "output")
    return out


@functools.lru_cache(maxsize=1024)
def _contraction_plan(terms, out, size_items):
    """Pairwise steps ``(i, j, equation)``: operands i < j of the live list are replaced
    by their contraction, appended at the end (np.einsum_path's convention)."""
    if len(terms) == 1:
        return ((0, None, f"{terms[0]},->{out}"),)
    if len(terms) == 2:
        return ((0, 1, f"{terms[0]},{terms[1]}->{out}"),)
    sizes = dict(size_items)
    dummies = [np.broadcast_to(np.empty((), np.float32), tuple(sizes[c] for c in t))
               for t in terms]
    path = np.einsum_path(",".join(terms) + "->" + out, *dummies, optimize="greedy")[0][1:]
    live, steps = list(terms), []
    for contraction in path:
        group = sorted(contraction)
        while len(group) >= 2:                 # more than two at once: pair them up
            i, j = group[0], group[1]
            rest = [t for k, t in enumerate(live) if k not in (i, j)]
            keep = out if not rest else _kept(live[i] + live[j], rest, out)
            steps.append((i, j, f"{live[i]},{live[j]}->{keep}"))
            live = rest + [keep]
            group = [g - (g > i) - (g > j) for g in group[2:]] + [len(live) - 1]
    return tuple(steps)


def _kept(letters, rest, out):
    needed = set(out).union(*rest)
    kept = []
    for c in letters:
        if c in needed and c not in kept:
            kept.append(c)
    return "".join(kept)


def _sublist_equation(args):
    """torch's sublist form ``einsum(op1, [0, 1], op2, [1, 2], [0, 2])``."""
    def subs(sublist):
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sublist)
    operands = list(args[0::2])
    sublists = list(args[1::2])
    out = None
    if len(operands) > len(sublists):
        if not isinstance(operands[-1], Tensor):
            out = operands.pop()
    equation = ",".join(subs(s) for s in sublists)
    if out is not None:
        equation += "->" + subs(out)
    return equation, operands


_ONES = {}


def _one_like(t):
    dtype = t._data.dtype
    one = _ONES.get(dtype)
    if one is None:
        one = _ONES[dtype] = Tensor._wrap(np.ones((), dtype))
    return one


# Note [einsum dtypes]
#     The reference contracts the operands left to right. A subscript that one operand
#     alone has (and the output lacks) is summed away first, which makes integers and
#     bool int64 (with several operands a size-1 one is squeezed instead); a pair that
#     shares a summed subscript goes through bmm (one dtype, no bool kernel); a pair that
#     shares none is multiplied, promoting. `_einsum_dtype` follows that on the dtypes
#     alone; the operands are cast to its answer and contracted as before.
def _einsum_dtype(terms, out, tensors):
    """The result dtype of the reference's einsum, or its error (Note [einsum dtypes])."""
    last = {letter: i for i, term in enumerate(terms) for letter in term}
    dtypes = [_dtypes.from_numpy_dtype(t._data.dtype) for t in tensors]
    result, dtype = dict(zip(terms[0], tensors[0]._data.shape)), dtypes[0]
    if any(last[d] == 0 and d not in out and (n != 1 or len(terms) == 1)
           for d, n in result.items()):
        dtype = _sum_dtype(dtype)
    result = {d: n for d, n in result.items() if last[d] > 0 or d in out}
    for i in range(1, len(terms)):
        operand, other = dict(zip(terms[i], tensors[i]._data.shape)), dtypes[i]
        shared = False
        for d in {d for d in (*result, *operand) if last[d] == i and d not in out}:
            in_result, in_operand = result.get(d, 1) != 1, operand.get(d, 1) != 1
            shared = shared or in_result and in_operand
            if in_result != in_operand:         # summed alone, in the side that has it
                other, dtype = (_sum_dtype(other), dtype) if in_operand else \
                    (other, _sum_dtype(dtype))
        dtype = _bmm_dtype(dtype, other) if shared else _dtypes.promote_types(dtype, other)
        result = {d: max(result.get(d, 1), operand.get(d, 1)) for d in (*result, *operand)
                  if last[d] > i or d in out}
    return dtype


def _sum_dtype(dtype):
    """A sum's dtype: integers and bool add up in int64."""
    return dtype if dtype.is_floating_point or dtype.is_complex else _dtypes.int64


def _bmm_dtype(a, b):
    """bmm's dtype checks: its kernel is chosen by ``a`` (none for bool), then ``b`` must
    match."""
    if a.name == "bool":
        raise kernel_error("bmm")(a.np)
    if a is not b:
        raise RuntimeError(f"expected scalar type {_dtypes.scalar_type_name(a.np)} but found "
                           f"{_dtypes.scalar_type_name(b.np)}")
    return a


@public(method=False)
def einsum(equation, *operands):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

    Supports '...' (broadcast batch dims), repeated subscripts (diagonals), implicit
    output (subscripts seen once, sorted) and torch's sublist form.

    >>> import chainrule as cr
    >>> cr.einsum("ii->", cr.eye(3)).item()
    3.0
    >>> cr.einsum("bij,bjk->bik", cr.ones(2, 3, 4), cr.ones(2, 4, 5)).shape
    chainrule.Size([2, 3, 5])
    """
    if not isinstance(equation, str):
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    tensors = [o if isinstance(o, Tensor) else Tensor._wrap(asarray(o)) for o in operands]
    terms, out, sizes = _parse_einsum(equation, tuple(t._data.shape for t in tensors))
    dtype = _einsum_dtype(terms, out, tensors)
    tensors = [t if t._data.dtype == dtype.np else t.to(dtype) for t in tensors]
    live = list(tensors)
    for i, j, eq in _contraction_plan(terms, out, sizes):
        if j is None:
            live = [apply_op(EINSUM, (live[0], _one_like(live[0])), {"equation": eq})]
            continue
        a, b = live[i], live[j]
        live = [t for k, t in enumerate(live) if k not in (i, j)]
        live.append(apply_op(EINSUM, (a, b), {"equation": eq}))
    return live[0]


# === decompositions, inverses and solvers (the ops of chainrule.linalg) =================
# Note [linalg complex gradients]
#     Every formula below follows the conjugate-Wirtinger convention of the products
#     above: for a real loss L and an output Y with gradient gY, the gradient of an
#     input X satisfies dL = Re(sum(conj(gX) * dX)). Formulas are batched over the
#     leading dims; ``adjoint`` is the conjugate transpose of the last two.
#
# Note [linalg saved outputs]
#     The backward of a multi-output decomposition (slogdet, qr, svd, eigh, eig) needs
#     its outputs, which a node's saved plan does not hold for multi-output ops:
#     ``decompose`` adds them to the node's saved values under the names its formulas
#     use (``U``, ``S``, ``Vh``, ...), as saved outputs (version-checked, no cycle).
#     Gradients reaching those outputs from the formulas themselves (create_graph)
#     come back to the same node, so gauge checks see their sum, as in the reference.
#
# Note [gauge of singular and eigen vectors]
#     Singular vectors and eigenvectors are defined up to a phase e^{i phi} per vector
#     (a sign for real input); a loss that depends on that phase has no gradient, and
#     the backward raises the reference's error for it (complex inputs only). Where
#     singular values or eigenvalues repeat, the vectors are not unique at all: a loss
#     that depends on them gets inf/nan, as in the reference, plus a warning naming
#     the cause, never finite garbage.


class LinAlgError(RuntimeError):
    """A linear-algebra failure on valid input (singular, not positive-definite), like
    the reference's ``torch.linalg.LinAlgError``; a RuntimeError."""


def _batch_prefix(a, index):
    """The reference's "(Batch element i): " for batched input (flat batch index)."""
    return f"(Batch element {index}): " if a.ndim > 2 else ""


def lu_info(a):
    """Per matrix: 0, or the 1-based index of the first zero pivot of its LU (the
    reference's "diagonal element" of a singular matrix)."""
    zero = np.diagonal(_lu_packed(a)[0], 0, -2, -1) == 0
    return np.where(zero.any(-1), np.argmax(zero, -1) + 1, 0).astype(np.int32)


def _singular_batch(a):
    """Flat index of the first singular matrix of a batch, and its zero pivot."""
    info = lu_info(a).reshape(-1)
    index = int(np.flatnonzero(info)[0]) if info.any() else 0
    return index, int(info[index]) or a.shape[-1]


def _inv_forward(a):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        index, pivot = _singular_batch(a)
        raise LinAlgError(f"linalg.inv: {_batch_prefix(a, index)}The diagonal element {pivot} "
                          "is zero, the inversion could not be completed because the input "
                          "matrix is singular.") from None


def _solve_forward(a, b):
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        index, _ = _singular_batch(np.broadcast_to(a, np.broadcast_shapes(
            a.shape[:-2], b.shape[:-2]) + a.shape[-2:]))
        raise LinAlgError(f"torch.linalg.solve: {_batch_prefix(a, index)}The solver failed "
                          "because the input matrix is singular.") from None


def _cholesky_forward(a, upper=False):
    """The lower factor, or for ``upper`` U = L^H of A^H (the upper triangle is read)."""
    if upper:
        return _adjoint_array(_cholesky_forward(_adjoint_array(a)))
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        index, order = _not_pd_batch(a)
        raise LinAlgError(f"linalg.cholesky: {_batch_prefix(a, index)}The factorization could "
                          "not be completed because the input is not positive-definite (the "
                          f"leading minor of order {order} is not positive-definite).") from None


def _not_pd_order(m):
    """The order of the first leading minor that is not positive-definite, or 0."""
    for k in range(1, m.shape[-1] + 1):
        try:
            np.linalg.cholesky(m[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def _not_pd_batch(a):
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        order = _not_pd_order(m)
        if order:
            return i, order
    return 0, a.shape[-1]


def _tri_masked(a, upper, unitriangular):
    """The triangle a triangular solve reads (unit diagonal when ``unitriangular``)."""
    n = a.shape[-1]
    mask = np.triu(np.ones((n, n), bool), 1 if unitriangular else 0) if upper else \
        np.tril(np.ones((n, n), bool), -1 if unitriangular else 0)
    out = np.where(on_device_of(mask, a), a, 0)
    if unitriangular:
        out = out + on_device_of(np.eye(n, dtype=a.dtype), a)
    return out


def _solve_triangular_forward(a, b, upper, unitriangular):
    """X with tri(A) X = B; NumPy's batched solver on the triangle, or substitution
    when A has a zero on its diagonal (inf/nan, like the reference's)."""
    tri = _tri_masked(a, upper, unitriangular)
    try:
        return np.linalg.solve(tri, b)
    except np.linalg.LinAlgError:
        return _substitute(tri, b, upper)


def _substitute(tri, b, upper):
    """Forward or back substitution over the batch, dividing by zero where it must."""
    tri, b = np.broadcast_arrays(tri[..., None], b[..., None, :])   # (..., n, n, k)
    tri, b = tri[..., 0], b[..., 0, :]
    x = np.zeros(np.broadcast_shapes(tri.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(tri, b))
    n = tri.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in (range(n - 1, -1, -1) if upper else range(n)):
            known = np.einsum("...j,...jk->...k", tri[..., i, :], x)
            x[..., i, :] = (b[..., i, :] - known) / tri[..., i, i, None]
    return x


def _matrix_exp_forward(a):
    if type(a) is not np.ndarray:          # a device array: Padé on the device
        return _expm_pade(a)
    try:
        from scipy.linalg import expm
    except ImportError:                    # core depends on NumPy only
        return _expm_pade(a)
    return asarray(expm(a), a.dtype) if a.size else a.copy()


# Padé(13) coefficients (Higham 2005, "The scaling and squaring method for the matrix
# exponential revisited"), with its 1-norm bound for degree 13.
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def _expm_pade(a):
    """exp(A) by scaling and squaring with a degree-13 Padé approximant (no SciPy)."""
    if a.size == 0:
        return a.copy()
    norm = np.max(np.sum(np.abs(a), axis=-2), axis=-1).max()
    s = max(0, int(np.ceil(np.log2(norm / _THETA13)))) if norm > 0 else 0
    x = a / (2.0 ** s)
    eye = np.broadcast_to(on_device_of(np.eye(a.shape[-1], dtype=a.dtype), a), a.shape)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    b = _PADE13
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2)
             + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 \
        + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r.astype(a.dtype, copy=False)


def _qr_forward(a, mode):
    if mode == "r":
        r = np.linalg.qr(a, mode="r")
        return np.zeros((0,), a.dtype), r
    return tuple(np.linalg.qr(a, mode=mode))


def _svd_forward(a, full_matrices):
    if a.size == 0:
        return _empty_svd(a, full_matrices)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s.astype(_real_dtype(a.dtype), copy=False), vh


def _empty_svd(a, full_matrices):
    m, n = a.shape[-2:]
    k, batch = min(m, n), a.shape[:-2]
    cols, rows = (m, n) if full_matrices else (k, k)
    u = np.broadcast_to(np.eye(m, cols, dtype=a.dtype), batch + (m, cols))
    vh = np.broadcast_to(np.eye(rows, n, dtype=a.dtype), batch + (rows, n))
    return u.copy(), np.zeros(batch + (k,), _real_dtype(a.dtype)), vh.copy()


def _real_dtype(dtype):
    return np.finfo(dtype).dtype if np.dtype(dtype).kind == "c" else np.dtype(dtype)


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _eigh_forward(a, UPLO):
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w.astype(_real_dtype(a.dtype), copy=False), v


def _eig_forward(a):
    w, v = np.linalg.eig(a)
    cdtype = _complex_dtype(a.dtype)
    return w.astype(cdtype, copy=False), v.astype(cdtype, copy=False)


def _slogdet_forward(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return asarray(sign, a.dtype), asarray(logabsdet, _real_dtype(a.dtype))


def _pinv_threshold(s, atol, rtol, m, n):
    """The reference's cut-off: max(atol, rtol * largest singular value), with rtol
    eps * max(m, n) when neither is given (and 0 when only atol is)."""
    if rtol is None:
        rtol = np.finfo(s.dtype).eps * max(m, n) if atol is None else 0.0
    atol = 0.0 if atol is None else atol
    smax = np.max(s, axis=-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,),
                                                                           s.dtype)
    return np.maximum(asarray(atol)[..., None] if np.ndim(atol) else atol,
                      (asarray(rtol)[..., None] if np.ndim(rtol) else rtol) * smax)


def _pinv_forward(a, atol, rtol, hermitian):
    m, n = a.shape[-2:]
    if hermitian:
        w, v = np.linalg.eigh(a)
        keep = np.abs(w) > _pinv_threshold(np.abs(w), atol, rtol, m, n)
        inv_w = np.where(keep, 1 / np.where(keep, w, 1), 0)
        return np.matmul(v * inv_w[..., None, :], _adjoint_array(v)).astype(a.dtype, copy=False)
    u, s, vh = _svd_forward(a, False)
    keep = s > _pinv_threshold(s, atol, rtol, m, n)
    inv_s = np.where(keep, 1 / np.where(keep, s, 1), 0)
    return np.matmul(_adjoint_array(vh) * inv_s[..., None, :], _adjoint_array(u)).astype(
        a.dtype, copy=False)


def _adjoint_array(x):
    x = np.swapaxes(x, -1, -2)
    return np.conj(x) if x.dtype.kind == "c" else x


def _lstsq_forward(a, b, rcond):
    return np.matmul(_pinv_forward(a, None, rcond, False), b)


def _cross_forward(a, b, dim):
    return np.cross(a, b, axis=dim)



def _lu_packed(a):
    """Partial-pivoting LU of a batch: the packed factors (L's strict lower triangle
    and U) and the 1-based LAPACK pivots, by one elimination step per column over the
    whole batch."""
    m, n = a.shape[-2:]
    k, batch = min(m, n), a.shape[:-2]
    lu = a.astype(np.result_type(a.dtype, np.float32)).reshape((-1, m, n))   # (a copy)
    rows = on_device_of(np.arange(lu.shape[0]), lu)
    pivots = zeros_on((lu.shape[0], k), np.int32, lu)
    for j in range(k):
        column = lu[:, j:, j]        # LAPACK's i?amax: |re| + |im| for complex
        size = np.abs(column.real) + np.abs(column.imag) if lu.dtype.kind == "c" else \
            np.abs(column)
        p = j + np.argmax(size, axis=-1)
        pivots[:, j] = p + 1
        lu[rows, j], lu[rows, p] = lu[rows, p], lu[rows, j].copy()
        pivot = lu[:, j, j]
        safe = np.where(pivot == 0, 1, pivot)
        factors = np.where((pivot == 0)[:, None], 0, lu[:, j + 1:, j] / safe[:, None])
        lu[:, j + 1:, j] = factors
        lu[:, j + 1:, j + 1:] -= factors[:, :, None] * lu[:, j, None, j + 1:]
    return lu.reshape(batch + (m, n)), pivots.reshape(batch + (k,))


def _permutation_from_pivots(pivots, m, dtype):
    """P with A = P L U from LAPACK's sequential row swaps."""
    batch = pivots.shape[:-1]
    flat = pivots.reshape((-1, pivots.shape[-1])) - 1
    perm = on_device_of(np.tile(np.arange(m), (flat.shape[0], 1)), flat)
    rows = on_device_of(np.arange(flat.shape[0]), flat)
    for j in range(flat.shape[1]):
        p = flat[:, j]
        perm[rows, j], perm[rows, p] = perm[rows, p], perm[rows, j].copy()
    eye = on_device_of(np.eye(m, dtype=dtype), flat)
    return np.swapaxes(eye[perm], -1, -2).reshape(batch + (m, m))


def _lu_forward(a):
    m, n = a.shape[-2:]
    k = min(m, n)
    lu, pivots = _lu_packed(a)
    lower = np.tril(lu[..., :, :k], -1) + on_device_of(np.eye(m, k, dtype=lu.dtype), lu)
    upper = np.triu(lu[..., :k, :])
    return _permutation_from_pivots(pivots, m, lu.dtype), lower, upper

# --- formula helpers of the decompositions (both namespaces) -----------------------------
def _const(F, arr, like):
    """A constant array as a formula value on the device of ``like`` (a Tensor without
    history on the tensor path)."""
    arr = on_device_of(arr, _raw(F, like))
    return Tensor._wrap(arr) if F.is_tensor_path() else arr


def _raw(F, x):
    return x._data if F.is_tensor_path() else x


def _is_zero(F, x):
    """Whether a materialized output gradient is all zeros (the output was unused)."""
    return not np.any(_raw(F, x))


@helper
def tri_part(F, x, upper, strict=False, half_diag=False):
    """The upper/lower triangle of x (without the diagonal when ``strict``; with half of
    it when ``half_diag``), by a constant mask."""
    n, m = x.shape[-2], x.shape[-1]
    ones = np.ones((n, m), _real_dtype(_raw(F, x).dtype))
    k = 1 if strict or half_diag else 0
    mask = np.triu(ones, k) if upper else np.tril(ones, -k)
    if half_diag:
        mask = mask + 0.5 * np.eye(n, m, dtype=mask.dtype)
    return x * _const(F, mask, x)


def _off_diagonal(F, x):
    n = x.shape[-1]
    return x * _const(F, 1 - np.eye(n, dtype=_real_dtype(_raw(F, x).dtype)), x)


def _gap_matrix(F, values):
    """E[i, j] = values[j] - values[i], with 1 on the diagonal (divided by, off it)."""
    n = values.shape[-1]
    eye = _const(F, np.eye(n, dtype=_real_dtype(_raw(F, values).dtype)), values)
    return F.unsqueeze(values, -2) - F.unsqueeze(values, -1) + eye


def _warn_if_repeated(F, gaps, what, values):
    """Note [gauge of singular and eigen vectors]: repeated values make the gradient of
    the vectors inf/nan; say why."""
    n = gaps.shape[-1]
    off_diagonal = _raw(F, gaps)[..., ~np.eye(n, dtype=bool)]
    if n > 1 and np.any(off_diagonal == 0):
        import warnings
        warnings.warn(f"{what}: the input has repeated {values}; the gradient of a loss that "
                      "depends on the corresponding vectors is not defined there (it is "
                      "inf/nan).", RuntimeWarning, stacklevel=2)


def _check_phase(F, imag_diagonal, name, what, consequence):
    """Note [gauge of singular and eigen vectors]: the reference's error for a loss that
    depends on the arbitrary phase of complex vectors."""
    if np.any(np.abs(_raw(F, imag_diagonal)) > 1e-2):
        raise RuntimeError(f"{name}: The {what} in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends "
                           f"on this {consequence}.")


def _trace(F, x):
    return F.sum(F.diagonal(x, 0, -2, -1), -1)


def _unsqueeze2(F, x):
    return F.unsqueeze(F.unsqueeze(x, -1), -1)


def _right_solve_upper(F, y, r):
    """y R^-H for an upper-triangular R: (R^-1 y^H)^H."""
    return F.adjoint(F._solve_triangular(r, F.adjoint(y), True, False))


@helper
def det_grad(F, g, self, result):
    if np.any(_raw(F, result) == 0):                     # singular: the adjugate, via SVD
        return _unsqueeze2(F, g) * _const(F, _adjugate_adjoint(_raw(F, self)), g)
    return _unsqueeze2(F, g * F.conj(result)) * F.adjoint(F._linalg_inv(self))


@helper
def det_jvp(F, t, self, result):
    if np.any(_raw(F, result) == 0):
        adj_t = np.swapaxes(np.conj(_adjugate_adjoint(_raw(F, self))), -1, -2)
        return F.sum(F.sum(_const(F, adj_t, t[0]) * t[0], -1), -1)
    return result * _trace(F, F._linalg_solve(self, t[0]))


def _adjugate_adjoint(a):
    """adj(A)^H = conj(det U det Vh) U diag(prod_{j != i} s_j) Vh (also for singular A)."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], -1)
    phase = np.conj(np.linalg.det(u) * np.linalg.det(vh))
    return (u * others[..., None, :]) @ vh * phase[..., None, None]


@helper
def slogdet_grad(F, g, self, sign):
    g_sign, g_log = g
    if F.is_complex(self):
        g_log = g_log + F.imag(g_sign * F.conj(sign)) * 1j
    return _unsqueeze2(F, g_log) * F.adjoint(F._linalg_inv(self))


@helper
def slogdet_jvp(F, t, self, result):
    sign = result[0]
    c = _trace(F, F._linalg_solve(self, t[0]))
    if F.is_complex(self):
        return sign * (F.imag(c) * 1j), F.real(c)
    return sign * 0, c


@helper
def solve_grad_b(F, g, A, B_shape):
    return F.sum_to(F._linalg_solve(F.adjoint(A), g), tuple(B_shape))


@helper
def solve_grad_a(F, g, A, result):
    g_b = F._linalg_solve(F.adjoint(A), g)
    return F.sum_to(-F.matmul(g_b, F.adjoint(result)), tuple(A.shape))


@helper
def solve_triangular_grads(F, g, A, result, upper, unitriangular, which, shape):
    g_b = F._solve_triangular(F.adjoint(A), g, not upper, unitriangular)
    if which == 1:
        return F.sum_to(g_b, tuple(shape))
    g_a = -F.tri_part(F.matmul(g_b, F.adjoint(result)), upper, unitriangular)
    return F.sum_to(g_a, tuple(shape))


@helper
def cholesky_grad(F, g, result, upper=False):
    """A = L L^H: gA = L^-H Psi(tril(L^H gL)) L^-1 with Psi(P) = (P + tril(P, -1)^H) / 2,
    the reference's formula (exact for Hermitian perturbations of A); U = L^H for
    ``upper`` (the factor of A^H, so the gradient is transposed back)."""
    if upper:
        return F.adjoint(F.cholesky_grad(F.adjoint(g), F.adjoint(result)))
    lh = F.adjoint(result)
    p = F.tri_part(F.matmul(lh, g), False)
    inner = (p + F.adjoint(F.tri_part(p, False, strict=True))) * 0.5
    z = F._solve_triangular(lh, inner, True, False)
    return F.adjoint(F._solve_triangular(lh, F.adjoint(z), True, False))


@helper
def cholesky_jvp(F, t, result, upper=False):
    if upper:
        return F.adjoint(F.cholesky_jvp([F.adjoint(t[0])], F.adjoint(result)))
    w = F._solve_triangular(result, t[0], False, False)
    z = F.adjoint(F._solve_triangular(result, F.adjoint(w), False, False))
    return F.matmul(result, F.tri_part(z, False, half_diag=True))


def _cholesky_solve_forward(b, factor, upper):
    """X with A X = B for A = L L^H (or U^H U): two triangular solves on the triangle."""
    lower = _adjoint_array(factor) if upper else factor
    y = _solve_triangular_forward(lower, b, False, False)
    return _solve_triangular_forward(_adjoint_array(lower), y, True, False)


def _cholesky_inverse_forward(factor, upper):
    eye = on_device_of(np.eye(factor.shape[-1], dtype=factor.dtype), factor)
    return _cholesky_solve_forward(np.broadcast_to(eye, factor.shape), factor, upper)


def cholesky_product_jvp(F, t, factor, upper):
    """d(L L^H) for dL = t (or d(U^H U)): the change of A its factor's tangent makes (on
    the triangles: the ops read no other entries)."""
    t, factor = F.tri_part(t, upper), F.tri_part(factor, upper)
    half = F.matmul(F.adjoint(t), factor) if upper else F.matmul(t, F.adjoint(factor))
    return half + F.adjoint(half)


@helper
def cholesky_solve_grad_factor(F, g, input2, result, upper, shape):
    """The reference's gradient for the factor: -(G X^H + X G^H) L (L^H side for U)."""
    common = F.matmul(F._cholesky_solve(g, input2, upper), F.adjoint(result))
    common = common + F.adjoint(common)
    part = -F.matmul(input2, common) if upper else -F.matmul(common, input2)
    return F.sum_to(part, tuple(shape))


@helper
def cholesky_inverse_grad(F, g, self, result, upper):
    common = F.matmul(result, F.matmul(g + F.adjoint(g), result))
    return -F.matmul(self, common) if upper else -F.matmul(common, self)


@helper
def qr_grad(F, g, self, Q, R, mode):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    m, n = self.shape[-2], self.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    g_q, g_r = g
    q, r = Q, R
    if m >= n:
        return _qr_grad_tall(F, g_q, g_r, q, r)
    last = len(self.shape) - 1
    y, g_r2 = F.narrow(self, last, m, n - m), F.narrow(g_r, last, m, n - m)
    g_x = _qr_grad_tall(F, g_q + F.matmul(y, F.adjoint(g_r2)), F.narrow(g_r, last, 0, m), q,
                        F.narrow(r, last, 0, m))
    return F.cat([g_x, F.matmul(q, g_r2)], -1)


def _qr_grad_tall(F, g_q, g_r, q, r):
    """A = QR with A m x n, m >= n: gA = [Q (gR R^H + Phi(M - M^H)) + (I - QQ^H) gQ] R^-H,
    M = Q^H gQ - gR R^H (Phi: lower triangle, half diagonal)."""
    qh_gq = F.matmul(F.adjoint(q), g_q)
    gr_rh = F.matmul(g_r, F.adjoint(r))
    m = qh_gq - gr_rh
    inner = gr_rh + F.tri_part(m - F.adjoint(m), False, half_diag=True)
    y = F.matmul(q, inner - qh_gq) + g_q
    return _right_solve_upper(F, y, r)


@helper
def qr_jvp(F, t, self, result, mode):
    m, n = self.shape[-2], self.shape[-1]
    if mode != "reduced" and m > n or mode == "r":
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols." if mode != "r" else
                           "The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'.")
    q, r = result
    if m >= n:
        return _qr_jvp_tall(F, t[0], q, r)
    last = len(self.shape) - 1
    r2 = F.narrow(r, last, m, n - m)
    d_q, d_r1 = _qr_jvp_tall(F, F.narrow(t[0], last, 0, m), q, F.narrow(r, last, 0, m))
    d_r2 = F.matmul(F.adjoint(q), F.narrow(t[0], last, m, n - m) - F.matmul(d_q, r2))
    return d_q, F.cat([d_r1, d_r2], -1)


def _qr_jvp_tall(F, d_a, q, r):
    d_a_rinv = F.adjoint(F._solve_triangular(F.adjoint(r), F.adjoint(d_a), False, False))
    x = F.matmul(F.adjoint(q), d_a_rinv)
    low = F.tri_part(x, False, strict=True)
    omega = low - F.adjoint(low)
    if F.is_complex(x):
        omega = omega + F.diag_embed(F.imag(F.diagonal(x, 0, -2, -1)) * 1j)
    upper = x - omega
    return d_a_rinv - F.matmul(q, upper), F.matmul(upper, r)


@helper
def svd_grad(F, g, self, U, S, Vh, full_matrices):
    g_u, g_s, g_vh = g
    u, s, vh = U, S, Vh
    m, n, k = self.shape[-2], self.shape[-1], s.shape[-1]
    if full_matrices:          # the extra vectors are arbitrary: no gradient flows from them
        last = len(self.shape) - 1
        u, g_u = F.narrow(u, last, 0, k), F.narrow(g_u, last, 0, k)
        vh, g_vh = F.narrow(vh, last - 1, 0, k), F.narrow(g_vh, last - 1, 0, k)
    with_u, with_v = not _is_zero(F, g_u), not _is_zero(F, g_vh)
    if not (with_u or with_v):
        return F.matmul(u * F.unsqueeze(g_s, -2), vh)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _svd_vectors_grad(F, (g_u, g_s, g_vh), (u, s, vh), (m, n, k))


def _svd_vectors_grad(F, grads, factors, sizes):
    (g_u, g_s, g_vh), (u, s, vh), (m, n, k) = grads, factors, sizes
    v = F.adjoint(vh)
    skew_u = _skew(F, F.matmul(F.adjoint(u), g_u))
    skew_v = _skew(F, F.matmul(vh, F.adjoint(g_vh)))
    if F.is_complex(u):
        _check_phase(F, F.imag(F.diagonal(skew_u + skew_v, 0, -2, -1)), "svd_backward",
                     "singular vectors", "phase term, making it ill-defined")
    s_row, s_col = F.unsqueeze(s, -2), F.unsqueeze(s, -1)
    gaps = _gap_matrix(F, s * s)
    _warn_if_repeated(F, gaps, "linalg.svd backward", "singular values")
    inner = _off_diagonal(F, (skew_u * s_row + s_col * skew_v) / gaps) + F.diag_embed(g_s)
    if F.is_complex(u):
        inner = inner + F.diag_embed(F.diagonal(skew_u, 0, -2, -1) / (s * 2))
    if m > k:
        g_u_sinv = g_u / s_row
        grad = F.matmul(u, inner) + g_u_sinv - F.matmul(u, F.matmul(F.adjoint(u), g_u_sinv))
        return F.matmul(grad, vh)
    if n > k:
        sinv_g_vh = g_vh / s_col
        grad = F.matmul(inner, vh) + sinv_g_vh - F.matmul(F.matmul(sinv_g_vh, v), vh)
        return F.matmul(u, grad)
    return F.matmul(F.matmul(u, inner), vh)


def _skew(F, x):
    return x - F.adjoint(x)


@helper
def svd_jvp(F, t, self, result, full_matrices):
    u, s, vh = result
    m, n, k = self.shape[-2], self.shape[-1], s.shape[-1]
    if full_matrices and m != n:
        raise NotImplementedError("the forward derivative of linalg.svd with "
                                  "full_matrices=True on a non-square input is not "
                                  "implemented; use full_matrices=False.")
    d_a = t[0]
    v = F.adjoint(vh)
    d_p = F.matmul(F.adjoint(u), F.matmul(d_a, v))
    d_ph = F.adjoint(d_p)
    s_row, s_col = F.unsqueeze(s, -2), F.unsqueeze(s, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gaps = _gap_matrix(F, s * s)
        omega_u = _off_diagonal(F, (d_p * s_row + s_col * d_ph) / gaps)
        omega_v = _off_diagonal(F, (s_col * d_p + d_ph * s_row) / gaps)
        if F.is_complex(d_p):
            omega_u = omega_u + F.diag_embed(F.imag(F.diagonal(d_p, 0, -2, -1)) / s * 1j)
        d_u, d_v = F.matmul(u, omega_u), F.matmul(v, omega_v)
        if m > k:
            d_u = d_u + (F.matmul(d_a, v) - F.matmul(u, d_p)) / s_row
        if n > k:
            d_v = d_v + (F.matmul(F.adjoint(d_a), u) - F.matmul(v, d_ph)) / s_row
    return d_u, F.real(F.diagonal(d_p, 0, -2, -1)), F.adjoint(d_v)


@helper
def eigh_grad(F, g, eigenvalues, eigenvectors):
    g_l, g_v = g
    values, vectors = eigenvalues, eigenvectors
    if _is_zero(F, g_v):
        return F.matmul(vectors * F.unsqueeze(g_l, -2), F.adjoint(vectors))
    vh_gv = F.matmul(F.adjoint(vectors), g_v)
    if F.is_complex(vh_gv):
        _check_phase(F, F.imag(F.diagonal(vh_gv, 0, -2, -1)), "linalg_eigh_backward",
                     "eigenvectors", "quantity, so it is ill-defined")
    gaps = _gap_matrix(F, values)
    _warn_if_repeated(F, gaps, "linalg.eigh backward", "eigenvalues")
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = F.diag_embed(g_l) + _off_diagonal(F, vh_gv / gaps)
        grad = F.matmul(F.matmul(vectors, inner), F.adjoint(vectors))
    return (grad + F.adjoint(grad)) * 0.5           # Hermitian, like the reference's


@helper
def eigh_jvp(F, t, result):
    values, vectors = result
    d_p = F.matmul(F.adjoint(vectors), F.matmul(t[0], vectors))
    with np.errstate(divide="ignore", invalid="ignore"):
        d_v = F.matmul(vectors, _off_diagonal(F, d_p / _gap_matrix(F, values)))
    return F.real(F.diagonal(d_p, 0, -2, -1)), d_v


@helper
def eig_grad(F, g, self, eigenvalues, eigenvectors):
    """gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H, the
    projection for eigenvectors of norm 1; real part for a real input."""
    g_l, g_v = g
    values, vectors = eigenvalues, eigenvectors
    vh = F.adjoint(vectors)
    inner = F.diag_embed(g_l)
    if not _is_zero(F, g_v):
        vh_gv = F.matmul(vh, g_v)
        diag = F.diagonal(vh_gv, 0, -2, -1)
        _check_phase(F, F.imag(diag), "linalg_eig_backward", "eigenvectors",
                     "quantity, so it is ill-defined")
        projected = vh_gv - F.matmul(vh, vectors) * F.unsqueeze(F.real(diag), -2)
        gaps = F.conj(_gap_matrix(F, values))
        _warn_if_repeated(F, gaps, "linalg.eig backward", "eigenvalues")
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = inner + _off_diagonal(F, projected / gaps)
    grad = F._linalg_solve(vh, F.matmul(inner, vh))
    return grad if F.is_complex(self) else F.real(grad)


@helper
def eig_jvp(F, t, result):
    values, vectors = result
    d_a = t[0] if F.is_complex(t[0]) else t[0] * (1 + 0j)
    d_p = F._linalg_solve(vectors, F.matmul(d_a, vectors))
    with np.errstate(divide="ignore", invalid="ignore"):
        d_v = F.matmul(vectors, _off_diagonal(F, d_p / _gap_matrix(F, values)))
    d_v = d_v - vectors * F.unsqueeze(F.real(F.diagonal(F.matmul(F.adjoint(vectors), d_v),
                                                        0, -2, -1)), -2)
    return F.diagonal(d_p, 0, -2, -1), d_v


@helper
def matrix_exp_block(F, a, e):
    """exp([[A, E], [0, A]]) = [[exp(A), L(A, E)], [0, exp(A)]]: its corner is the
    Fréchet derivative L(A, E), the JVP (and, with A^H and g, the VJP) of exp."""
    n, last = a.shape[-1], len(a.shape) - 1
    top = F.cat([a, e], -1)
    bottom = F.cat([a * 0, a], -1)
    big = F._matrix_exp(F.cat([top, bottom], -2))
    return F.narrow(F.narrow(big, last - 1, 0, n), last, n, n)


@helper
def pinv_grad(F, g, self, result):
    """P = pinv(A): gA = -P^H g P^H + (I - A P) g^H P P^H + P^H P g^H (I - P A)."""
    p, ph, gh = result, F.adjoint(result), F.adjoint(g)
    p_ph, ph_p = F.matmul(p, ph), F.matmul(ph, result)
    left = F.matmul(gh, p_ph)
    right = F.matmul(ph_p, gh)
    return (-F.matmul(F.matmul(ph, g), ph) + left - F.matmul(self, F.matmul(p, left))
            + right - F.matmul(F.matmul(right, p), self))


@helper
def pinv_jvp(F, t, self, result):
    p, d_a = result, t[0]
    d_ah = F.adjoint(d_a)
    p_ph, ph_p = F.matmul(p, F.adjoint(p)), F.matmul(F.adjoint(p), p)
    return (-F.matmul(F.matmul(p, d_a), p) + F.matmul(p_ph, d_ah)
            - F.matmul(F.matmul(F.matmul(p_ph, d_ah), self), p)
            + F.matmul(d_ah, ph_p) - F.matmul(F.matmul(p, self), F.matmul(d_ah, ph_p)))


@helper
def lstsq_grads(F, g, self, b, rcond, which, shape):
    p = F._pinv(self, None, rcond, False)
    if which == 1:
        return F.sum_to(F.matmul(F.adjoint(p), g), tuple(shape))
    return F.sum_to(F.pinv_grad(F.matmul(g, F.adjoint(b)), self, p), tuple(shape))


@helper
def lstsq_jvp(F, t, self, b, rcond):
    p = F._pinv(self, None, rcond, False)
    return F.matmul(F.pinv_jvp((t[0],), self, p), b) + F.matmul(p, t[1])



@helper
def lu_grad(F, g, P, L, U):
    """A = P L U (square; a wide or tall A splits into a square LU and a solve):
    gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H."""
    g_l, g_u = g[1], g[2]
    m, n = L.shape[-2], U.shape[-1]
    last = len(L.shape) - 1
    if m < n:
        u1, u2 = F.narrow(U, last, 0, m), F.narrow(U, last, m, n - m)
        g_u1, g_u2 = F.narrow(g_u, last, 0, m), F.narrow(g_u, last, m, n - m)
        g_x2 = F._solve_triangular(F.adjoint(L), g_u2, True, True)
        g_x1 = _lu_square_grad(F, g_l - F.matmul(g_x2, F.adjoint(u2)), g_u1, L, u1)
        return F.matmul(P, F.cat([g_x1, g_x2], -1))
    if m > n:
        l1, l2 = F.narrow(L, last - 1, 0, n), F.narrow(L, last - 1, n, m - n)
        g_l1, g_l2 = F.narrow(g_l, last - 1, 0, n), F.narrow(g_l, last - 1, n, m - n)
        g_b2 = _right_solve_upper(F, g_l2, U)
        g_b1 = _lu_square_grad(F, g_l1, g_u - F.matmul(F.adjoint(l2), g_b2), l1, U)
        return F.matmul(P, F.cat([g_b1, g_b2], -2))
    return F.matmul(P, _lu_square_grad(F, g_l, g_u, L, U))


def _lu_square_grad(F, g_l, g_u, L, U):
    inner = F.tri_part(F.matmul(F.adjoint(L), g_l), False, strict=True) + \
        F.tri_part(F.matmul(g_u, F.adjoint(U)), True)
    return _right_solve_upper(F, F._solve_triangular(F.adjoint(L), inner, True, True), U)


@helper
def lu_jvp(F, t, result):
    P, L, U = result
    m, n = L.shape[-2], U.shape[-1]
    last = len(L.shape) - 1
    b = F.matmul(F.transpose(P, -2, -1), t[0])
    if m < n:
        u1, u2 = F.narrow(U, last, 0, m), F.narrow(U, last, m, n - m)
        d_l, d_u1 = _lu_square_jvp(F, F.narrow(b, last, 0, m), L, u1)
        rest = F.narrow(b, last, m, n - m) - F.matmul(d_l, u2)
        return P * 0, d_l, F.cat([d_u1, F._solve_triangular(L, rest, False, True)], -1)
    if m > n:
        l1, l2 = F.narrow(L, last - 1, 0, n), F.narrow(L, last - 1, n, m - n)
        d_l1, d_u = _lu_square_jvp(F, F.narrow(b, last - 1, 0, n), l1, U)
        rest = F.narrow(b, last - 1, n, m - n) - F.matmul(l2, d_u)
        d_l2 = F.adjoint(F._solve_triangular(F.adjoint(U), F.adjoint(rest), False, False))
        return P * 0, F.cat([d_l1, d_l2], -2), d_u
    d_l, d_u = _lu_square_jvp(F, b, L, U)
    return P * 0, d_l, d_u


def _lu_square_jvp(F, b, L, U):
    """X = L^-1 B U^-1: dL = L tril(X, -1), dU = triu(X) U."""
    x = F._solve_triangular(L, b, False, True)
    x = F.adjoint(F._solve_triangular(F.adjoint(U), F.adjoint(x), False, False))
    return F.matmul(L, F.tri_part(x, False, strict=True)), F.matmul(F.tri_part(x, True), U)

# --- the table: decompositions, inverses, solvers ---------------------------------------------
DET = defop("linalg_det", lambda a: asarray(np.linalg.det(a)), inputs=("A",),
            vjp=(lambda F, g, A, result: F.det_grad(g, A, result),),
            jvp=lambda F, t, A, result: F.det_jvp(t, A, result))
SLOGDET = defop("linalg_slogdet", _slogdet_forward, inputs=("A",), multi_output=True,
                vjp=(lambda F, g, A, sign: F.slogdet_grad(g, A, sign),),
                jvp=lambda F, t, A, result: F.slogdet_jvp(t, A, result))
INV = defop("linalg_inv", _inv_forward, inputs=("A",), node_name="LinalgInvExBackward0",
            vjp=(lambda F, g, result: -F.matmul(F.matmul(F.adjoint(result), g),
                                                F.adjoint(result)),),
            jvp=lambda F, t, result: -F.matmul(F.matmul(result, t[0]), result))
SOLVE = defop("linalg_solve", _solve_forward, inputs=("A", "B"), node_name="LinalgSolveExBackward0",
              vjp=(lambda F, g, A, result: F.solve_grad_a(g, A, result),
                   lambda F, g, A, B_shape: F.solve_grad_b(g, A, B_shape)),
              jvp=lambda F, t, A, result: F._linalg_solve(A, t[1] - F.matmul(t[0], result)))
SOLVE_TRIANGULAR = defop(
    "linalg_solve_triangular", _solve_triangular_forward, inputs=("A", "B"),
    attrs=("upper", "unitriangular"),
    vjp=(lambda F, g, A, result, upper, unitriangular, A_shape:
         F.solve_triangular_grads(g, A, result, upper, unitriangular, 0, A_shape),
         lambda F, g, A, result, upper, unitriangular, B_shape:
         F.solve_triangular_grads(g, A, result, upper, unitriangular, 1, B_shape)),
    jvp=lambda F, t, A, result, upper, unitriangular: F._solve_triangular(
        A, t[1] - F.matmul(F.tri_part(t[0], upper, unitriangular), result), upper, unitriangular))
# --- cdist: the direct form and the matmul form of Euclidean distances ----------------
def _cdist_forward(x1, x2, p):
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    return _norm_forward(diff, p, (diff.ndim - 1,), False)


def _cdist_direction(F, x1, x2, result, p):
    """d dist_ij / d x1_i per coordinate, shaped (..., P, R, M); an inf-norm tie gets the
    whole gradient at every tied coordinate, as in the reference (vector_norm splits it)."""
    diff = F.unsqueeze(x1, -2) - F.unsqueeze(x2, -3)
    if p == float("inf"):
        return F.where(F.abs(diff) == F.unsqueeze(result, -1), F.sgn(diff), 0)
    return norm_direction(F, diff, p, result, (len(diff.shape) - 1,), False)


@helper
def cdist_grad(F, g, x1, x2, result, p, which, shape):
    """cdist's gradient for x1 (``which`` 0) or x2 (1): each distance's gradient summed
    over the other input's rows."""
    part = F.unsqueeze(g, -1) * _cdist_direction(F, x1, x2, result, p)
    rows = len(part.shape) - 2 - which
    return F.sum_to(F.sum(part, (rows,)) * (1 - 2 * which), tuple(shape))


@helper
def cdist_jvp(F, t, x1, x2, result, p):
    direction = _cdist_direction(F, x1, x2, result, p)
    return F.sum(direction * (F.unsqueeze(t[0], -2) - F.unsqueeze(t[1], -3)),
                 (len(direction.shape) - 1,))


def _euclidean_dist_forward(x1, x2):
    """sqrt(|a|^2 - 2 a.b + |b|^2) by one matmul of padded rows, clamped at 1e-30 (the
    reference's fast form: roundoff makes a zero distance about 1e-8)."""
    n1, n2 = (np.sum(x * x, -1, keepdims=True) for x in (x1, x2))
    a = np.concatenate([-2 * x1, n1, np.ones_like(n1)], -1)
    b = np.concatenate([x2, np.ones_like(n2), n2], -1)
    return np.sqrt(np.maximum(a @ np.swapaxes(b, -1, -2), 1e-30))


@helper
def euclidean_dist_grad(F, g, x1, x2, result, which):
    ratio = F.where(result == 0, 0, g / result)
    if which == 0:
        return x1 * F.sum(ratio, (len(ratio.shape) - 1,), True) - F.matmul(ratio, x2)
    return (x2 * F.unsqueeze(F.sum(ratio, (len(ratio.shape) - 2,)), -1)
            - F.matmul(F.transpose(ratio, -1, -2), x1))


@helper
def euclidean_dist_jvp(F, t, x1, x2, result):
    last = len(x1.shape) - 1
    along = (F.sum(x1 * t[0], (last,), True) + F.transpose(F.sum(x2 * t[1], (last,), True), -1, -2)
             - F.matmul(x1, F.transpose(t[1], -1, -2)) - F.matmul(t[0], F.transpose(x2, -1, -2)))
    return F.where(result == 0, 0, along / result)


CDIST = defop("_cdist_forward", _cdist_forward, inputs=("x1", "x2"), attrs=("p",),
              node_name="CdistBackward0",
              vjp=(lambda F, g, x1, x2, result, p, x1_shape:
                   F.cdist_grad(g, x1, x2, result, p, 0, x1_shape),
                   lambda F, g, x1, x2, result, p, x2_shape:
                   F.cdist_grad(g, x1, x2, result, p, 1, x2_shape)),
              jvp=lambda F, t, x1, x2, result, p: F.cdist_jvp(t, x1, x2, result, p))
EUCLIDEAN_DIST = defop("_euclidean_dist", _euclidean_dist_forward, inputs=("x1", "x2"),
                       vjp=(lambda F, g, x1, x2, result: F.euclidean_dist_grad(g, x1, x2, result, 0),
                            lambda F, g, x1, x2, result: F.euclidean_dist_grad(g, x1, x2, result, 1)),
                       jvp=lambda F, t, x1, x2, result: F.euclidean_dist_jvp(t, x1, x2, result))
CHOLESKY = defop("linalg_cholesky", _cholesky_forward, inputs=("A",), attrs=("upper",),
                 node_name="LinalgCholeskyExBackward0",
                 vjp=(lambda F, g, result, upper: F.cholesky_grad(g, result, upper),),
                 jvp=lambda F, t, result, upper: F.cholesky_jvp(t, result, upper))
CHOLESKY_SOLVE = defop(
    "cholesky_solve", _cholesky_solve_forward, inputs=("self", "input2"), attrs=("upper",),
    vjp=(lambda F, g, input2, upper, self_shape:
         F.sum_to(F._cholesky_solve(g, input2, upper), tuple(self_shape)),
         lambda F, g, input2, result, upper, input2_shape:
         F.cholesky_solve_grad_factor(g, input2, result, upper, input2_shape)),
    jvp=lambda F, t, input2, result, upper: F._cholesky_solve(
        t[0] - F.matmul(cholesky_product_jvp(F, t[1], input2, upper), result), input2, upper))
CHOLESKY_INVERSE = defop(
    "cholesky_inverse", _cholesky_inverse_forward, attrs=("upper",),
    vjp=(lambda F, g, self, result, upper: F.cholesky_inverse_grad(g, self, result, upper),),
    jvp=lambda F, t, self, result, upper: -F.matmul(
        result, F.matmul(cholesky_product_jvp(F, t[0], self, upper), result)))
QR = defop("linalg_qr", _qr_forward, inputs=("A",), attrs=("mode",), multi_output=True,
           vjp=(lambda F, g, A, Q, R, mode: F.qr_grad(g, A, Q, R, mode),),
           jvp=lambda F, t, A, result, mode: F.qr_jvp(t, A, result, mode))
SVD = defop("linalg_svd", _svd_forward, inputs=("A",), attrs=("full_matrices",),
            multi_output=True,
            vjp=(lambda F, g, A, U, S, Vh, full_matrices:
                 F.svd_grad(g, A, U, S, Vh, full_matrices),),
            jvp=lambda F, t, A, result, full_matrices: F.svd_jvp(t, A, result, full_matrices))
EIGH = defop("linalg_eigh", _eigh_forward, inputs=("A",), attrs=("UPLO",), multi_output=True,
             vjp=(lambda F, g, eigenvalues, eigenvectors:
                  F.eigh_grad(g, eigenvalues, eigenvectors),),
             jvp=lambda F, t, result: F.eigh_jvp(t, result))
EIG = defop("linalg_eig", _eig_forward, inputs=("A",), multi_output=True,
            vjp=(lambda F, g, A, eigenvalues, eigenvectors:
                 F.eig_grad(g, A, eigenvalues, eigenvectors),),
            jvp=lambda F, t, result: F.eig_jvp(t, result))
MATRIX_EXP = defop("linalg_matrix_exp", _matrix_exp_forward, inputs=("A",),
                   vjp=(lambda F, g, A: F.matrix_exp_block(F.adjoint(A), g),),
                   jvp=lambda F, t, A: F.matrix_exp_block(A, t[0]))
PINV = defop("linalg_pinv", _pinv_forward, inputs=("A",), attrs=("atol", "rtol", "hermitian"),
             vjp=(lambda F, g, A, result: F.pinv_grad(g, A, result),),
             jvp=lambda F, t, A, result: F.pinv_jvp(t, A, result))
LSTSQ = defop("linalg_lstsq", _lstsq_forward, inputs=("A", "B"), attrs=("rcond",),
              vjp=(lambda F, g, A, B, rcond, A_shape: F.lstsq_grads(g, A, B, rcond, 0, A_shape),
                   lambda F, g, A, B, rcond, B_shape: F.lstsq_grads(g, A, B, rcond, 1, B_shape)),
              jvp=lambda F, t, A, B, rcond: F.lstsq_jvp(t, A, B, rcond))
LU = defop("linalg_lu", _lu_forward, inputs=("A",), multi_output=True,
           vjp=(lambda F, g, P, L, U: F.lu_grad(g, P, L, U),),
           jvp=lambda F, t, result: F.lu_jvp(t, result))
CROSS = defop("linalg_cross", _cross_forward, inputs=("self", "other"), attrs=("dim",),
              vjp=(lambda F, g, other, dim, self_shape:
                   F.sum_to(F._cross(F.conj(other), g, dim), tuple(self_shape)),
                   lambda F, g, self, dim, other_shape:
                   F.sum_to(F._cross(g, F.conj(self), dim), tuple(other_shape))),
              jvp=lambda F, t, self, other, dim: F._cross(t[0], other, dim)
              + F._cross(self, t[1], dim))


# --- the ops as formula functions: ndarray twins in ARRAY_NS, recorded ones in TENSOR_NS ---
def _twin(name, op, forward, attrs=()):
    """Register ``forward`` (arrays) as ARRAY_NS.<name> and a function applying ``op`` to
    Tensors as its TENSOR_NS twin; positional arguments after the inputs are ``attrs``."""
    n_inputs = len(op.inputs)

    def on_arrays(*args):
        return forward(*args)

    def on_tensors(*args):
        return apply_op(op, tuple(args[:n_inputs]), dict(zip(attrs, args[n_inputs:])))
    on_tensors.__name__ = on_arrays.__name__ = name
    array_fn(name)(on_arrays)
    formula_helper(on_tensors)


_twin("_linalg_inv", INV, _inv_forward)
_twin("_linalg_solve", SOLVE, _solve_forward)
_twin("_solve_triangular", SOLVE_TRIANGULAR, _solve_triangular_forward, ("upper", "unitriangular"))
_twin("_cholesky_solve", CHOLESKY_SOLVE, _cholesky_solve_forward, ("upper",))
_twin("_matrix_exp", MATRIX_EXP, _matrix_exp_forward)

_twin("_pinv", PINV, _pinv_forward, ("atol", "rtol", "hermitian"))
_twin("_cross", CROSS, _cross_forward, ("dim",))


# Note [linalg saved outputs]: the names each decomposition's formulas give its outputs.
_OUTPUT_NAMES = {SLOGDET: ("sign", "logabsdet"), QR: ("Q", "R"), SVD: ("U", "S", "Vh"),
                 EIGH: ("eigenvalues", "eigenvectors"), EIG: ("eigenvalues", "eigenvectors"),
                 LU: ("P", "L", "U")}


def decompose(op, inputs, attrs):
    """Apply a multi-output decomposition op and save its outputs for its backward."""
    outs = apply_op(op, inputs, attrs)
    node = outs[0].grad_fn
    if node is not None and getattr(type(node), "_op", None) is op:
        for k, name in enumerate(_OUTPUT_NAMES[op]):
            node._saved[name] = SavedTensor(outs[k], True, k)
    return outs
