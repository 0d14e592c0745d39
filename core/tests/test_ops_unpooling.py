"""The max unpooling table ops (Note [unpooling writes at the pooling's indices])."""
import pytest

import chainrule as cr
import chainrule.nn.functional as F


@pytest.mark.parametrize("n,node", [(1, "SqueezeBackward1"), (2, "MaxUnpool2DBackward0"),
                                    (3, "MaxUnpool3DBackward0")])
def test_one_node_per_dimensionality(n, node):
    x = cr.randn(1, 2, *(4,) * n, requires_grad=True)
    pooled, idx = getattr(F, f"max_pool{n}d")(x, 2, return_indices=True)
    assert type(getattr(F, f"max_unpool{n}d")(pooled, idx, 2).grad_fn).__name__ == node


def test_values_land_at_their_indices_and_the_gradient_reads_them_back():
    x = cr.tensor([[[1.0, 2.0]]], requires_grad=True)
    y = F.max_unpool1d(x, cr.tensor([[[3, 0]]]), 2)
    assert y.tolist() == [[[2.0, 0.0, 0.0, 1.0]]]
    y.backward(cr.tensor([[[10.0, 20.0, 30.0, 40.0]]]))
    assert x.grad.tolist() == [[[40.0, 10.0]]]


@pytest.mark.parametrize("call,error,match", [
    (lambda: F.max_unpool2d(cr.ones(1, 1, 2, 2), cr.full((1, 1, 2, 2), 4), 1), RuntimeError,
     r"Found an invalid max index: 4 \(output volumes are of size 2x2\)"),
    (lambda: F.max_unpool2d(cr.ones(1, 2, 2), cr.zeros(1, 2, 2, dtype=cr.int32), 2),
     RuntimeError, "elements in indices should be type int64 but got: Int"),
    (lambda: F.max_unpool3d(cr.ones(2, 2, 2), cr.zeros(2, 2, 2, dtype=cr.int64), 2),
     RuntimeError, "Input to max_unpooling3d should be a 4d or 5d Tensor"),
    (lambda: F.max_unpool2d(cr.ones(1, 2, 2), cr.zeros(1, 2, 2, dtype=cr.int64), 2,
                            output_size=(9, 4)), ValueError,
     r"invalid output_size \"\(9, 4\)\" \(dim 0 must be between 2 and 6\)"),
    (lambda: F.max_unpool2d(cr.ones(1, 2, 2, dtype=cr.int64), cr.zeros(1, 2, 2, dtype=cr.int64),
                            2), NotImplementedError, "\"max_unpool2d\" not implemented for 'Long'"),
])
def test_the_reference_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
