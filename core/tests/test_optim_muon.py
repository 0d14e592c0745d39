"""chainrule.optim.Muon: the Newton-Schulz orthogonalization (bfloat16, rounded as
torch), the learning-rate adjustments, momentum, state_dict round trips, errors.
Trajectories against torch: tests/test_parity_optim.py."""
import numpy as np
import pytest

import chainrule as cr
from chainrule import optim
from chainrule.optim.muon import _adjust_lr, _orthogonalize
from optim_support import assert_round_trip_continues

COEFFICIENTS = (3.4445, -4.775, 2.0315)


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (5, 5)])
def test_orthogonalization_flattens_the_singular_values(shape):
    g = cr.randn(*shape, generator=cr.Generator().manual_seed(0), dtype=cr.float64)
    out = _orthogonalize(g, COEFFICIENTS, 5, 1e-7)
    assert out.dtype == cr.bfloat16 and tuple(out.shape) == shape
    singular = np.linalg.svd(out.float().numpy(), compute_uv=False)
    assert singular.min() > 0.5 and singular.max() < 1.3       # ~Uniform(0.5, 1.5), not 1
    direction = np.sum(out.float().numpy() * g.numpy())
    assert direction > 0


def test_adjusted_learning_rates():
    assert _adjust_lr(0.1, None, (8, 2)) == pytest.approx(0.2)
    assert _adjust_lr(0.1, "original", (2, 8)) == pytest.approx(0.1)
    assert _adjust_lr(0.1, "match_rms_adamw", (4, 9)) == pytest.approx(0.06)


def test_nesterov_and_plain_momentum_buffers():
    for nesterov in (True, False):
        w = cr.zeros(2, 2, requires_grad=True)
        opt = optim.Muon([w], lr=0.1, momentum=0.5, nesterov=nesterov, weight_decay=0.0)
        for _ in range(2):
            w.grad = cr.eye(2)
            opt.step()
        assert opt.state[w]["momentum_buffer"].tolist() == [[0.75, 0.0], [0.0, 0.75]]
        assert w[0, 1].item() == 0.0 and w[0, 0].item() < 0


def test_weight_decay_is_decoupled():
    w = cr.full((2, 2), 2.0, dtype=cr.float64, requires_grad=True)
    opt = optim.Muon([w], lr=0.1, weight_decay=0.5)
    w.grad = cr.zeros(2, 2, dtype=cr.float64)
    opt.step()
    assert w.tolist() == [[1.9, 1.9], [1.9, 1.9]]


def test_state_dict_round_trip():
    opt = assert_round_trip_continues(lambda ps: optim.Muon(ps[:1], lr=0.05), shape=(3, 4))
    assert list(opt.state_dict()["state"][0]) == ["momentum_buffer"]


@pytest.mark.parametrize("options, message", [
    (dict(lr=-1.0), "Learning rate should be >= 0 but is: -1.0"),
    (dict(momentum=-0.1), "momentum should be >= 0 but is: -0.1"),
    (dict(weight_decay=-1.0), "weight decay should be >= 0 but is: -1.0"),
    (dict(adjust_lr_fn="x"), "Adjust learning rate function x is not supported")])
def test_constructor_errors(options, message):
    with pytest.raises(ValueError, match=message):
        optim.Muon([cr.ones(2, 2, requires_grad=True)], **options)


def test_only_matrices():
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters .*Size\(\[3\]\)"):
        optim.Muon([cr.ones(3, requires_grad=True)])


@pytest.mark.parametrize("options, message", [
    (dict(ns_steps=100), "Number of steps must be less than 100"),
    (dict(ns_coefficients=(1.0, 2.0)), "Coefficients must be a tuple of exactly 3 values")])
def test_step_errors(options, message):
    w = cr.ones(2, 2, requires_grad=True)
    opt = optim.Muon([w], **options)
    w.grad = cr.ones(2, 2)
    with pytest.raises(ValueError, match=message):
        opt.step()
