"""_ops/_out.py: Note [out= arguments] — the module-level functions' ``out=``, checked
against the reference's behaviour (torch parity: tests/programs/out_arguments.py)."""
import inspect
import warnings

import pytest

import chainrule as cr
from chainrule._ops._out import OUT_FUNCTIONS

X, Y = cr.tensor([1.0, 2.0, 3.0]), cr.tensor([0.5, 0.5, 0.5])
NO_GRAD = "functions with out=... arguments don't support automatic differentiation"
RESIZED = "An output with one or more elements was resized since it had shape"


def test_the_result_is_written_into_out_and_out_is_returned():
    out = cr.empty(3)
    assert cr.add(X, Y, alpha=2, out=out) is out and out.tolist() == [2.0, 3.0, 4.0]
    assert out._version == 1
    base = cr.zeros(3, 2)
    cr.sin(cr.zeros(3), out=base[:, 1])              # a view of out's memory sees it
    cr.mul(X, 2, out=base[:, 0])
    assert base.tolist() == [[2.0, 0.0], [4.0, 0.0], [6.0, 0.0]]


def test_resizing_warns_unless_out_was_empty():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cr.add(X, Y, out=cr.empty(0)).shape == (3,)
        assert caught == []
        assert cr.sum(cr.ones(2, 3), 1, out=cr.empty(3, 1)).tolist() == [3.0, 3.0]
        assert cr.cat([X], out=cr.empty(2)).shape == (3,)       # the same mechanism
    assert [str(w.message)[:len(RESIZED)] for w in caught] == [RESIZED] * 2
    assert "had shape [3, 1], which does not match the required output shape [2]" in \
        str(caught[0].message) and caught[0].filename == __file__


def test_the_result_is_cast_to_outs_dtype_where_the_reference_casts():
    assert cr.add(cr.tensor([1, 2]), 1, out=cr.empty(2)).tolist() == [2.0, 3.0]
    assert cr.eq(X, Y, out=cr.empty(3, dtype=cr.int64)).tolist() == [0, 0, 0]
    for call, message in [
            (lambda: cr.add(X, Y, out=cr.empty(3, dtype=cr.int64)), "Float can't be cast to "
             "the desired output type Long"),
            (lambda: cr.sin(cr.tensor([1]), out=cr.empty(1, dtype=cr.bool)), "Float can't be "
             "cast to the desired output type Bool"),
            (lambda: cr.add(X, 1j, out=cr.empty(3)), "ComplexFloat can't be cast"),
            (lambda: cr.mean(X, 0, out=cr.empty((), dtype=cr.int64)), "Float can't be cast"),
            (lambda: cr.mm(cr.ones(1, 1), cr.ones(1, 1), out=cr.empty(1, 1, dtype=cr.float64)),
             "Expected out tensor to have dtype float, but got double instead")]:
        with pytest.raises(RuntimeError, match=message):
            call()


def test_sums_and_means_compute_in_outs_dtype():
    halves = cr.tensor([1.5, 2.5])
    assert cr.sum(halves, 0, out=cr.empty((), dtype=cr.int64)).item() == 3
    assert cr.cumsum(halves, 0, out=cr.empty(0, dtype=cr.int64)).tolist() == [1, 3]
    spread = cr.tensor([1e8, 1.0, -1e8])
    assert cr.mean(spread, 0, out=cr.empty((), dtype=cr.float64)).item() == pytest.approx(1 / 3)


def test_out_refuses_autograd_under_grad_mode_only():
    xr = X.clone().requires_grad_()
    for call in [lambda: cr.add(xr, Y, out=cr.empty(3)),
                 lambda: cr.sum(xr, 0, out=cr.empty(())),
                 lambda: cr.sin(X, out=cr.empty(3, requires_grad=True))]:
        with pytest.raises(RuntimeError, match=NO_GRAD):
            call()
    with cr.no_grad():
        out = cr.empty(3, requires_grad=True)
        assert cr.add(xr, Y, out=out).tolist() == [1.5, 2.5, 3.5] and out.grad_fn is None


