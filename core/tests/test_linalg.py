"""Matrix products: matmul (every shape case), mm, bmm, mv, dot, vdot, outer, einsum.

Values against NumPy, errors against the reference's messages, gradients (first and
second order, real and complex) against finite differences, and against torch where
it is installed (the ``torch`` fixture skips otherwise).
"""
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((3,), (5, 3, 4)),
    ((5, 2, 3), (3,)), ((1, 2, 3), (5, 3, 4)), ((6, 1, 2, 3), (5, 3, 4)),
    ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((0, 2, 3), (3, 4)), ((2, 3), (3, 0)),
]


def _random(rng, shape, dtype=np.float64):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return np.asarray(x, dtype=dtype)


def _leaf(arr):
    return cr.tensor(arr, requires_grad=True)


# --- matmul values ------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
def test_matmul_matches_numpy(rng, shapes, dtype):
    a, b = (_random(rng, s, dtype) for s in shapes)
    out = cr.matmul(cr.tensor(a), cr.tensor(b))
    expected = np.matmul(a, b)
    assert out.shape == expected.shape
    assert out.numpy().dtype == np.result_type(a, b)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_matmul_operator_and_methods(rng):
    a, b = _random(rng, (2, 3)), _random(rng, (3, 4))
    ta, tb = cr.tensor(a), cr.tensor(b)
    for out in (ta @ tb, ta.matmul(tb), ta.mm(tb), cr.mm(ta, tb)):
        np.testing.assert_allclose(out.numpy(), a @ b)
    np.testing.assert_allclose((ta @ b).numpy(), a @ b)        # Tensor @ ndarray
    with pytest.raises(TypeError, match="for @: 'numpy.ndarray' and 'Tensor'"):
        a @ tb                                                   # as in the reference
    v = _random(rng, (3,))
    np.testing.assert_allclose(ta.mv(cr.tensor(v)).numpy(), a @ v)
    np.testing.assert_allclose(cr.tensor(v).dot(cr.tensor(v)).numpy(), v @ v)


def test_batched_matmul_folds_into_one_product_and_stays_contiguous(rng):
    a, b = _random(rng, (4, 5, 3)), _random(rng, (3, 2))
    out = cr.matmul(cr.tensor(a), cr.tensor(b))
    assert out.is_contiguous()
    np.testing.assert_allclose(out.numpy(), a @ b)
    # a non-contiguous batched operand takes the plain broadcast route
    out = cr.matmul(cr.tensor(a).transpose(0, 1), cr.tensor(b))
    np.testing.assert_allclose(out.numpy(), a.transpose(1, 0, 2) @ b)


@pytest.mark.parametrize("shapes, name", [
    (((3,), (3,)), "DotBackward0"), (((2, 3), (3,)), "MvBackward0"),
    (((2, 3), (3, 4)), "MmBackward0"), (((5, 2, 3), (5, 3, 4)), "UnsafeViewBackward0"),
    (((5, 2, 3), (3, 4)), "UnsafeViewBackward0"), (((3,), (5, 3, 4)), "UnsafeViewBackward0")])
def test_matmul_grad_fn_names_follow_the_reference(rng, shapes, name):
    a, b = (_leaf(_random(rng, s)) for s in shapes)
    assert cr.matmul(a, b).grad_fn.name() == name


def test_grad_fn_names_of_the_named_products(rng):
    a = _leaf(_random(rng, (2, 2, 3)))
    assert cr.bmm(a, _leaf(_random(rng, (2, 3, 1)))).grad_fn.name() == "BmmBackward0"
    assert cr.mm(a[0], _leaf(_random(rng, (3, 2)))).grad_fn.name() == "MmBackward0"
    assert cr.outer(a[0, 0], a[0, 1]).grad_fn.name() == "MulBackward0"


# --- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("fn, shapes, message", [
    (cr.matmul, ((2, 3), (4, 5)), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    (cr.mm, ((2, 3), (4, 5)), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    (cr.matmul, ((3,), (4,)), r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
    (cr.matmul, ((2, 3), (4,)), r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"),
    (cr.matmul, ((5, 2, 3), (4,)), r"size mismatch, got input \(10\), mat \(10x3\), vec \(4\)"),
    (cr.matmul, ((5, 2, 3), (4, 2)),
     r"mat1 and mat2 shapes cannot be multiplied \(10x3 and 4x2\)"),
    (cr.matmul, ((5, 2, 3), (5, 4, 4)),
     r"Expected size for first two dimensions of batch2 tensor to be: \[5, 3\] but got: "
     r"\[5, 4\]"),
    (cr.matmul, ((3, 2, 3), (5, 3, 4)),
     r"The size of tensor a \(3\) must match the size of tensor b \(5\) at non-singleton "
     r"dimension 0"),
    (cr.matmul, ((), (3,)), "both arguments to matmul need to be at least 1D, but they are "
                            "0D and 1D"),
    (cr.mm, ((2, 3, 3), (3, 5)), "self must be a matrix"),
    (cr.mm, ((2, 3), (3,)), "mat2 must be a matrix"),
    (cr.bmm, ((2, 3), (3, 5)), "batch1 must be a 3D tensor"),
    (cr.bmm, ((2, 2, 3), (2, 3)), "batch2 must be a 3D tensor"),
    (cr.bmm, ((2, 2, 3), (3, 3, 5)),
     r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] but got: "
     r"\[3, 3\]"),
    (cr.dot, ((2, 3), (2, 3)), "1D tensors expected, but got 2D and 2D tensors"),
    (cr.mv, ((2,), (2,)), "vector \\+ matrix @ vector expected, got 1, 1, 1"),
    (cr.outer, ((2, 2), (3,)), "outer: Expected 1-D argument self, but got 2-D"),
])
def test_shape_errors_use_the_reference_wording(fn, shapes, message):
    a, b = (cr.zeros(*s) for s in shapes)
    with pytest.raises(RuntimeError, match=message):
        fn(a, b)


def test_dtype_mismatch_errors():
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but "
                                           "got: double != float"):
        cr.matmul(cr.zeros(2, 3, dtype=cr.float64), cr.zeros(3, 2))
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype, "
                                           "but found Double and Float"):
        cr.dot(cr.zeros(3, dtype=cr.float64), cr.zeros(3))
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        cr.bmm(cr.zeros(1, 2, 3, dtype=cr.float64), cr.zeros(1, 3, 2))
    # outer promotes like the elementwise product it is
    assert cr.outer(cr.zeros(2, dtype=cr.float64), cr.zeros(3)).dtype == cr.float64


@pytest.mark.parametrize("product", [cr.mv, cr.matmul, lambda a, v: a @ v])
def test_matrix_vector_dtype_mismatch_is_addmv_s_error(product):
    # the reference's addmv kernel names the vector's dtype, the matrix's, the vector's
    with pytest.raises(RuntimeError, match="addmv input tensors must have the same dtype, but "
                                           "got Double, Float, and Double"):
        product(cr.zeros(2, 3), cr.zeros(3, dtype=cr.float64))
    with pytest.raises(RuntimeError, match="addmv input tensors must have the same dtype, but "
                                           "got Float, ComplexFloat, and Float"):
        product(cr.zeros(2, 3, dtype=cr.complex64), cr.zeros(3))


