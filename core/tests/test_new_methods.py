"""Tensor.new_* and empty_strided: dtype and device from the tensor, sizes as varargs
or one sequence where the reference takes them, new leaves, the reference's errors."""
import warnings

import numpy as np
import pytest

import chainrule as cr

X = cr.ones(2, dtype=cr.float64)


@pytest.mark.parametrize("method, value", [("new_zeros", 0.0), ("new_ones", 1.0)])
def test_filled_take_varargs_or_a_sequence_and_the_tensors_dtype(method, value):
    for args in [(2, 3), ((2, 3),), ([2, 3],), (cr.Size([2, 3]),)]:
        out = getattr(X, method)(*args)
        assert out.shape == (2, 3) and out.dtype == cr.float64
        assert np.all(out.numpy() == value)
    assert getattr(X, method)([]).shape == ()
    assert getattr(X, method)(2, dtype=cr.int32).dtype == cr.int32


def test_new_empty_and_empty_strided():
    assert X.new_empty(4).shape == (4,) and X.new_empty((1, 2)).dtype == cr.float64
    t = X.new_empty_strided((2, 3), (1, 2))
    assert t.shape == (2, 3) and t.stride() == (1, 2) and t.dtype == cr.float64
    assert cr.empty_strided((2, 0), (5, 1)).shape == (2, 0)
    assert cr.empty_strided((3,), (2,), dtype=cr.int64).stride() == (2,)
    with pytest.raises(RuntimeError, match=r"dimensionality of sizes \(2\) must match "
                                           r"dimensionality of strides \(1\)"):
        cr.empty_strided((2, 3), (1,))


def test_new_full_casts_the_value_to_the_tensors_dtype():
    assert cr.tensor([1, 2]).new_full((2,), 2.5).tolist() == [2, 2]
    assert X.new_full([2], 3).tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match=r"new_full\(\): argument 'size' \(position 1\) must "
                                        "be tuple of ints, not int"):
        X.new_full(2, 3)


def test_new_tensor_copies_with_the_tensors_dtype_and_warns_for_tensors():
    out = X.new_tensor([1, 2])
    assert out.dtype == cr.float64 and out.tolist() == [1.0, 2.0]
    assert cr.tensor([1, 2]).new_tensor([1.7]).tolist() == [1]
    source = cr.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match=r"rather than tensor.new_tensor\(sourceTensor\)"):
        copy = X.new_tensor(source)
    assert copy.grad_fn is None and not copy.requires_grad and copy.dtype == cr.float64
    copy.add_(1)
    assert source.tolist() == [1.0, 1.0]


def test_results_are_leaves_and_errors_name_the_size():
    y = cr.ones(2, requires_grad=True) * 2
    out = y.new_zeros(2, requires_grad=True)
    assert out.is_leaf and out.requires_grad and out.grad_fn is None
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        X.new_zeros(-1)
    with pytest.raises(TypeError, match=r"new_zeros\(\): argument 'size' .* not float"):
        X.new_zeros(2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X.new_ones(1)


def test_under_vmap_the_result_is_one_entrys_tensor():
    out = cr.vmap(lambda a: a.new_zeros(2) + a.sum())(cr.ones(3, 4, dtype=cr.float64))
    assert out.shape == (3, 2) and out.dtype == cr.float64
    assert out.tolist() == [[4.0, 4.0]] * 3
