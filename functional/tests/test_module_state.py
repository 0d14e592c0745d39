"""chainrule.func's module helpers: functional_call, stack_module_state (ensembles under
vmap) and replace_all_batch_norm_modules_."""
import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.func import (functional_call, grad, replace_all_batch_norm_modules_,
                            stack_module_state, vmap)


def models(n):
    out = []
    for i in range(n):
        layer = nn.Linear(3, 2).double()
        with cr.no_grad():
            layer.weight.copy_(cr.arange(6, dtype=cr.float64).reshape(2, 3) * (i + 1))
            layer.bias.fill_(float(i))
        out.append(layer)
    return out


def test_per_sample_gradients_with_functional_call_equal_the_loop():
    model = models(1)[0]
    params = {k: v.detach() for k, v in model.named_parameters()}
    xs = cr.tensor(np.linspace(-1, 1, 12).reshape(4, 3))

    def loss(p, x):
        return (functional_call(model, p, (x.unsqueeze(0),)) ** 2).sum()
    batched = vmap(grad(loss), in_dims=(None, 0))(params, xs)
    for i in range(4):
        one = grad(loss)(params, xs[i])
        for k in params:
            np.testing.assert_allclose(batched[k][i].numpy(), one[k].numpy())


def test_ensemble_of_stacked_models_equals_each_model():
    ms = models(3)
    params, buffers = stack_module_state(ms)
    assert params["weight"].shape == (3, 2, 3) and params["weight"].is_leaf
    assert params["weight"].requires_grad and buffers == {}
    x = cr.ones(5, 3, dtype=cr.float64)
    out = vmap(lambda p: functional_call(ms[0], p, (x,)))(params)
    for i, m in enumerate(ms):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy())


def test_stack_module_state_keeps_buffers_and_checks_models():
    params, buffers = stack_module_state([nn.BatchNorm1d(2), nn.BatchNorm1d(2)])
    assert sorted(buffers) == ["num_batches_tracked", "running_mean", "running_var"]
    assert buffers["running_var"].shape == (2, 2) and not buffers["running_var"].requires_grad
    frozen = models(2)
    frozen[1].weight.requires_grad_(False)
    for bad, message in [([], "at least one model"),
                         ([nn.Linear(2, 1), nn.Linear(2, 1).eval()], "training/eval mode"),
                         ([nn.Linear(2, 1), nn.Tanh()], "same class"),
                         (frozen, "weight from each model to have the same .requires_grad")]:
        with pytest.raises(RuntimeError, match=message):
            stack_module_state(bad)


def test_batch_norm_without_running_stats_runs_under_vmap():
    net = replace_all_batch_norm_modules_(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)))
    bn = net[1]
    assert (bn.running_mean, bn.running_var, bn.num_batches_tracked) == (None, None, None)
    assert not bn.track_running_stats
    xs = cr.tensor(np.linspace(-2, 2, 24).reshape(2, 4, 3), dtype=cr.float32)
    out = vmap(net)(xs)
    for i in range(2):
        np.testing.assert_allclose(out[i].detach().numpy(), net(xs[i]).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