def test_non_tensor_arguments_raise_type_error():
    with pytest.raises(TypeError, match=r"matmul\(\): argument 'other' \(position 2\) must be "
                                        r"Tensor, not list"):
        cr.matmul(cr.zeros(2), [1.0, 2.0])


# --- gradients ----------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [s for s in MATMUL_SHAPES if 0 not in s[0] + s[1]],
                         ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_matmul_gradients(rng, shapes, dtype):
    a, b = (_leaf(_random(rng, s, dtype)) for s in shapes)
    assert gradcheck(cr.matmul, (a, b))
    assert gradgradcheck(cr.matmul, (a, b))


def test_matmul_gradient_formulas_match_the_conjugate_convention(rng):
    a, b = _random(rng, (2, 3), np.complex128), _random(rng, (3, 4), np.complex128)
    g = _random(rng, (2, 4), np.complex128)
    ta, tb = _leaf(a), _leaf(b)
    cr.matmul(ta, tb).backward(cr.tensor(g))
    np.testing.assert_allclose(ta.grad.numpy(), g @ b.conj().T)
    np.testing.assert_allclose(tb.grad.numpy(), a.conj().T @ g)


def test_broadcast_batch_gradients_sum_over_the_broadcast_dims(rng):
    a, b = _random(rng, (1, 2, 3)), _random(rng, (4, 3, 5))
    ta, tb = _leaf(a), _leaf(b)
    g = _random(rng, (4, 2, 5))
    cr.matmul(ta, tb).backward(cr.tensor(g))
    np.testing.assert_allclose(ta.grad.numpy(), (g @ b.transpose(0, 2, 1)).sum(0,
                                                                                keepdims=True))
    np.testing.assert_allclose(tb.grad.numpy(), a.transpose(0, 2, 1) @ g)


@pytest.mark.parametrize("fn, shapes", [
    (cr.mm, ((2, 3), (3, 4))), (cr.bmm, ((2, 2, 3), (2, 3, 4))), (cr.mv, ((2, 3), (3,))),
    (cr.dot, ((3,), (3,))), (cr.outer, ((3,), (2,))), (cr.vdot, ((3,), (3,)))])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_named_product_gradients(rng, fn, shapes, dtype):
    inputs = tuple(_leaf(_random(rng, s, dtype)) for s in shapes)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_hessian_of_a_quadratic_form(rng):
    """d2/dx2 of x^T A x is A + A^T: double backward through mv and dot."""
    a = rng.standard_normal((3, 3))
    x = _leaf(rng.standard_normal(3))
    (grad,) = cr.autograd.grad(cr.dot(x, cr.mv(cr.tensor(a), x)), x, create_graph=True)
    rows = [cr.autograd.grad(grad[i], x, retain_graph=True)[0].numpy() for i in range(3)]
    np.testing.assert_allclose(np.stack(rows), a + a.T)


def test_vdot_conjugates_its_first_argument(rng):
    a, b = _random(rng, (4,), np.complex128), _random(rng, (4,), np.complex128)
    np.testing.assert_allclose(cr.vdot(cr.tensor(a), cr.tensor(b)).item(), np.vdot(a, b))


# --- einsum ---------------------------------------------------------------------------------
EINSUM_CASES = [
    ("ij,jk->ik", (2, 3), (3, 4)), ("ij,jk", (2, 3), (3, 4)), ("ii->i", (3, 3)),
    ("ii", (3, 3)), ("ij->ji", (2, 3)), ("ij->", (2, 3)), ("ij->i", (2, 3)),
    ("bij,bjk->bik", (2, 2, 3), (2, 3, 2)), ("...ij,...jk->...ik", (2, 1, 2, 3), (3, 3, 2)),
    ("...ij,...jk", (2, 1, 2, 3), (3, 3, 2)), ("i,i->", (3,), (3,)), ("i,j->ij", (3,), (2,)),
    ("ij,ij->ij", (3, 1), (3, 2)), ("iij,jk->ik", (2, 2, 3), (3, 2)),
    ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)), ("ij,jk,kl,l->i", (2, 3), (3, 4), (4, 2), (2,)),
    ("i,i,i->i", (3,), (3,), (3,)), ("...i->", (2, 3)), ("a...,...b->ab", (2, 3), (3, 4)),
    ("ii,i->i", (3, 3), (3,)), ("Bi,aB", (3, 4), (2, 3)), ("ij,k->", (2, 3), (4,)),
    ("iji->j", (2, 3, 2)), ("ij,ij,ij->", (2, 3), (2, 3), (2, 3)), ("...,...", (2, 3), (3,)),
]


# NumPy cannot sum '...' away; the reference (and chainrule) can.
NUMPY_SPELLING = {"...i->": "ij->", "a...,...b->ab": "ai,ib->ab"}


def _numpy_einsum(equation, *arrays):
    return np.einsum(NUMPY_SPELLING.get(equation, equation), *arrays)


@pytest.mark.parametrize("case", EINSUM_CASES, ids=lambda c: c[0])
def test_einsum_matches_numpy(rng, case):
    equation, *shapes = case
    arrays = [_random(rng, s) for s in shapes]
    out = cr.einsum(equation, *[cr.tensor(a) for a in arrays])
    np.testing.assert_allclose(out.numpy(), _numpy_einsum(equation, *arrays), atol=1e-12)


@pytest.mark.parametrize("case", EINSUM_CASES, ids=lambda c: c[0])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_einsum_gradients(rng, case, dtype):
    equation, *shapes = case
    inputs = tuple(_leaf(_random(rng, s, dtype)) for s in shapes)
    fn = lambda *ops: cr.einsum(equation, *ops)  # noqa: E731
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_einsum_argument_forms(rng):
    a, b = _random(rng, (2, 3)), _random(rng, (3, 4))
    ta, tb = cr.tensor(a), cr.tensor(b)
    expected = a @ b
    for out in (cr.einsum("ij,jk->ik", [ta, tb]), cr.einsum(" i j , j k -> i k ", ta, tb),
                cr.einsum(ta, [0, 1], tb, [1, 2], [0, 2]), cr.einsum(ta, [0, 1], tb, [1, 2]),
                cr.einsum(ta, [Ellipsis, 1], tb, [1, 2], [Ellipsis, 2])):
        np.testing.assert_allclose(out.numpy(), expected)


def test_einsum_same_tensor_twice_accumulates_both_gradients(rng):
    x = _leaf(_random(rng, (4,)))
    cr.einsum("i,i->", x, x).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_einsum_trace_gradient_is_identity():
    x = _leaf(np.arange(9.0).reshape(3, 3))
    cr.einsum("ii", x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3))


