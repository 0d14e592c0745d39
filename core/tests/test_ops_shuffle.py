"""pixel_shuffle, pixel_unshuffle and channel_shuffle as single nodes (Note [shuffles are
permutations]) with the reference's errors."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F


@pytest.mark.parametrize("name,arg,shape,node", [
    ("pixel_shuffle", 2, (2, 8, 2, 3), "PixelShuffleBackward0"),
    ("pixel_unshuffle", 2, (2, 2, 4, 6), "PixelUnshuffleBackward0"),
    ("channel_shuffle", 3, (2, 6, 3), "ChannelShuffleBackward0"),
])
def test_one_node_whose_backward_is_the_inverse_move(name, arg, shape, node):
    x = cr.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
    y = getattr(F, name)(x, arg)
    assert type(y.grad_fn).__name__ == node
    y.backward(y.detach())                # the output's own values go back to their places
    np.testing.assert_array_equal(x.grad.numpy(), x.detach().numpy())


@pytest.mark.parametrize("call,message", [
    (lambda: F.channel_shuffle(cr.zeros(2, 4, 3), 0),
     "Number of groups to divide channels in must be positive. Value of groups:0"),
    (lambda: F.channel_shuffle(cr.zeros(2, 4), 2),
     r"channel_shuffle expects input with > 2 dims, but got input with sizes \[2, 4\]"),
    (lambda: F.pixel_shuffle(cr.zeros(2, 4, 3, 3), 0),
     "pixel_shuffle expects a positive upscale_factor, but got 0"),
    (lambda: F.pixel_unshuffle(cr.zeros(2, 4, 3, 3), -1),
     "pixel_unshuffle expects a positive downscale_factor, but got -1"),
])
def test_errors_use_the_reference_messages(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()
