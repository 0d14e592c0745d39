"""3-D pooling modules, MaxUnpool1d/2d, nn.init.eye/dirac aliases, get_total_norm and
clip_grads_with_norm_ (torch parity: tests/programs/pool3d_unpool_total_norm.py)."""
import numpy as np
import pytest

import chainrule as cr
from chainrule import nn

X = cr.tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 4, 4)))


@pytest.mark.parametrize("module, function", [
    (nn.MaxPool3d(2), lambda x: nn.functional.max_pool3d(x, 2)),
    (nn.AvgPool3d(2, stride=1), lambda x: nn.functional.avg_pool3d(x, 2, 1)),
    (nn.AdaptiveAvgPool3d((1, 2, 2)), lambda x: nn.functional.adaptive_avg_pool3d(x, (1, 2, 2))),
    (nn.AdaptiveMaxPool3d(1), lambda x: nn.functional.adaptive_max_pool3d(x, 1))])
def test_3d_pool_modules_call_their_functions(module, function):
    np.testing.assert_array_equal(module(X).numpy(), function(X).numpy())


def test_max_unpool_restores_the_maxima_in_place():
    y = cr.tensor([[[[1.0, 5.0], [2.0, 0.0]]]])
    out, idx = nn.MaxPool2d(2, return_indices=True)(y)
    assert nn.MaxUnpool2d(2)(out, idx).tolist() == [[[[0.0, 5.0], [0.0, 0.0]]]]
    assert repr(nn.MaxUnpool1d(2, stride=1)) == \
        "MaxUnpool1d(kernel_size=(2,), stride=(1,), padding=(0,))"


def test_total_norm_and_clipping_with_it():
    grads = [cr.tensor([3.0]), cr.tensor([4.0])]
    assert nn.utils.get_total_norm(grads).item() == 5.0
    assert nn.utils.get_total_norm(grads, norm_type="inf").item() == 4.0
    p = nn.Parameter(cr.zeros(2))
    p.grad = cr.tensor([3.0, 4.0])
    nn.utils.clip_grads_with_norm_([p], 1.0, cr.tensor(5.0))
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-6)
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.get_total_norm([cr.tensor([float("inf")])], error_if_nonfinite=True)


def test_init_eye_and_dirac_aliases_warn():
    t = cr.empty(2, 2)
    with pytest.warns(FutureWarning, match="nn.init.eye is now deprecated"):
        nn.init.eye(t)
    assert t.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.warns(FutureWarning, match="nn.init.dirac is now deprecated"):
        nn.init.dirac(cr.empty(2, 2, 3))


def test_clip_grad_norm_takes_a_generator_of_parameters():
    net = nn.Linear(2, 1)
    net(cr.ones(1, 2)).sum().backward()
    with cr.no_grad():
        for p in net.parameters():
            p.grad.fill_(10.0)
    total = nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    assert abs(total.item() - 10 * 3 ** 0.5) < 1e-4
    after = nn.utils.get_total_norm([p.grad for p in net.parameters()]).item()
    assert abs(after - 1.0) < 1e-4


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_gradients_and_padding(mode):
    w = cr.tensor(np.random.default_rng(1).standard_normal((6, 3)), requires_grad=True)
    inp, off = cr.tensor([1, 2, 4, 5, 4, 3, 0]), cr.tensor([0, 4, 4])
    assert cr.autograd.gradcheck(
        lambda w: nn.functional.embedding_bag(inp, w, off, mode=mode, padding_idx=0), (w,))
    out = nn.functional.embedding_bag(inp, w, off, mode=mode, padding_idx=0).detach().numpy()
    rows = w.detach().numpy()
    reduce = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode]
    np.testing.assert_allclose(out[0], reduce(rows[[1, 2, 4, 5]], 0))
    np.testing.assert_allclose(out[1], 0)
    np.testing.assert_allclose(out[2], reduce(rows[[4, 3]], 0))


def test_embedding_bag_module_and_errors():
    bag = nn.EmbeddingBag(5, 2, mode="sum", padding_idx=0)
    assert repr(bag) == "EmbeddingBag(5, 2, mode='sum', padding_idx=0)"
    assert bag(cr.tensor([[1, 2], [3, 0]])).shape == (2, 2)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        bag(cr.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        nn.functional.embedding_bag(cr.tensor([1]), bag.weight, cr.tensor([0]), mode="max",
                                    per_sample_weights=cr.ones(1))


def test_skip_init_allocates_without_initialising():
    layer = nn.utils.skip_init(nn.Linear, 3, 2, dtype=cr.float64)
    assert layer.weight.shape == (2, 3) and layer.weight.dtype == cr.float64
    assert layer.weight.device.type == "cpu" and not layer.weight.is_meta
    with pytest.raises(RuntimeError, match="must support a 'device' arg"):
        nn.utils.skip_init(nn.ReLU)