def test_einsum_broadcast_subscript_backward():
    """Issue 9, wrong today 1: 'k' has size 2 in a and 1 in b; torch gives both grads."""
    a = _leaf(np.arange(6.0).reshape(3, 2))
    b = _leaf(np.array([[1.0], [2.0], [3.0]]))
    cr.einsum("ik,jk->ij", a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((3, 2), 6.0))
    np.testing.assert_array_equal(b.grad.numpy(), [[15.0], [15.0], [15.0]])


@pytest.mark.parametrize("equation, shapes", [
    ("ik,jk->ij", ((3, 1), (3, 2))), ("ij,j->i", ((3, 2), (1,))), ("i,i->", ((1,), (4,))),
    ("b...,b...->b", ((2, 3), (2, 1))), ("ii,i->i", ((3, 3), (1,))),
    ("ik,jk,kl->il", ((2, 1), (3, 4), (4, 2)))], ids=str)
def test_einsum_broadcast_subscripts_match_torch(torch, rng, equation, shapes):
    arrays = [_random(rng, s) for s in shapes]
    g = _random(rng, tuple(cr.einsum(equation, *[cr.tensor(a) for a in arrays]).shape))
    ours, our_grads = _cr_grads(lambda *t: cr.einsum(equation, *t), arrays, g)
    theirs, their_grads = _torch_grads(torch, lambda *t: torch.einsum(equation, *t), arrays, g)
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_einsum_large_contraction_uses_the_blas_route(rng):
    a, b = _random(rng, (64, 128), np.float32), _random(rng, (128, 96), np.float32)
    out = cr.einsum("ij,jk->ik", cr.tensor(a), cr.tensor(b))
    assert out.dtype == cr.float32
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("equation, shapes, message", [
    ("ij,jk->ik", ((2, 3), (4, 4)), "einsum\\(\\): subscript j has size 4 for operand 1 which "
                                    "does not broadcast with previously seen size 3"),
    ("ii->i", ((3, 4),), "einsum\\(\\): subscript i is repeated for operand 0 but the sizes "
                         "don't match, 4 != 3"),
    ("ij->jj", ((3, 4),), "einsum\\(\\): output subscript j appears more than once in the "
                          "output"),
    ("ij", ((3, 4, 5),), "einsum\\(\\): the number of subscripts in the equation \\(2\\) does "
                         "not match the number of dimensions \\(3\\) for operand 0 and no "
                         "ellipsis was given"),
    ("ij,jk", ((3, 4),), "einsum\\(\\): fewer operands were provided than specified in the "
                         "equation"),
    ("ij", ((2, 3), (3, 4)), "einsum\\(\\): more operands were provided than specified in the "
                             "equation"),
    ("ij->k", ((3, 4),), "einsum\\(\\): output subscript k does not appear in the equation "
                         "for any input operand"),
    ("i.j", ((2, 3),), "einsum\\(\\): found '.' for operand 0 that is not part of any "
                       "ellipsis"),
    ("i1", ((2, 3),), "einsum\\(\\): invalid subscript given at index 1 in the equation "
                      "string, subscripts must be in \\[a-zA-Z\\]"),
    ("ijk...", ((2, 3),), "einsum\\(\\): the number of subscripts in the equation \\(3\\) is "
                          "more than the number of dimensions \\(2\\) for operand 0"),
])
def test_einsum_errors(equation, shapes, message):
    with pytest.raises(RuntimeError, match=message):
        cr.einsum(equation, *[cr.zeros(*s) for s in shapes])


def test_einsum_dtype_mismatch():
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        cr.einsum("ij,jk", cr.zeros(2, 3, dtype=cr.float64), cr.zeros(3, 4))


def test_einsum_promotes_where_the_reference_multiplies_or_sums():
    # Note [einsum dtypes]: no shared summed subscript is a product that promotes, and a
    # subscript summed alone makes integers int64; the gradients come back in each dtype
    a = cr.tensor([1., 2.], requires_grad=True)
    b = cr.tensor([3., 4., 5.], dtype=cr.float64, requires_grad=True)
    outer = cr.einsum("i,j->ij", a, b)
    outer.sum().backward()
    assert outer.dtype == cr.float64
    assert (a.grad.dtype, a.grad.tolist()) == (cr.float32, [12.0, 12.0])
    assert (b.grad.dtype, b.grad.tolist()) == (cr.float64, [3.0, 3.0, 3.0])
    column_sums = cr.einsum("ij->j", cr.tensor([[1, 2], [3, 4]], dtype=cr.int8))
    assert (column_sums.dtype, column_sums.tolist()) == (cr.int64, [4, 6])
    with pytest.raises(NotImplementedError, match="\"bmm\" not implemented for 'Bool'"):
        cr.einsum("ij,jk->ik", cr.ones(2, 2, dtype=cr.bool), cr.ones(2, 2, dtype=cr.bool))


# --- torch parity -----------------------------------------------------------------------------
def _torch_grads(torch, fn, arrays, g):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    out.backward(torch.tensor(g))
    return out.detach().numpy(), [t.grad.numpy() for t in ts]


def _cr_grads(fn, arrays, g):
    ts = [_leaf(a) for a in arrays]
    out = fn(*ts)
    out.backward(cr.tensor(g))
    return out.detach().numpy(), [t.grad.numpy() for t in ts]


@pytest.mark.parametrize("shapes", [s for s in MATMUL_SHAPES], ids=str)
def test_matmul_parity_with_torch(torch, rng, shapes):
    arrays = [_random(rng, s, np.complex128) for s in shapes]
    expected_shape = np.matmul(*arrays).shape
    g = _random(rng, expected_shape, np.complex128)
    ours, our_grads = _cr_grads(cr.matmul, arrays, g)
    theirs, their_grads = _torch_grads(torch, torch.matmul, arrays, g)
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("case", EINSUM_CASES, ids=lambda c: c[0])
def test_einsum_parity_with_torch(torch, rng, case):
    equation, *shapes = case
    arrays = [_random(rng, s) for s in shapes]
    g = _random(rng, _numpy_einsum(equation, *arrays).shape)
    ours, our_grads = _cr_grads(lambda *t: cr.einsum(equation, *t), arrays, g)
    theirs, their_grads = _torch_grads(torch, lambda *t: torch.einsum(equation, *t), arrays, g)
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, atol=1e-12)


# === chainrule.linalg ===========================================================================
from chainrule._ops import ARRAY_NS, TENSOR_NS  # noqa: E402
from chainrule._ops import linalg as linalg_ops  # noqa: E402

LA = cr.linalg


def _spd(rng, shape, dtype=np.float64):
    a = _random(rng, shape, dtype)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


def _hermitian(rng, shape, dtype=np.float64):
    a = _random(rng, shape, dtype)
    return a + np.conj(np.swapaxes(a, -1, -2))


def _abs2(x):
    return (x * np.conj(x)).real


