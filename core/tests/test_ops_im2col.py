"""The im2col / col2im table ops behind F.unfold / F.fold (Note [im2col and col2im are
adjoint])."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F

GEOMETRY = dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2))


def test_one_node_each_for_batched_and_unbatched_input():
    x = cr.ones(2, 3, 5, 6, requires_grad=True)
    assert type(F.unfold(x, **GEOMETRY).grad_fn).__name__ == "Im2ColBackward0"
    assert type(F.unfold(x[0], 2).grad_fn).__name__ == "Im2ColBackward0"
    cols = cr.ones(8, 4, requires_grad=True)
    assert type(F.fold(cols, 3, 2).grad_fn).__name__ == "Col2ImBackward0"


def test_fold_is_the_adjoint_of_unfold(rng):
    x = cr.tensor(rng.standard_normal((2, 3, 5, 6)))
    y = F.unfold(x, **GEOMETRY)
    c = cr.tensor(rng.standard_normal(tuple(y.shape)))
    np.testing.assert_allclose((y * c).sum().item(),
                               (x * F.fold(c, (5, 6), **GEOMETRY)).sum().item())


def test_unfold_columns_are_the_padded_blocks():
    x = cr.arange(12.).reshape(1, 1, 3, 4)
    y = F.unfold(x, 2, padding=1, stride=2)
    assert y[0, :, 0].tolist() == [0.0, 0.0, 0.0, 0.0]          # the top-left corner block
    assert y[0, :, -1].tolist() == [7.0, 0.0, 11.0, 0.0]        # its right half is padding


@pytest.mark.parametrize("call,error,match", [
    (lambda: F.unfold(cr.ones(2, 3, 5, 6), 2, stride=0, dilation=0), RuntimeError,
     "dilation should be greater than zero, but got dilation_height: 0 dilation_width: 0"),
    (lambda: F.fold(cr.ones(2, 12, 20), (5, 6), 2, stride=0, dilation=0), RuntimeError,
     "stride should be greater than zero, but got stride_height: 0 stride_width: 0"),
    (lambda: F.unfold(cr.ones(2, 3, 5, 6), 8, padding=1), RuntimeError,
     r"calculated shape of the array of sliding blocks as \(0, 1\)"),
    (lambda: F.unfold(cr.ones(2, 3, 5, 6), 2.0), TypeError,
     r"im2col\(\): argument 'kernel_size' \(position 2\) must be tuple of ints"),
    (lambda: F.unfold(cr.ones(2, 3, 5, 6), (2,)), RuntimeError,
     "It is expected kernel_size equals to 2, but got size 1"),
    (lambda: F.unfold(cr.ones(3, 4), 2), IndexError, "Dimension out of range"),
    (lambda: F.fold(cr.ones(1, 5, 4), (3, 3), 2), RuntimeError, "divisible by the product"),
    (lambda: F.fold(cr.ones(1, 4, 4, dtype=cr.int64), (3, 3), 2), NotImplementedError,
     "\"col2im_out_cpu\" not implemented for 'Long'"),
])
def test_the_reference_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
