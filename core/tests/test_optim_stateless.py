"""chainrule.optim.swap_in_optimizer_params_and_state: the swapped-in tensors, options
and state during the block, the live ones after it, and the checks on the state."""
import pytest

import chainrule as cr
from chainrule import optim


def stepped_sgd():
    w = cr.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = cr.ones(2)
    opt.step()
    return w, opt


def test_step_acts_on_the_swapped_in_tensors_and_state():
    w, opt = stepped_sgd()
    saved = opt.state_dict()
    saved["param_groups"][0]["lr"] = 1.0
    other = cr.zeros(2)
    other.grad = cr.ones(2)
    live_params = opt.param_groups[0]["params"]
    with optim.swap_in_optimizer_params_and_state(opt, {"w": other}, saved):
        assert opt.param_groups[0]["params"] == [other] and opt.param_groups[0]["lr"] == 1.0
        opt.step()
        opt.state[other]["extra"] = 1           # a new entry stays inside the block
    assert [round(v, 5) for v in other.tolist()] == [-1.9, -1.9]
    assert w.tolist() == [0.8999999761581421] * 2
    assert opt.param_groups[0]["params"] is live_params and opt.param_groups[0]["lr"] == 0.1
    assert "extra" not in saved["state"][0] and list(opt.state) == [w]


def test_state_must_be_initialized():
    opt = optim.SGD([cr.ones(1, requires_grad=True)], lr=0.1)
    with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
        with optim.swap_in_optimizer_params_and_state(opt, {}, {}):
            pass


@pytest.mark.parametrize("change, message", [
    (lambda sd: dict(sd, state=[]), r"to be a dict mapping packed parameter ids"),
    (lambda sd: dict(sd, param_groups=[]), "different number of parameter groups"),
    (lambda sd: dict(sd, param_groups=[dict(sd["param_groups"][0], params=[0, 1])]),
     "param group 0 has a different number of params"),
    (lambda sd: dict(sd, param_groups=[dict(sd["param_groups"][0], extra=1)]),
     r"Keys only in swap-in: \['extra'\]"),
    (lambda sd: dict(sd, state={5: {}}), "got extra keys"),
])
def test_state_checks(change, message):
    _, opt = stepped_sgd()
    with pytest.raises(RuntimeError, match=message):
        with optim.swap_in_optimizer_params_and_state(opt, {"w": cr.ones(2)},
                                                      change(opt.state_dict())):
            pass