# --- JVPs of the table ops: finite differences, in both namespaces ------------------------------
def _jvp_cases(rng):
    """(op, input arrays, attrs, tangents, output maps): the maps read every output
    through a function that does not depend on the vectors' phases."""
    ident = None
    cases = []
    for dtype in (np.float64, np.complex128):
        a = _random(rng, (2, 3, 3), dtype) + 4 * np.eye(3)
        b = _random(rng, (3, 2), dtype)
        h, spd = _hermitian(rng, (2, 3, 3), dtype), _spd(rng, (2, 3, 3), dtype)
        t_h, t_spd = _hermitian(rng, (2, 3, 3), dtype), _hermitian(rng, (2, 3, 3), dtype)
        vec_maps = (ident, _abs2)
        cases += [
            (linalg_ops.DET, [a], {}, None, None),
            (linalg_ops.SLOGDET, [a], {}, None, None),
            (linalg_ops.INV, [a], {}, None, None),
            (linalg_ops.SOLVE, [a, b], {}, None, None),
            (linalg_ops.SOLVE_TRIANGULAR, [a, b], {"upper": True, "unitriangular": False},
             None, None),
            (linalg_ops.SOLVE_TRIANGULAR, [a, b], {"upper": False, "unitriangular": True},
             None, None),
            (linalg_ops.CHOLESKY, [spd], {"upper": False}, [t_spd], None),
            (linalg_ops.CHOLESKY, [spd], {"upper": True}, [t_spd], None),
            (linalg_ops.CHOLESKY_SOLVE, [b, a], {"upper": False}, None, None),
            (linalg_ops.CHOLESKY_SOLVE, [b, a], {"upper": True}, None, None),
            (linalg_ops.CHOLESKY_INVERSE, [a], {"upper": False}, None, None),
            (linalg_ops.CHOLESKY_INVERSE, [a], {"upper": True}, None, None),
            (linalg_ops.QR, [_random(rng, (4, 3), dtype)], {"mode": "reduced"}, None, None),
            (linalg_ops.QR, [_random(rng, (2, 3, 5), dtype)], {"mode": "reduced"}, None, None),
            (linalg_ops.SVD, [_random(rng, (4, 3), dtype)], {"full_matrices": False}, None,
             (_abs2, ident, _abs2)),
            (linalg_ops.SVD, [_random(rng, (2, 3, 5), dtype)], {"full_matrices": False}, None,
             (_abs2, ident, _abs2)),
            (linalg_ops.EIGH, [h], {"UPLO": "L"}, [t_h], vec_maps),
            (linalg_ops.EIG, [_random(rng, (3, 3), dtype)], {}, None, vec_maps),
            (linalg_ops.MATRIX_EXP, [_random(rng, (2, 3, 3), dtype)], {}, None, None),
            (linalg_ops.PINV, [_random(rng, (4, 3), dtype)],
             {"atol": None, "rtol": None, "hermitian": False}, None, None),
            (linalg_ops.LSTSQ, [_random(rng, (5, 3), dtype), _random(rng, (5, 2), dtype)],
             {"rcond": None}, None, None),
            (linalg_ops.LU, [_random(rng, (2, 3, 3), dtype)], {}, None, None),
            (linalg_ops.LU, [_random(rng, (3, 5), dtype)], {}, None, None),
            (linalg_ops.LU, [_random(rng, (5, 3), dtype)], {}, None, None),
            (linalg_ops.CROSS, [_random(rng, (2, 3), dtype), _random(rng, (3,), dtype)],
             {"dim": -1}, None, None),
        ]
        if dtype == np.float64:             # real distances only
            x1, x2 = _random(rng, (2, 4, 3), dtype), _random(rng, (5, 3), dtype)
            cases += [(linalg_ops.CDIST, [x1, x2], {"p": p}, None, None)
                      for p in (1.0, 2.0, 3.0, np.inf)]
            cases.append((linalg_ops.EUCLIDEAN_DIST, [x1, x2[None]], {}, None, None))
    return cases


def _tangent_of(out, tangent, fn):
    """The tangent of fn(out) given out's tangent (fn: None or |.|^2)."""
    if fn is None:
        return tangent
    return 2 * (np.conj(out) * tangent).real


def _jvp_env(op, arrays, attrs, result):
    env = dict(attrs, result=result)
    env.update(zip(op.inputs, arrays))
    env.update((n + "_shape", a.shape) for n, a in zip(op.inputs, arrays))
    return env


def test_every_linalg_table_op_has_a_checked_jvp(rng):
    seen = set()
    for op, arrays, attrs, tangents, maps in _jvp_cases(rng):
        tangents = tangents or [_random(rng, a.shape, a.dtype) for a in arrays]
        eps = 1e-6
        hi = op.forward(*[a + eps * t for a, t in zip(arrays, tangents)], **attrs)
        lo = op.forward(*[a - eps * t for a, t in zip(arrays, tangents)], **attrs)
        result = op.forward(*arrays, **attrs)
        outs = [hi, lo, result] if not op.multi_output else [list(hi), list(lo), list(result)]
        if not op.multi_output:
            outs = [[o] for o in outs]
        maps = maps or (None,) * len(outs[2])
        numeric = [(np.asarray(_apply(f, h)) - np.asarray(_apply(f, l))) / (2 * eps)
                   for f, h, l in zip(maps, outs[0], outs[1])]
        env = _jvp_env(op, arrays, attrs, result)
        tenv = {k: cr.Tensor._wrap(v) if isinstance(v, np.ndarray) else v for k, v in env.items()}
        tenv["result"] = [cr.Tensor._wrap(r) for r in result] if op.multi_output else \
            cr.Tensor._wrap(result)
        for ns, e, ts in ((ARRAY_NS, env, tangents),
                          (TENSOR_NS, tenv, [cr.Tensor._wrap(t) for t in tangents])):
            got = op.jvp(ns, tuple(ts), e)
            got = list(got) if op.multi_output else [got]
            for k, (g, n, f, o) in enumerate(zip(got, numeric, maps, outs[2])):
                g = g._data if isinstance(g, cr.Tensor) else g
                np.testing.assert_allclose(_tangent_of(o, g, f), n, atol=1e-6, rtol=1e-5,
                                           err_msg=f"{op.name} jvp output {k} "
                                                   f"({type(ns).__name__})")
        seen.add(op.name)
    linalg_table = {op.name for op in cr._ops._registry.OPS.values()
                    if op.name.startswith("linalg_") and op.name != "linalg_vector_norm"}
    assert linalg_table <= seen, sorted(linalg_table - seen)


def _apply(fn, x):
    return x if fn is None else fn(x)


# --- errors with the reference's messages --------------------------------------------------------
_NON_SQUARE = "A must be batches of square matrices, but they are 2 by 3 matrices"


