"""chainrule.optim.ASGD: the update against a NumPy transcription, the averaging from
t0 on, foreach, capturable and differentiable, state_dict round trips, errors.
Trajectories against torch: tests/test_parity_optim.py."""
import numpy as np
import pytest

import chainrule as cr
from chainrule import optim
from optim_support import assert_round_trip_continues, make_params, train


def numpy_asgd(w, steps, lr=0.01, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0):
    eta, mu, ax = np.float32(lr), 1.0, np.zeros_like(w)
    for step in range(1, steps + 1):
        grad = w ** 3 - 1 + weight_decay * w
        w = w * (1 - lambd * float(eta)) - float(eta) * grad
        ax = w.copy() if mu == 1 else ax + (w - ax) * np.float32(mu)
        eta = np.float32(lr / (1 + lambd * lr * step) ** alpha)
        mu = 1 / max(1, step - t0)
    return w, ax


@pytest.mark.parametrize("options", [dict(), dict(lr=0.05, lambd=0.01, alpha=0.5, t0=2),
                                     dict(lr=0.05, t0=0, weight_decay=0.1)])
def test_asgd_matches_the_formula(options):
    params = make_params((3,))[:1]
    w0 = params[0].detach().numpy().copy()
    opt = optim.ASGD(params, **options)
    train(params, opt, 6)
    w, ax = numpy_asgd(w0, 6, **options)
    np.testing.assert_allclose(params[0].detach().numpy(), w, rtol=1e-12)
    np.testing.assert_allclose(opt.state[params[0]]["ax"].numpy(), ax, rtol=1e-7)
    assert opt.state[params[0]]["eta"].dtype == cr.float32


def test_maximize_climbs():
    w = cr.tensor([1.0], requires_grad=True)
    opt = optim.ASGD([w], lr=0.1, maximize=True)
    (w * w).sum().backward()
    opt.step()
    assert w.item() > 1.0


@pytest.mark.parametrize("options", [dict(), dict(foreach=True, t0=2, weight_decay=0.1)])
def test_state_dict_round_trip(options):
    # float32 parameters: loading casts eta and mu to the parameter's dtype (as torch
    # does), which for float64 parameters changes how the next eta is rounded
    opt = assert_round_trip_continues(lambda ps: optim.ASGD(ps, lr=0.05, **options),
                                      dtype=cr.float32)
    assert sorted(opt.state_dict()["state"][0]) == ["ax", "eta", "mu", "step"]


def test_foreach_is_the_same_update_to_rounding():
    a, b = make_params(), make_params()
    train(a, optim.ASGD(a, lr=0.05, t0=1), 5)
    train(b, optim.ASGD(b, lr=0.05, t0=1, foreach=True), 5)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-6)


def test_capturable_needs_an_accelerator():
    w = cr.ones(2, requires_grad=True)
    opt = optim.ASGD([w], capturable=True)
    w.grad = cr.ones(2)
    with pytest.raises(AssertionError, match="If capturable=True, params, mus, etas"):
        opt.step()


def test_differentiable_records_the_update():
    base = cr.tensor([1.0, 2.0], dtype=cr.float64, requires_grad=True)
    p = base.clone()
    opt = optim.ASGD([p], lr=0.1, lambd=0.0, differentiable=True)
    p.grad = cr.ones(2, dtype=cr.float64)
    opt.step()
    assert p.grad_fn is not None
    assert cr.autograd.grad(p.sum(), base)[0].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.ASGD([base.clone()])


def test_errors():
    w = [cr.ones(1, requires_grad=True)]
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.ASGD(w, lr=-1)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -0.5"):
        optim.ASGD(w, weight_decay=-0.5)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        optim.ASGD(w, lr=cr.ones(2))


def test_only_optimizers_that_record_their_step_accept_non_leaf_parameters():
    p = cr.ones(2, requires_grad=True).clone()
    optim.SGD([p], lr=0.1, differentiable=True)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.Adam([p], differentiable=True)       # its differentiable step is not written
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([p], lr=0.1)
