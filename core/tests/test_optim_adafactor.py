"""chainrule.optim.Adafactor: factored and unfactored second moments against NumPy,
weight decay, update clipping, state_dict round trips, errors. Trajectories against
torch: tests/test_parity_optim.py."""
import numpy as np
import pytest

import chainrule as cr
from chainrule import optim
from optim_support import assert_round_trip_continues, make_params, train


def numpy_adafactor_step(w, grad, state, step, lr=1e-2, beta2_decay=-0.8, eps=(1e-30, 1e-3),
                         d=1.0):
    decay = step ** beta2_decay
    alpha = max(eps[1], np.sqrt((w ** 2).mean())) * min(lr, step ** -0.5)
    if w.ndim > 1:
        state["row"] += decay * ((grad ** 2).mean(-1, keepdims=True) - state["row"])
        state["col"] += decay * ((grad ** 2).mean(-2, keepdims=True) - state["col"])
        var = state["row"] @ state["col"] / max(state["row"].mean(), eps[0])
    else:
        state["var"] += decay * (grad ** 2 - state["var"])
        var = state["var"].copy()
    update = grad / np.sqrt(np.maximum(var, eps[0] ** 2))
    return w - alpha / max(1.0, np.sqrt((update ** 2).mean()) / d) * update


@pytest.mark.parametrize("shape", [(3, 4), (5,)])
@pytest.mark.parametrize("options", [dict(), dict(lr=0.3, beta2_decay=-0.5, d=1.2)])
def test_adafactor_matches_the_formula(shape, options):
    params = make_params(shape)[:1]
    w = params[0].detach().numpy().copy()
    state = {"row": np.zeros(shape[:-1] + (1,)), "col": np.zeros((1, shape[-1])),
             "var": np.zeros(shape)}
    opt = optim.Adafactor(params, eps=(1e-30, 1e-3), **options)
    for step in range(1, 5):
        w = numpy_adafactor_step(w, w ** 3 - 1, state, step, eps=(1e-30, 1e-3), **options)
        train(params, opt, 1)
        np.testing.assert_allclose(params[0].detach().numpy(), w, rtol=1e-10)


def test_state_shapes_and_dtype_eps():
    w = cr.ones(2, 3, 4, requires_grad=True)
    opt = optim.Adafactor([w])
    (w * w).sum().backward()
    opt.step()
    assert [tuple(opt.state[w][k].shape) for k in ("row_var", "col_var")] == [(2, 3, 1), (2, 1, 4)]
    assert opt.state[w]["step"].item() == 1.0 and opt.defaults["eps"] == (None, 1e-3)


def test_weight_decay_is_decoupled_and_maximize_climbs():
    w = cr.tensor([2.0], requires_grad=True)
    opt = optim.Adafactor([w], lr=0.1, weight_decay=0.5, maximize=True)
    w.grad = cr.zeros(1)
    opt.step()
    assert w.item() == pytest.approx(2.0 * (1 - 0.1 * 0.5))


@pytest.mark.parametrize("shape", [(2, 3), (4,)])
def test_state_dict_round_trip(shape):
    assert_round_trip_continues(lambda ps: optim.Adafactor(ps, lr=0.05, foreach=True), shape)


@pytest.mark.parametrize("options, message", [
    (dict(lr=-1.0), "Learning rate should be >= 0 but is: -1.0"),
    (dict(beta2_decay=0.1), "beta2_decay should be <= 0 but is: 0.1"),
    (dict(eps=(-1.0, 1e-3)), "epsilon1 should be >= 0 but is: -1.0"),
    (dict(eps=(None, -1.0)), "epsilon2 should be >= 0 but is: -1.0"),
    (dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    (dict(weight_decay=-1.0), "weight_decay should be >= 0 but is: -1.0")])
def test_errors(options, message):
    with pytest.raises(ValueError, match=message):
        optim.Adafactor([cr.ones(1, requires_grad=True)], **options)


def test_complex_parameters_are_refused_at_step():
    w = cr.ones(2, dtype=cr.complex64, requires_grad=True)
    opt = optim.Adafactor([w])
    w.grad = cr.ones(2, dtype=cr.complex64)
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        opt.step()