@pytest.mark.parametrize("fn, message", [
    (lambda a: LA.inv(a), "linalg.inv: " + _NON_SQUARE),
    (lambda a: LA.det(a), "linalg.det: " + _NON_SQUARE),
    (lambda a: LA.slogdet(a), "linalg.slogdet: " + _NON_SQUARE),
    (lambda a: cr.logdet(a), "logdet: " + _NON_SQUARE),
    (lambda a: LA.cholesky(a), "linalg.cholesky: " + _NON_SQUARE),
    (lambda a: LA.eigh(a), "linalg.eigh: " + _NON_SQUARE),
    (lambda a: LA.eig(a), "linalg.eig: " + _NON_SQUARE),
    (lambda a: LA.eigvals(a), "linalg.eigvals: " + _NON_SQUARE),
    (lambda a: LA.matrix_exp(a), "linalg.matrix_exp: " + _NON_SQUARE),
    (lambda a: LA.matrix_power(a, 2), "linalg.matrix_power: " + _NON_SQUARE),
    (lambda a: LA.solve(a, cr.ones(2, dtype=cr.float64)), "linalg.solve: " + _NON_SQUARE),
])
def test_non_square_input_errors(fn, message):
    with pytest.raises(RuntimeError, match=message):
        fn(cr.ones(2, 3, dtype=cr.float64))


@pytest.mark.parametrize("fn, message", [
    (LA.inv, "linalg.inv: The input tensor A must have at least 2 dimensions."),
    (LA.det, "linalg.det: The input tensor A must have at least 2 dimensions."),
    (LA.svd, "linalg.svd: The input tensor A must have at least 2 dimensions."),
    (LA.qr, "linalg.qr: The input tensor A must have at least 2 dimensions."),
    (LA.matrix_norm, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    (LA.cond, "linalg.cond: The input tensor must have at least 2 dimensions."),
])
def test_one_dimensional_input_errors(fn, message):
    with pytest.raises(RuntimeError, match=message):
        fn(cr.ones(3))


def test_integer_input_error():
    with pytest.raises(RuntimeError, match="linalg.inv: Expected a floating point or complex "
                                           "tensor as input. Got Long"):
        LA.inv(cr.eye(2, dtype=cr.int64))


def test_singular_input_raises_linalg_error_naming_the_batch_element():
    singular = [[1.0, 2.0], [2.0, 4.0]]
    a = cr.tensor([np.eye(2), singular])
    with pytest.raises(LA.LinAlgError, match=r"linalg.inv: \(Batch element 1\): The diagonal "
                                             "element 2 is zero, the inversion could not be "
                                             "completed because the input matrix is singular."):
        LA.inv(a)
    with pytest.raises(RuntimeError, match="torch.linalg.solve: The solver failed because the "
                                           "input matrix is singular."):
        LA.solve(cr.tensor(singular), cr.ones(2))
    assert issubclass(LA.LinAlgError, RuntimeError)


def test_not_positive_definite_names_the_leading_minor():
    a = cr.tensor([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]])
    with pytest.raises(LA.LinAlgError, match=r"linalg.cholesky: \(Batch element 1\): The "
                                             "factorization could not be completed because the "
                                             "input is not positive-definite \\(the leading minor "
                                             "of order 2 is not positive-definite\\)."):
        LA.cholesky(a)
    with pytest.raises(LA.LinAlgError, match="^cholesky: The factorization"):
        cr.cholesky(a[1])
    info = LA.cholesky_ex(a).info
    assert info.tolist() == [0, 2]
    singular = LA.inv_ex(cr.tensor([[[1.0, 2.0], [2.0, 4.0]]]))
    assert singular.info.tolist() == [2] and np.isnan(singular.inverse.numpy()).all()


@pytest.mark.parametrize("call, message", [
    (lambda: LA.solve(cr.eye(3, dtype=cr.float64), cr.ones(2, 1, dtype=cr.float64)),
     r"linalg.solve: Incompatible shapes of A and B for the equation AX = B \(3x3 and 2x1\)"),
    (lambda: LA.solve(cr.eye(3, dtype=cr.float64), cr.ones(3, 1)),
     "linalg.solve: Expected A and B to have the same dtype, but found A of type Double and B "
     "of type Float instead"),
    (lambda: LA.qr(cr.ones(2, 2), mode="foo"), "qr received unrecognized mode 'foo'"),
    (lambda: LA.eigh(cr.eye(2), UPLO="X"), "Expected UPLO argument to be 'L' or 'U', but got X"),
    (lambda: LA.matrix_norm(cr.eye(2), ord=3), "linalg.matrix_norm: Order 3 not supported."),
    (lambda: LA.matrix_norm(cr.eye(2), dim=(0, 0)), r"dims must be different. Got \(0, 0\)"),
    (lambda: LA.norm(cr.ones(2, 2, 2), ord=2), "linalg.norm: If dim is not specified but ord "
                                               "is, the input must be 1D or 2D. Got 3D."),
    (lambda: LA.cross(cr.ones(2), cr.ones(2)),
     "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2"),
    (lambda: LA.multi_dot([cr.eye(2)]), "multi_dot\\(\\): expected at least 2 tensors but got 1"),
    (lambda: LA.multi_dot([cr.eye(3), cr.ones(2, 3)]), r"multi_dot\(\): tensors 0 and 1 with "
                                                       r"shapes \[3, 3\] and \[2, 3\] cannot"),
    (lambda: LA.lstsq(cr.eye(3), cr.ones(2, 1)),
     r"torch.linalg.lstsq: input.size\(-2\) should match other.size\(-2\)"),
    (lambda: LA.lstsq(cr.eye(3), cr.eye(3), driver="foo"), "parameter `driver` should be one"),
    (lambda: cr.cdist(cr.ones(2, 3), cr.ones(2, 4)),
     "X1 and X2 must have the same number of columns. X1: 3 X2: 4"),
    (lambda: cr.cdist(cr.ones(3), cr.ones(3)), "cdist only supports at least 2D tensors, X1 "
                                               "got: 1D"),
    (lambda: cr.cdist(cr.ones(2, 3, dtype=cr.long), cr.ones(2, 3, dtype=cr.long)),
     "cdist only supports floating-point dtypes, X1 got: Long"),
    (lambda: cr.addr(cr.ones(2, 2), cr.ones(2, 2), cr.ones(2)),
     "addr: Expected 1-D argument vec1, but got 2-D"),
    (lambda: cr.tensordot(cr.ones(2, 3), cr.ones(2, 3), dims=1),
     "contracted dimensions need to match, but first has size 3 in dim -1 and second has size "
     "2 in dim 0"),
    (lambda: cr.inner(cr.ones(2, 3), cr.ones(2, 4)),
     r"inner\(\) the last dimension must match on both input tensors but got shapes \[2, 3\] "
     r"and \[2, 4\]"),
    (lambda: cr.cholesky_solve(cr.ones(2, 1), cr.eye(3)),
     "Incompatible matrix sizes for cholesky_solve: each A matrix is 3 by 3 but each b matrix "
     "is 2 by 1"),
])
def test_argument_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


