"""The names of _ops/legacy_surface.py: function forms of in-place methods, fill, the norms,
as_strided_scatter (with a correct gradient for self), slice_inverse, nonzero_static,
empty_permuted, the legacy Tensor.new/resize/resize_as and the removed functions.
(Against torch: tests/test_parity_aten_surface.py.)"""
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import legacy_surface


def _t(*shape):
    return cr.tensor(np.random.default_rng(2).standard_normal(shape), requires_grad=True)


def test_function_forms_of_inplace_methods():
    x = cr.ones(2)
    assert cr.addmv_(x, cr.eye(2), cr.tensor([1.0, 2.0]), beta=2, alpha=3) is x
    assert x.tolist() == [5.0, 8.0]
    assert cr.i0_(cr.zeros(1)).tolist() == [1.0]
    y = cr.arange(6.0)
    assert cr.resize_as_(y, cr.zeros(2, 2)) is y and y.shape == (2, 2)
    assert cr.get_device(y) == -1


def test_fill_is_out_of_place_and_differentiable_in_the_value():
    x, v = _t(2, 3), cr.tensor(1.5, dtype=cr.float64, requires_grad=True)
    out = cr.fill(x, v)
    assert out.tolist() == [[1.5] * 3] * 2 and x.tolist() != out.tolist()
    out.sum().backward()
    assert v.grad.item() == 6.0 and x.grad.abs().sum().item() == 0.0
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        cr.fill(x, cr.ones(1))


def test_frobenius_and_nuclear_norm_warn_their_deprecation_once():
    legacy_surface.WARNED_ONCE.clear()
    for name, call in (("frobenius_norm", lambda: cr.frobenius_norm(cr.eye(2), [0])),
                       ("nuclear_norm", lambda: cr.nuclear_norm(cr.eye(2)))):
        with pytest.warns(UserWarning, match=f"at::{name} is deprecated") as caught:
            call()
        assert caught[0].filename == __file__          # the caller's line, not chainrule's
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            call()


@pytest.mark.filterwarnings("ignore:at::")
def test_frobenius_and_nuclear_norm():
    x = _t(2, 3, 4)
    np.testing.assert_allclose(cr.frobenius_norm(x, [1, 2]).detach().numpy(),
                               np.sqrt((x.detach().numpy() ** 2).sum((1, 2))))
    assert cr.frobenius_norm(x, []).shape == ()
    with pytest.raises(RuntimeError, match="Expected at most 2 dimensions"):
        cr.frobenius_norm(x, [0, 1, 2])
    m = x.detach()[0]
    assert cr.nuclear_norm(m).item() == pytest.approx(np.linalg.svd(m.numpy())[1].sum())
    assert cr.nuclear_norm(m, True).shape == (1, 1)
    assert cr.nuclear_norm(x, [0, 2], True).shape == (1, 3, 1)
    assert cr.autograd.gradcheck(lambda v: cr.nuclear_norm(v), (x[0].detach().requires_grad_(),))


def test_as_strided_scatter_values_and_gradients():
    x, src = _t(3, 4), _t(2, 2)
    out = cr.as_strided_scatter(x, src, (2, 2), (4, 1), 1)
    expected = x.detach().numpy().copy()
    expected[0:2, 1:3] = src.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), expected)
    assert out._base is None
    # the reference's self gradient is wrong (it fails gradcheck); this one is checked
    assert cr.autograd.gradcheck(lambda a, b: cr.as_strided_scatter(a, b, (2, 2), (4, 1), 1),
                                 (x, src))
    assert x.as_strided_scatter(src.reshape(4)[:3], (3,), (5,)).shape == (3, 4)


def test_slice_inverse_views_input_with_src_geometry():
    x = cr.arange(32.0).reshape(2, 16)
    out = cr.slice_inverse(x, cr.zeros(4, 8)[:, 1:3], 1, 1, 3)
    assert out.shape == (4, 2) and out.stride() == (8, 1) and out._base is x._base
    assert out.tolist() == [[1.0, 2.0], [9.0, 10.0], [17.0, 18.0], [25.0, 26.0]]


def test_nonzero_static_pads_and_truncates():
    x = cr.tensor([[0, 1], [2, 3]])
    assert cr.nonzero_static(x, size=4).tolist() == [[0, 1], [1, 0], [1, 1], [-1, -1]]
    assert x.nonzero_static(size=1, fill_value=9).tolist() == [[0, 1]]
    assert cr.nonzero_static(x, size=0).shape == (0, 2)


def test_empty_permuted_strides():
    t = cr.empty_permuted((2, 3, 4), (2, 0, 1), dtype=cr.float64, requires_grad=True)
    assert t.shape == (2, 3, 4) and t.stride() == (3, 1, 6)
    assert t.dtype == cr.float64 and t.requires_grad
    with pytest.raises(RuntimeError):
        cr.empty_permuted((2, 3), (0, 0))