def test_several_results_go_into_a_tuple_of_outs():
    values, indices = cr.empty(0), cr.empty(0, dtype=cr.int64)
    got = cr.max(cr.tensor([[1.0, 5.0], [7.0, 2.0]]), 1, out=(values, indices))
    assert type(got).__name__ == "max_out" and got.values is values and got[1] is indices
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert repr(got).startswith("chainrule.return_types.max_out(")
    with pytest.raises(TypeError, match="expected tuple of 2 elements but got 1"):
        cr.sort(X, out=(cr.empty(0),))
    with pytest.raises(TypeError, match="argument 'out' must be tuple of Tensors"):
        cr.max(cr.ones(2, 2), 1, out=cr.empty(2))
    assert cr.max(X, Y, out=cr.empty(3)).tolist() == [1.0, 2.0, 3.0]


def test_only_the_functions_take_out_and_keep_their_parameters():
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        X.add(Y, out=cr.empty(3))
    assert cr.greater is cr.gt                           # aliases stay one function
    assert cr.sum(cr.ones(2, 3), axis=1, keepdims=True, out=cr.empty(0)).shape == (2, 1)
    assert list(inspect.signature(cr.add, follow_wrapped=False).parameters) == \
        ["input", "other", "alpha", "out"]
    assert cr.add.__wrapped__ is cr.Tensor.add.__wrapped__    # one function below both
    assert {"add", "sin", "sum", "max", "matmul", "where"} <= OUT_FUNCTIONS
    assert all(callable(getattr(cr, name)) for name in OUT_FUNCTIONS)


def test_sum_prod_and_medians_take_out_only_with_dim():
    x = cr.ones(2, 3)
    with pytest.raises(TypeError, match=r"^sum\(\) received an invalid combination of "
                       r"arguments - got \(Tensor, out=Tensor\), but expected one of:\n"):
        cr.sum(x, out=cr.empty(0))
    with pytest.raises(TypeError, match="tuple of ints dim"):
        cr.sum(x, keepdim=False, out=cr.empty(0))
    with pytest.raises(TypeError, match='missing 1 required positional arguments: "dim"'):
        cr.sum(x, dtype=cr.float64, out=cr.empty(0, dtype=cr.float64))
    with pytest.raises(TypeError, match=r"^prod\(\) received an invalid combination of "
                       r"arguments - got \(Tensor, out=Tensor\), but expected one of:\n"
                       r" \* \(Tensor input, \*, torch.dtype dtype = None\)\n"
                       r" \* \(Tensor input, int dim, bool keepdim"):
        cr.prod(x, out=cr.empty(0))
    for call in [lambda: cr.prod(x, keepdim=True, out=cr.empty(0)),
                 lambda: cr.median(x, out=cr.empty(0)),
                 lambda: cr.nanmedian(x, out=cr.empty(0))]:
        with pytest.raises(TypeError, match='missing 1 required positional arguments: "dim"'):
            call()
    assert cr.sum(x, 1, out=cr.empty(0)).tolist() == [3.0, 3.0]
    assert cr.sum(x, axis=0, out=cr.empty(0)).tolist() == [2.0, 2.0, 2.0]
    assert cr.mean(x, out=cr.empty(0)).item() == 1.0     # the means and extremes take it
    assert cr.amax(x, out=cr.empty(0)).item() == 1.0


@pytest.mark.parametrize("name", ["all", "any"])
def test_all_and_any_write_only_into_bool_or_uint8(name):
    fn = getattr(cr, name)
    with pytest.raises(RuntimeError, match=f"^{name} only supports bool tensor for result, "
                       "got: Float$"):
        fn(cr.ones(2, 3), out=cr.empty(0))
    with pytest.raises(RuntimeError, match="got: Long$"):
        fn(cr.ones(2, 3, dtype=cr.int64), 0, out=cr.empty(0, dtype=cr.int64))
    out = cr.empty(0, dtype=cr.bool)
    assert fn(cr.ones(2, 3, dtype=cr.uint8), 1, out=out) is out and out.tolist() == [True, True]
    out = cr.empty(0, dtype=cr.uint8)
    assert fn(cr.ones(2, 3), out=out).item() == 1 and out.dtype == cr.uint8