# --- the gauge problem: phases and repeated values -------------------------------------------------
@pytest.mark.parametrize("decompose, loss, message", [
    (lambda a: LA.svd(a), lambda r: r.U.real.sum(),
     "svd_backward: The singular vectors in the complex case are specified up to "
     "multiplication by e\\^{i phi}. The specified loss function depends on this phase term, "
     "making it ill-defined."),
    (lambda a: LA.eigh(a + a.mH), lambda r: r.eigenvectors.real.sum(),
     "linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
     "multiplication by e\\^{i phi}. The specified loss function depends on this quantity, so "
     "it is ill-defined."),
    (lambda a: LA.eig(a), lambda r: r.eigenvectors.real.sum(),
     "linalg_eig_backward: The eigenvectors in the complex case are specified up to "),
])
def test_loss_depending_on_the_phase_of_complex_vectors_raises(rng, decompose, loss, message):
    a = _leaf(_random(rng, (3, 3), np.complex128))
    with pytest.raises(RuntimeError, match=message):
        loss(decompose(a)).backward()


@pytest.mark.parametrize("decompose", [lambda a: LA.svd(a), lambda a: LA.eig(a),
                                       lambda a: LA.svd(a + 0j)], ids=["svd", "eig", "svdc"])
def test_phase_invariant_losses_of_complex_vectors_have_gradients(rng, decompose):
    a = _leaf(_random(rng, (3, 3), np.complex128))
    out = decompose(a)
    v = out[0] if len(out) == 3 else out.eigenvectors
    (v * v.conj()).real.sum().backward()
    assert np.all(np.isfinite(a.grad.numpy()))


@pytest.mark.parametrize("decompose, vectors", [
    (LA.svd, lambda r: r.U), (LA.eigh, lambda r: r.eigenvectors),
    (LA.eig, lambda r: r.eigenvectors.real)], ids=["svd", "eigh", "eig"])
def test_repeated_values_warn_and_give_nan_like_the_reference(decompose, vectors):
    a = _leaf(np.eye(3))
    with pytest.warns(RuntimeWarning, match="repeated"):
        vectors(decompose(a)).sum().backward()
    assert np.isnan(a.grad.numpy()).all()


def test_repeated_values_without_the_vectors_are_fine():
    a = _leaf(np.eye(3))
    LA.svdvals(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.eye(3))
    b = _leaf(np.eye(3))
    LA.eigvalsh(b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), np.eye(3))


# --- values, shapes, batches ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_decompositions_reconstruct_batched_input(rng, dtype):
    a = _random(rng, (2, 4, 3), dtype)
    t = cr.tensor(a)
    tol = dict(atol=1e-4) if dtype in (np.float32, np.complex64) else dict(atol=1e-10)
    U, S, Vh = LA.svd(t, full_matrices=False)
    assert U.dtype == t.dtype and S.dtype == (cr.float32 if dtype in (np.float32, np.complex64)
                                              else cr.float64)
    np.testing.assert_allclose((U.numpy() * S.numpy()[..., None, :]) @ Vh.numpy(), a, **tol)
    Q, R = LA.qr(t)
    np.testing.assert_allclose(Q.numpy() @ R.numpy(), a, **tol)
    h = _hermitian(rng, (2, 3, 3), dtype).astype(dtype)
    w, v = LA.eigh(cr.tensor(h))
    np.testing.assert_allclose(v.numpy() @ (w.numpy()[..., None] * np.conj(np.swapaxes(
        v.numpy(), -1, -2))), h, **tol)
    L = LA.cholesky(cr.tensor(_spd(rng, (2, 3, 3), dtype).astype(dtype)))
    assert L.shape == (2, 3, 3) and np.allclose(np.triu(L.numpy(), 1), 0)


def test_eig_is_complex_for_real_input():
    w, v = LA.eig(cr.tensor([[2.0, 0.0], [0.0, 3.0]]))
    assert w.dtype == cr.complex64 and v.dtype == cr.complex64
    assert LA.eigvals(cr.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=cr.float64)).dtype == \
        cr.complex128


def test_named_tuples_and_grad_fn_names(rng):
    a = _leaf(_spd(rng, (3, 3)))
    assert LA.det(a).grad_fn.name() == "LinalgDetBackward0"
    assert LA.inv(a).grad_fn.name() == "LinalgInvExBackward0"
    assert LA.cholesky(a).grad_fn.name() == "LinalgCholeskyExBackward0"
    assert LA.svd(a).S.grad_fn.name() == "LinalgSvdBackward0"
    assert type(LA.qr(a)).__name__ == "linalg_qr" and type(cr.qr(a)).__name__ == "qr"
    assert LA.slogdet(a)._fields == ("sign", "logabsdet")
    assert LA.lstsq(a, a)._fields == ("solution", "residuals", "rank", "singular_values")
    assert cr.svd(a)._fields == ("U", "S", "V")


def test_old_svd_returns_v_and_compute_uv_false_gives_zeros(rng):
    a = _random(rng, (4, 3))
    U, S, V = cr.svd(cr.tensor(a))
    np.testing.assert_allclose((U.numpy() * S.numpy()) @ V.numpy().T, a, atol=1e-12)
    U, S, V = cr.svd(cr.tensor(a), compute_uv=False)
    assert U.shape == (4, 4) and V.shape == (3, 3) and not U.numpy().any()


def test_lstsq_outputs_per_driver(rng):
    a, b = cr.tensor(_random(rng, (5, 3))), cr.tensor(_random(rng, (5, 2)))
    gelsy, gelsd, gels = (LA.lstsq(a, b, driver=d) for d in ("gelsy", "gelsd", "gels"))
    np.testing.assert_allclose(gelsy.solution.numpy(),
                               np.linalg.lstsq(a.numpy(), b.numpy(), rcond=None)[0])
    assert gelsy.residuals.shape == (0,) and gelsy.rank.item() == 3
    assert gelsd.residuals.shape == (2,) and gelsd.singular_values.shape == (3,)
    assert gels.rank.shape == (0,)


def test_determinant_gradient_of_a_singular_matrix_is_the_adjugate():
    a = _leaf(np.array([[1.0, 2.0], [2.0, 4.0]]))
    LA.det(a).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)


def test_matrix_exp_without_scipy_matches(rng, monkeypatch):
    a = _random(rng, (2, 4, 4)) * 3
    expected = linalg_ops._matrix_exp_forward(a)
    np.testing.assert_allclose(linalg_ops._expm_pade(a), expected, rtol=1e-10)


