"""Derivative table: matrix products (matmul, mm, bmm, mv, dot, outer, einsum).

Complex inputs follow the conjugate-Wirtinger convention: for ``C = A @ B`` the
VJPs are ``gA = g @ B^H`` and ``gB = A^H @ g``.
"""
import functools
import string

import numpy as np

from .._tensor import Tensor
from ._common import (EMPTY, FUNCTIONS, broadcast_error, check_same_dtype, promote, public,
                      require_tensor)
from ._formula_helpers import helper
from ._namespaces import array_fn
from ._registry import apply_op, defop

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
    return F.matmul(t[0], other) + F.matmul(self, t[1])


def _matmul_forward(a, b):
    """np.matmul, with a batched ``a`` times a matrix folded into one product."""
    if a.ndim > 2 and b.ndim <= 2 and a.flags.c_contiguous:
        k = a.shape[-1]
        out = np.matmul(a.reshape(_numel(a.shape[:-1]), k), b)
        return out.reshape(a.shape[:-1] + b.shape[1:])
    return np.matmul(a, b)


MM = defop("mm", np.matmul, inputs=("self", "mat2"),
           vjp=(lambda F, g, mat2: F.matmul(g, F.adjoint(mat2)),
                lambda F, g, self: F.matmul(F.adjoint(self), g)),
           jvp=lambda F, t, self, mat2: _product_jvp(F, t, self, mat2))
BMM = defop("bmm", np.matmul, inputs=("self", "mat2"),
            vjp=(lambda F, g, mat2: F.matmul(g, F.adjoint(mat2)),
                 lambda F, g, self: F.matmul(F.adjoint(self), g)),
            jvp=lambda F, t, self, mat2: _product_jvp(F, t, self, mat2))
MV = defop("mv", np.matmul, inputs=("self", "vec"),
           vjp=(lambda F, g, vec: F.outer(g, F.conj(vec)),
                lambda F, g, self: F.matmul(F.conj(F.transpose(self, 0, 1)), g)),
           jvp=lambda F, t, self, vec: _product_jvp(F, t, self, vec))
DOT = defop("dot", lambda a, b: np.asarray(np.dot(a, b)), inputs=("self", "tensor"),
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


_MM_DTYPE = "expected m1 and m2 to have the same dtype, but got: {a_low} != {b_low}"


def _check_mm(a, b):
    check_same_dtype(a, b, _MM_DTYPE)
    sa, sb = a._data.shape, b._data.shape
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims(sa)} and "
                           f"{_dims(sb)})")


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


def _check_mv(a, v):
    if a._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a._data.ndim}, "
                           f"{v._data.ndim}")
    check_same_dtype(a, v, "expected scalar type {a} but found {b}")
    if a._data.shape[1] != v._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a._data.shape[0]}), mat "
                           f"({_dims(a._data.shape)}), vec ({v._data.shape[0]})")


def _check_batched(a, b):
    """Inner sizes and batch broadcasting of the general matmul case."""
    sa, sb = a._data.shape, b._data.shape
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if len(sb) <= 2 and len(sa) > 2:          # torch folds this case into one mm
        rows = _numel(sa[:-1])
        if k_a != k_b and len(sb) == 1:
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k_a}), vec "
                               f"({k_b})")
        if k_a != k_b:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k_a} and "
                               f"{_dims(sb)})")
        return
    batch_a, batch_b = sa[:-2], sb[:-2]
    try:
        batch = np.broadcast_shapes(batch_a, batch_b)
    except ValueError:
        raise broadcast_error(batch_a, batch_b) from None
    if k_a != k_b:
        n = _numel(batch)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {k_a}] but got: [{n}, {k_b}].")


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
    check_same_dtype(a, b, _MM_DTYPE)
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
    check_same_dtype(a, b, "expected scalar type {a} but found {b}")
    sa, sb = a._data.shape, b._data.shape
    if sb[:2] != (sa[0], sa[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}].")
    return apply_op(BMM, (a, b), EMPTY)


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
    if len(arrays) < 2:
        return np.einsum(equation, *arrays)
    optimize = _einsum_work(equation, tuple(a.shape for a in arrays)) > _OPTIMIZE_WORK
    return np.asarray(np.einsum(equation, *arrays, optimize=optimize))


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
    extra = [np.ones(n, dtype) if kind == "ones" else np.eye(n, dtype=dtype)
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
    tensors = [o if isinstance(o, Tensor) else Tensor._wrap(np.asarray(o)) for o in operands]
    for t in tensors[1:]:
        check_same_dtype(tensors[0], t, "expected scalar type {a} but found {b}")
    terms, out, sizes = _parse_einsum(equation, tuple(t._data.shape for t in tensors))
    live = list(tensors)
    for i, j, eq in _contraction_plan(terms, out, sizes):
        if j is None:
            live = [apply_op(EINSUM, (live[0], _one_like(live[0])), {"equation": eq})]
            continue
        a, b = live[i], live[j]
        live = [t for k, t in enumerate(live) if k not in (i, j)]
        live.append(apply_op(EINSUM, (a, b), {"equation": eq}))
    return live[0]