def test_composites_record_the_copy_into_out():
    # Note [out= arguments]: the reference's composite copies its result into out
    x = cr.tensor([0.3, 0.5], dtype=cr.float64, requires_grad=True)
    out = cr.empty(0, dtype=cr.float64)
    assert cr.special.ndtr(x, out=out) is out and type(out.grad_fn).__name__ == "CopyBackwards"
    out.sum().backward()
    assert x.grad.tolist() == pytest.approx([0.38138782, 0.35206533])
    out = cr.empty(0, dtype=cr.float32)                       # cast by the copy
    assert cr.linalg.norm(x, out=out).dtype == cr.float32 and out.requires_grad
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        cr.linalg.norm(x, out=cr.ones(3, dtype=cr.float64))
    out = cr.empty(0, dtype=cr.float64)
    assert cr.linalg.matrix_rank(cr.eye(2, dtype=cr.float64, requires_grad=True), out=out).item() == 2


def test_functions_without_a_derivative_write_out_with_inputs_requiring_grad():
    x = cr.tensor([0.3, 0.5], dtype=cr.float64, requires_grad=True)
    out = cr.empty(0, dtype=cr.float64)
    assert cr.special.bessel_j0(x, out=out) is out and out.grad_fn is None
    assert not cr.special.chebyshev_polynomial_t(x, x, out=out).requires_grad


def test_out_refusals_name_the_kernel_the_reference_calls():
    a = cr.eye(2, dtype=cr.float64, requires_grad=True)
    for call, kernel in [(lambda o: cr.linalg.inv(a, out=o), "linalg_inv_ex"),
                         (lambda o: cr.linalg.det(a, out=o), "_linalg_det"),
                         (lambda o: cr.linalg.multi_dot([a, a], out=o), "mm"),
                         (lambda o: cr.special.gammainc(a, a, out=o), "igamma")]:
        with pytest.raises(RuntimeError, match=f"^{kernel}\\(\\): functions with out=\\.\\.\\. "
                           "arguments don't support automatic differentiation"):
            call(cr.empty(0, dtype=cr.float64))
    with pytest.raises(TypeError, match=r"^linalg_qr\(\): argument 'out' must be tuple of "
                       "Tensors, not Tensor$"):
        cr.linalg.qr(a, out=cr.empty(0, dtype=cr.float64))


def test_ldl_functions_write_into_out():
    A = cr.tensor([[4., 2.], [2., 3.]], dtype=cr.float64)
    out = (cr.empty(0, dtype=cr.float64), cr.empty(0, dtype=cr.int32))
    assert cr.linalg.ldl_factor(A, out=out)[0] is out[0] and out[1].tolist() == [1, 2]
    x = cr.empty(0, dtype=cr.float64)
    assert cr.linalg.ldl_solve(*out, cr.tensor([[6.], [5.]], dtype=cr.float64), out=x) is x
    assert x.tolist() == [[1.0], [1.0]]


def test_special_functions_take_out_like_the_table_functions():
    x = cr.tensor([0.0, 1.0])
    y = cr.empty(0, dtype=cr.float64)
    assert cr.special.expit(x, out=y) is y and y.dtype == cr.float64
    assert y.tolist() == pytest.approx([0.5, 0.7310585786])
    assert cr.special.ndtr(x, out=y)[0].item() == 0.5
    assert cr.special.logsumexp(cr.zeros(2, 2), 1, out=y).tolist() == \
        pytest.approx([0.6931471805599453] * 2)
    with pytest.raises(RuntimeError, match="^sigmoid\\(\\): " + NO_GRAD):
        cr.special.expit(x.clone().requires_grad_(), out=cr.empty(0))
    with pytest.raises(RuntimeError, match="^special_entr\\(\\): " + NO_GRAD):
        cr.special.entr(x.clone().requires_grad_(), out=cr.empty(0))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        cr.special.i0e(x, out=cr.empty(0, dtype=cr.int64))
    with pytest.raises(TypeError, match="special_ndtr\\(\\): argument 'out' must be Tensor, "
                       "not tuple"):
        cr.special.ndtr(x, out=(cr.empty(0),))
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        cr.special.softmax(x, 0, out=cr.empty(0))


def test_out_cast_error_names_complex_half_where_the_reference_does():
    # Note [ComplexHalf stands in as complex64]: float16 with a complex number is the
    # reference's ComplexHalf; with a complex tensor of dims it is ComplexFloat
    half = cr.ones(2, dtype=cr.float16)
    with pytest.raises(RuntimeError, match="result type ComplexHalf can't be cast to the "
                                           "desired output type Half"):
        cr.add(half, 1j, out=cr.empty(2, dtype=cr.float16))
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast"):
        cr.mul(half, cr.ones(2, dtype=cr.complex64), out=cr.empty(2, dtype=cr.float16))