def test_norms_and_rank():
    a = cr.tensor([[1.0, -2.0], [3.0, 4.0]], dtype=cr.float64)
    s = np.linalg.svd(a.numpy(), compute_uv=False)
    assert LA.matrix_norm(a, "nuc").item() == pytest.approx(s.sum())
    assert LA.matrix_norm(a, -2).item() == pytest.approx(s[-1])
    assert LA.matrix_norm(a, float("inf")).item() == 7.0
    assert LA.norm(a).item() == pytest.approx(np.sqrt(30))
    assert cr.norm(a, "nuc").item() == pytest.approx(s.sum())
    assert a.norm("nuc").item() == pytest.approx(s.sum())
    assert LA.cond(a).item() == pytest.approx(s[0] / s[-1])
    assert LA.matrix_rank(cr.tensor([[1.0, 2.0], [2.0, 4.0]])).dtype == cr.int64


def test_matrix_power_and_multi_dot_match_numpy(rng):
    a = _random(rng, (2, 3, 3)) + 3 * np.eye(3)
    np.testing.assert_allclose(LA.matrix_power(cr.tensor(a), -3).numpy(),
                               np.linalg.matrix_power(a, -3))
    np.testing.assert_allclose(LA.matrix_power(cr.tensor(a), 0).numpy(),
                               np.broadcast_to(np.eye(3), a.shape))
    mats = [_random(rng, s) for s in ((5,), (5, 2), (2, 7), (7,))]
    np.testing.assert_allclose(LA.multi_dot([cr.tensor(m) for m in mats]).numpy(),
                               np.linalg.multi_dot(mats))


def test_matmul_family_values(rng):
    i, m1, m2 = (cr.tensor(_random(rng, s)) for s in ((2, 4), (2, 3), (3, 4)))
    np.testing.assert_allclose(cr.addmm(i, m1, m2, beta=0.5, alpha=2).numpy(),
                               0.5 * i.numpy() + 2 * m1.numpy() @ m2.numpy())
    np.testing.assert_allclose(i.addmm(m1, m2).numpy(), i.numpy() + m1.numpy() @ m2.numpy())
    nan = cr.full((2, 4), float("nan"), dtype=cr.float64)
    assert np.isfinite(cr.addmm(nan, m1, m2, beta=0).numpy()).all()
    a, b = _random(rng, (2, 3)), _random(rng, (3, 2))
    np.testing.assert_allclose(cr.kron(cr.tensor(a), cr.tensor(b)).numpy(), np.kron(a, b))
    np.testing.assert_allclose(cr.tensordot(cr.tensor(a), cr.tensor(b), ([0, 1], [1, 0])).numpy(),
                               np.tensordot(a, b, ([0, 1], [1, 0])))
    np.testing.assert_allclose(cr.trapezoid(cr.tensor(a)).numpy(), np.trapezoid(a))


def test_linalg_functions_are_in_the_linalg_namespace_and_top_level_aliases_exist():
    for name in ("det", "slogdet", "inv", "inv_ex", "solve", "solve_ex", "lstsq", "cholesky",
                 "cholesky_ex", "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals",
                 "pinv", "matrix_norm", "vector_norm", "norm", "matrix_exp", "matrix_power",
                 "multi_dot", "cross", "cond", "matrix_rank", "vecdot", "diagonal",
                 "solve_triangular", "tensorinv", "tensorsolve", "vander", "matmul"):
        assert callable(getattr(LA, name)), name
    for name in ("det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve",
                 "cholesky_inverse", "qr", "svd", "pinverse", "matrix_exp", "matrix_power",
                 "addmm", "addmv", "addr", "baddbmm", "addbmm", "kron", "tensordot", "cdist",
                 "cross", "chain_matmul", "vdot", "inner", "mv", "trapezoid"):
        assert callable(getattr(cr, name)), name
    for name in ("det", "logdet", "slogdet", "inverse", "cholesky", "qr", "svd", "pinverse",
                 "matrix_exp", "matrix_power", "addmm", "addmv", "addr", "baddbmm", "addbmm",
                 "kron", "cross", "inner", "cholesky_solve", "cholesky_inverse"):
        assert callable(getattr(cr.Tensor, name)), name


def test_lu_factor_and_lu_solve_match_numpy(rng):
    a = _random(rng, (2, 4, 4))
    P, L, U = LA.lu(cr.tensor(a))
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-12)
    LU, pivots = LA.lu_factor(cr.tensor(a))
    assert pivots.dtype == cr.int32 and pivots.shape == (2, 4)
    b = _random(rng, (2, 4, 2))
    np.testing.assert_allclose(LA.lu_solve(LU, pivots, cr.tensor(b)).numpy(),
                               np.linalg.solve(a, b), atol=1e-10)
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        LA.lu(cr.tensor(a), pivot=False)


def test_out_arguments_receive_the_result():
    out = cr.empty(2, 2)
    assert LA.inv(cr.eye(2) * 2, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.eye(2) / 2)
    parts = (cr.empty(0), cr.empty(0), cr.empty(0))
    result = LA.svd(cr.eye(2), out=parts)
    assert type(result).__name__ == "linalg_svd_out" and result.S is parts[1]
    out = cr.empty(2, 2)
    cr.addmm(cr.ones(2, 2), cr.ones(2, 3), cr.ones(3, 2), out=out)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 2), 4.0))
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support "
                                           "automatic differentiation"):
        LA.inv(cr.eye(2, requires_grad=True), out=cr.empty(2, 2))


def test_out_arguments_follow_the_shared_out_rules():
    a = cr.tensor([[2.0, 1.0], [1.0, 3.0]])
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got "
                                           "double instead"):
        LA.inv(a, out=cr.empty(0, dtype=cr.float64))     # LAPACK's results: no cast
    with pytest.raises(TypeError, match="linalg_eigh\\(\\): argument 'out' must be tuple of "
                                        "Tensors, not Tensor"):
        LA.eigh(a, out=cr.empty(0))
    with pytest.raises(TypeError, match="linalg_inv\\(\\): argument 'out' must be Tensor, "
                                        "not tuple"):
        LA.inv(a, out=(cr.empty(0),))
    w, v = cr.empty(0), cr.empty(0)
    got = LA.eigh(a, out=(w, v))
    assert type(got).__name__ == "linalg_eigh_out" and got.eigenvalues is w
    assert got.eigenvectors is v and w._version == 1
    with pytest.warns(UserWarning, match="resized since it had shape \\[3\\]"):
        LA.vector_norm(a, out=cr.empty(3))


def test_cdist_direct_and_matmul_forms_and_their_nodes():
    x = cr.tensor(np.random.default_rng(0).normal(size=(30, 3)), requires_grad=True)
    direct = cr.cdist(x[:5], x[:5])
    assert type(direct.grad_fn).__name__ == "CdistBackward0"
    assert direct.diagonal().abs().max().item() == 0
    fast = cr.cdist(x, x)                      # more than 25 rows: one matmul
    assert type(fast.grad_fn).__name__ == "ViewBackward0"
    assert type(fast.grad_fn.next_functions[0][0]).__name__ == "EuclideanDistBackward0"
    assert fast.diagonal().abs().max().item() > 0       # its roundoff, as in the reference
    exact = cr.cdist(x, x, compute_mode="donot_use_mm_for_euclid_dist")
    np.testing.assert_allclose(fast.detach().numpy(), exact.detach().numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="None is not a valid value for compute_mode"):
        cr.cdist(x, x, compute_mode=None)
    with pytest.raises(NotImplementedError, match="\"cdist\" not implemented for 'Half'"):
        cr.cdist(x[:3].half(), x[:3].half())
    assert cr.cdist(x.half(), x.half()).dtype == cr.float16


