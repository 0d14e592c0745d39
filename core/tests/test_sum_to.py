"""autograd/_sum_to.py: summing a broadcast gradient back to an input's shape."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd._sum_to import reduced_axes, sum_to

CASES = [
    ((4, 3), (3,)),            # a bias: leading dims only (the direct reduction)
    ((2, 4, 3), (3,)),
    ((2, 4, 3), (4, 3)),
    ((4, 3), ()),              # to a 0-d array (not a NumPy scalar)
    ((4, 3), (1, 3)),          # size-1 dims: keepdims, then reshape
    ((4, 3), (4, 1)),
    ((2, 4, 3), (1, 3)),
    ((2, 4, 3), (4, 1)),
    ((4, 3), (4, 3)),
]


@pytest.mark.parametrize("shape, target", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_sum_to_array_matches_keepdims_sum(shape, target, dtype):
    grad = (np.arange(np.prod(shape)).reshape(shape) / 7).astype(dtype)
    out = sum_to(grad, target)
    axes = reduced_axes(shape, target)
    expected = grad.sum(axis=axes, keepdims=True).reshape(target)
    assert type(out) is np.ndarray and out.shape == target and out.dtype == grad.dtype
    np.testing.assert_array_equal(out, expected)


def test_sum_to_array_returns_same_shape_unchanged_and_fresh_bias_sums():
    grad = np.ones((4, 3))
    assert sum_to(grad, (4, 3)) is grad
    assert sum_to(grad, [3]).flags.owndata          # Note [stealing gradients] may take it
    other = grad.view(type("OtherArray", (np.ndarray,), {}))
    out = sum_to(other, (3,))                         # not an ndarray: its own .sum
    assert type(out) is type(other) and not out.flags.owndata
    np.testing.assert_array_equal(out, [4.0, 4.0, 4.0])


@pytest.mark.parametrize("shape, target", CASES)
def test_sum_to_tensor_matches_array(shape, target):
    grad = cr.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape),
                     requires_grad=True)
    out = sum_to(grad, target)
    assert out.shape == target
    np.testing.assert_array_equal(out.detach().numpy(), sum_to(grad._data, target))
    assert (out.grad_fn is None) == (shape == target)