def test_set_anomaly_enabled():
    cr.set_anomaly_enabled(True)
    try:
        assert cr.is_anomaly_enabled()
    finally:
        cr.set_anomaly_enabled(False)
    assert not cr.is_anomaly_enabled()


def test_legacy_resize_and_new():
    x = _t(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = x.resize(3, 2)
        x.resize_as(cr.zeros(6))
    assert [str(w.message) for w in caught] == ["non-inplace resize is deprecated",
                                                "non-inplace resize_as is deprecated"]
    r.sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2
    with pytest.raises(RuntimeError, match="autograd's resize can only change the shape"), \
            pytest.warns(UserWarning, match="non-inplace resize"):
        x.resize(4)
    i = cr.zeros(1, dtype=cr.int32)
    assert i.new(2, 3).shape == (2, 3) and i.new(2, 3).dtype == cr.int32
    assert i.new((2, 3)).tolist() == [2, 3] and i.new().shape == (0,)
    assert i.new(cr.zeros(4, 5).shape).shape == (4, 5)            # a Size is a shape
    assert i.new(x) is x


@pytest.mark.parametrize("name, nargs", [("solve", 2), ("eig", 1), ("symeig", 1), ("lstsq", 2),
                                         ("matrix_rank", 1)])
def test_removed_functions_raise(name, nargs):
    with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"):
        getattr(cr, name)(*(cr.eye(2),) * nargs)
    if name != "matrix_rank":
        with pytest.raises(RuntimeError, match="is now removed"):
            getattr(cr.eye(2), name)(*(cr.eye(2),) * (nargs - 1))


def test_set_points_at_the_source_memory():
    x, y = cr.arange(6.0), cr.zeros(2, 3)
    assert y.set_(x) is y and y._version == 1 and x._version == 0
    y[0] = 7.0
    assert x[0].item() == 7.0
    z = cr.zeros(1).set_(x[2:], 1, (2,))
    assert z.tolist() == [3.0, 4.0] and cr.ones(3).set_().shape == (0,)
    with pytest.raises(RuntimeError, match="Could not set tensor of type float to a tensor of "
                                           "type long int"):
        cr.zeros(2, dtype=cr.int64).set_(cr.zeros(2))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        cr.zeros(2, requires_grad=True).set_(cr.ones(2))


def test_triangular_solve_solves_and_clones():
    A = cr.tensor([[2.0, 1.0], [0.5, 4.0]], dtype=cr.float64, requires_grad=True)
    b = cr.tensor([[1.0], [2.0]], dtype=cr.float64, requires_grad=True)
    legacy_surface.WARNED_ONCE.clear()
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        r = cr.triangular_solve(b, A, upper=False, transpose=True)
    lower = np.tril(A.detach().numpy())
    np.testing.assert_allclose(lower.T @ r.solution.detach().numpy(), b.detach().numpy())
    assert r.cloned_coefficient.tolist() == A.tolist() and r.cloned_coefficient is not A
    assert cr.autograd.gradcheck(lambda u, v: cr.triangular_solve(u, v).solution, (b, A))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        cr.triangular_solve(b, cr.ones(2, 3))


def test_hash_tensor_xors_the_widened_bits():
    x = cr.tensor([[1.5, 2.0], [3.0, -0.0]])
    bits = np.array([[1.5, 2.0], [3.0, -0.0]]).view(np.uint64)
    assert cr.hash_tensor(x).item() == int(np.bitwise_xor.reduce(bits.ravel()))
    assert cr.hash_tensor(x, 1).dtype == cr.uint64
    assert cr.hash_tensor(x, [0], keepdim=True).shape == (1, 2)
    assert cr.hash_tensor(cr.tensor([True, False])).item() == 1
    with pytest.raises(RuntimeError, match="Unknown hash_tensor mode: 1"):
        cr.hash_tensor(x, mode=1)
    assert cr.hash_tensor(cr.ones(0, 2), 0).tolist() == [0, 0]
    y = cr.ones(3)
    assert y.const_data_ptr() == y.data_ptr()


def test_frobenius_norm_and_dist_are_one_node_each():
    x = cr.tensor([[3.0, 4.0], [1.0, 2.0]], dtype=cr.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # its deprecation, warned once
        y = cr.frobenius_norm(x, [1])
    assert type(y.grad_fn).__name__ == "NormBackward1" and y.tolist() == pytest.approx([5.0, 5 ** 0.5])
    d = cr.dist(x, cr.zeros(2, dtype=cr.float64, requires_grad=True), 1)
    assert type(d.grad_fn).__name__ == "DistBackward0" and d.item() == 10.0
    assert len(d.grad_fn.next_functions) == 2
    with pytest.raises(RuntimeError, match="norm\\(\\): input dtype should be either floating point"):
        cr.dist(cr.ones(2, dtype=cr.int64), cr.ones(2, dtype=cr.int64))
