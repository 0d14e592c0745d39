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
    np.testing.assert_allclose((a @ tb).numpy(), a @ b)        # ndarray @ Tensor
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