def test_cdist_inf_norm_ties_each_get_the_whole_gradient():
    x = cr.tensor([[0., 0.]], requires_grad=True)
    cr.cdist(x, cr.tensor([[1., -1.]]), p=float("inf")).sum().backward()
    assert x.grad.tolist() == [[-1.0, 1.0]]


def test_cholesky_solve_and_inverse_are_single_nodes_with_the_reference_errors():
    a = cr.tensor([[4., 2.], [2., 5.]], dtype=cr.float64, requires_grad=True)
    u = LA.cholesky(a, upper=True)
    x = cr.cholesky_solve(cr.ones(2, 1, dtype=cr.float64), u, upper=True)
    inv = cr.cholesky_inverse(u, upper=True)
    names = [type(t.grad_fn).__name__ for t in (u, x, inv)]
    assert names == ["LinalgCholeskyExBackward0", "CholeskySolveBackward0",
                     "CholeskyInverseBackward0"]
    np.testing.assert_allclose(inv.detach().numpy(), np.linalg.inv(a.detach().numpy()))
    with pytest.raises(RuntimeError, match="b should have at least 2 dimensions, but has 1"):
        cr.cholesky_solve(cr.ones(2, dtype=cr.float64), u)
    with pytest.raises(RuntimeError, match="Expected b and A to have the same dtype, but found "
                                           "b of type Float and A of type Double instead."):
        cr.cholesky_solve(cr.ones(2, 1), u)
    with pytest.raises(NotImplementedError, match="\"cholesky_inverse_out_cpu\" not "
                                                  "implemented for 'Long'"):
        cr.cholesky_inverse(cr.eye(2, dtype=cr.long))
    with pytest.raises(RuntimeError, match="cholesky_inverse: A must be batches of square"):
        cr.cholesky_inverse(cr.ones(2, 3))


# --- Note [product checks] -------------------------------------------------------------------
def _error(fn):
    with pytest.raises((RuntimeError, NotImplementedError)) as info:
        fn()
    return str(info.value)


def test_products_report_shapes_before_dtypes():
    f32, f64 = (lambda *s: cr.ones(*s)), (lambda *s: cr.ones(*s, dtype=cr.float64))
    b = lambda *s: cr.ones(*s, dtype=cr.bool)      # noqa: E731
    assert _error(lambda: cr.mm(f32(2, 3), f64(4, 5))) == \
        "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"
    assert _error(lambda: cr.matmul(f32(3), f64(4, 5))) == \
        "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x5)"
    assert _error(lambda: cr.mv(b(2, 3), b(4))) == "size mismatch, got input (2), mat (2x3), vec (4)"
    assert _error(lambda: cr.bmm(f32(2, 2, 3), f64(2, 4, 5))).startswith(
        "Expected size for first two dimensions of batch2 tensor to be: [2, 3]")
    assert _error(lambda: cr.inner(f32(2, 3), f64(2, 4))).startswith(
        "inner() the last dimension must match")
    assert _error(lambda: cr.addbmm(f32(2, 5), f32(2, 2, 3), f64(2, 4, 5))) == \
        "Incompatible matrix sizes for bmm (2x3 and 4x5)"
    assert _error(lambda: cr.baddbmm(f64(9, 2, 5), f32(2, 2, 3), f32(2, 3, 5))).startswith(
        "The expanded size of the tensor (2) must match the existing size (9)")
    assert _error(lambda: cr.addmm(b(7, 7), b(2, 3), b(3, 5))).startswith(
        "The expanded size of the tensor (5) must match the existing size (7) at "
        "non-singleton dimension 1")
    assert _error(lambda: cr.nn.functional.linear(b(2, 3), b(5, 3), b(5))) == \
        "\"addmm_impl_cpu_\" not implemented for 'Bool'"


def test_products_then_compare_dtypes_with_their_kernels_words():
    f32, f64 = (lambda *s: cr.ones(*s)), (lambda *s: cr.ones(*s, dtype=cr.float64))
    assert _error(lambda: cr.mv(f32(2, 3), f64(3))) == \
        "addmv input tensors must have the same dtype, but got Double, Float, and Double"
    assert _error(lambda: cr.matmul(f32(2, 2, 3), f64(2, 3, 5))) == \
        "expected scalar type Float but found Double"
    assert _error(lambda: cr.bmm(cr.ones(2, 2, 3, dtype=cr.bool), f32(2, 3, 5))) == \
        "\"bmm\" not implemented for 'Bool'"
    assert _error(lambda: cr.linalg.multi_dot([f32(2, 3), f64(4, 5)])) == \
        "multi_dot(): all tensors must have be the same dtype but tensor 0 is float and tensor 1 double"
    assert _error(lambda: cr.linalg.vecdot(cr.ones(3, dtype=cr.int64), cr.ones(3, dtype=cr.int64))) \
        == "linalg.vecdot: Expected a floating point or complex tensor as input. Got Long"
    assert _error(lambda: cr.tensordot(f32(2, 3), f64(4, 5), dims=1)) == \
        "both inputs should have same dtype"
    assert _error(lambda: cr.nn.functional.linear(f32(2, 3), f64(5, 3), f32(5))) == \
        "self and mat2 must have the same dtype, but got Float and Double"
    assert _error(lambda: cr.nn.functional.bilinear(f32(2, 3), f64(2, 4), f32(5, 3, 3))) == \
        "All tensors must have the same dtype, got input1: float, input2: double, weight: float"


def test_tensordot_checks_its_dims_and_names_them_as_given():
    assert _error(lambda: cr.tensordot(cr.ones(2, 3), cr.ones(4, 5), dims=1)) == \
        "contracted dimensions need to match, but first has size 3 in dim -1 and second has " \
        "size 4 in dim 0"
    assert _error(lambda: cr.tensordot(cr.ones(2, 3), cr.ones(4, 5), dims=3)) == \
        "tensordot expects dims < ndim_a or ndim_b, but got dims=3"
    with pytest.raises(IndexError, match="Dimension out of range"):
        cr.tensordot(cr.ones(2, 3), cr.ones(3, 5), dims=([5], [0]))


def test_tensorinv_refuses_a_non_square_reshape_like_the_reference():
    with pytest.raises(RuntimeError, match=r"^Expected self to satisfy the requirement "
                       r"prod\(self.shape\[ind:\]\) == prod\(self.shape\[:ind\]\), but got 1 != 4$"):
        cr.linalg.tensorinv(cr.ones(2, 2))
