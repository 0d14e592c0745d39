"""3-D unpooling and LP pooling, the 3-D ``_with_indices`` spellings, fractional max
pooling and native_channel_shuffle (nn/_pool_extra.py) with their modules."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn


def test_max_unpool3d_puts_maxima_back():
    x = cr.arange(16.0).reshape(1, 1, 2, 2, 4)
    out, idx = F.max_pool3d_with_indices(x, 2)
    assert idx.flatten().tolist() == [13, 15]
    back = nn.MaxUnpool3d(2)(out, idx)
    expected = np.zeros(16)
    expected[[13, 15]] = [13, 15]
    assert back.flatten().tolist() == expected.tolist()
    assert nn.MaxUnpool3d(2)(out, idx, output_size=(3, 3, 5)).shape == (1, 1, 3, 3, 5)
    assert repr(nn.MaxUnpool3d(2)) == \
        "MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))"


def test_lp_pool3d_norms():
    x = cr.tensor(np.arange(1.0, 9.0).reshape(1, 1, 2, 2, 2))
    assert F.lp_pool3d(x, 1, 2).item() == 36.0
    assert F.lp_pool3d(x, float("inf"), 2).item() == 8.0
    np.testing.assert_allclose(nn.LPPool3d(2, 2)(x).item(), np.sqrt((np.arange(1, 9) ** 2).sum()))
    x.requires_grad_(True)
    assert cr.autograd.gradcheck(lambda t: F.lp_pool3d(t, 3, (2, 1, 2)), (x.double(),))


def test_adaptive_max_pool3d_with_indices_and_channel_shuffle():
    values, idx = F.adaptive_max_pool3d_with_indices(cr.arange(8.0).reshape(1, 2, 2, 2), 1)
    assert values.flatten().tolist() == [7.0] and idx.flatten().tolist() == [7]
    x = cr.arange(6.0).reshape(1, 6, 1)
    assert F.native_channel_shuffle(x, 2).flatten().tolist() == [0, 3, 1, 4, 2, 5]


def test_fractional_windows_cover_the_input_edges():
    x = cr.arange(49.0).reshape(1, 1, 7, 7)
    for draws in ([[[0.0, 0.0]]], [[[0.99, 0.5]]]):
        out, idx = F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True,
                                           _random_samples=cr.tensor(draws))
        # each window's max is its bottom-right tap; the last window ends at the edge
        assert idx[0, 0, -1, -1].item() == 48 and out[0, 0, 0, 0].item() == idx[0, 0, 0, 0].item()
    for draw in (0.0, 0.5, 0.99):
        rows = F.fractional_max_pool2d(x, (1, 7), output_size=(4, 1),
                                       _random_samples=cr.tensor([[[0.0, draw]]])).flatten()
        starts = [int(v) // 7 for v in rows.tolist()]
        assert starts == sorted(starts) and starts[-1] == 6


def test_fractional_max_pool_gradient_goes_to_the_maxima():
    x = cr.randn(2, 3, 6, 5, dtype=cr.float64, requires_grad=True)
    draws = cr.rand(2, 3, 2, dtype=cr.float64)
    out, idx = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True,
                                       _random_samples=draws)
    assert out.shape == (2, 3, 3, 2)
    assert cr.autograd.gradcheck(lambda t: F.fractional_max_pool2d(
        t, 2, output_size=(3, 2), _random_samples=draws), (x,))
    flat = x.detach().reshape(2, 3, -1)
    assert cr.equal(flat.gather(2, idx.reshape(2, 3, -1)).reshape(out.shape), out.detach())


def test_fractional_max_pool3d_and_modules():
    x = cr.randn(1, 2, 5, 6, 4)
    out, idx = nn.FractionalMaxPool3d(2, output_size=(2, 3, 2), return_indices=True)(x)
    assert out.shape == idx.shape == (1, 2, 2, 3, 2)
    assert nn.FractionalMaxPool2d(3, output_ratio=0.5)(cr.randn(2, 10, 8)).shape == (2, 5, 4)
    assert repr(nn.FractionalMaxPool2d(2, output_size=2)) == "FractionalMaxPool2d()"


def test_fractional_errors():
    with pytest.raises(ValueError, match="requires specifying either an output size, or a "
                                         "pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got 1.2\)"):
        nn.FractionalMaxPool2d(2, output_ratio=1.2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool3d(2, output_size=2, output_ratio=0.5)
    with pytest.raises(ValueError, match="fractional_max_pool2d requires specifying either"):
        F.fractional_max_pool2d(cr.ones(1, 4, 4), 2)
    with pytest.raises(RuntimeError, match=r"fractional_max_pool2d\(\): pool height 2 too large "
                                           "relative to input height 4"):
        F.fractional_max_pool2d(cr.ones(1, 4, 4), 2, output_size=4)
    with pytest.raises(RuntimeError, match=r"fractional_max_pool3d_out\(\): pool time 2 too "
                                           "large relative to input time 3"):
        F.fractional_max_pool3d(cr.ones(1, 3, 4, 4), 2, output_size=(3, 2, 2))
    with pytest.raises(RuntimeError, match="Expect _random_samples.size"):
        F.fractional_max_pool2d(cr.ones(1, 2, 4, 4), 2, 2, _random_samples=cr.rand(1, 3, 2))
