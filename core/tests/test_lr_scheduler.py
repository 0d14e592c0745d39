"""optim.lr_scheduler: each schedule's rates step by step (closed forms computed
here), chaining, state_dict, resuming, ReduceLROnPlateau, OneCycleLR. Torch parity
is in tests/test_parity_nn.py."""
import math

import pytest

import chainrule as cr
from chainrule import optim
from chainrule.optim import lr_scheduler as sched


def make_opt(lr=1.0, **kwargs):
    return optim.SGD([cr.zeros(1, requires_grad=True)], lr=lr, **kwargs)


def rates(scheduler, n):
    out = [scheduler.get_last_lr()[0]]
    for _ in range(n):
        scheduler.optimizer.step()
        scheduler.step()
        out.append(scheduler.get_last_lr()[0])
    return out


def close(a, b):
    return all(math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15) for x, y in zip(a, b))


def test_step_multistep_exponential():
    assert close(rates(sched.StepLR(make_opt(), 3, gamma=0.5), 7),
                 [0.5 ** (t // 3) for t in range(8)])
    assert close(rates(sched.MultiStepLR(make_opt(), [2, 5, 5], gamma=0.1), 6),
                 [1, 1, 0.1, 0.1, 0.1, 0.001, 0.001])
    assert close(rates(sched.ExponentialLR(make_opt(), 0.9), 5), [0.9 ** t for t in range(6)])


def test_cosine_annealing_follows_the_half_cosine_and_restarts():
    got = rates(sched.CosineAnnealingLR(make_opt(), T_max=4, eta_min=0.1), 8)
    want = [0.1 + 0.9 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(9)]
    assert close(got[:5], want[:5])
    assert got[8] == pytest.approx(want[8])       # the recursive form comes back up


def test_lambda_multiplicative_linear_constant():
    assert close(rates(sched.LambdaLR(make_opt(), lambda e: 1 / (e + 1)), 3),
                 [1, 1 / 2, 1 / 3, 1 / 4])
    assert close(rates(sched.MultiplicativeLR(make_opt(), lambda e: 0.5), 3),
                 [1, 0.5, 0.25, 0.125])
    assert close(rates(sched.LinearLR(make_opt(), start_factor=0.25, total_iters=3), 4),
                 [0.25, 0.5, 0.75, 1.0, 1.0])
    assert close(rates(sched.ConstantLR(make_opt(), factor=0.5, total_iters=2), 3),
                 [0.5, 0.5, 1.0, 1.0])


def test_lambda_per_group_and_count_check():
    opt = optim.SGD([{"params": [cr.zeros(1, requires_grad=True)]},
                     {"params": [cr.zeros(1, requires_grad=True)], "lr": 2.0}], lr=1.0)
    s = sched.LambdaLR(opt, [lambda e: 1.0, lambda e: 0.5 ** e])
    opt.step()
    s.step()
    assert s.get_last_lr() == [1.0, 1.0]
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        sched.LambdaLR(opt, [lambda e: 1.0])


def test_schedulers_chain_multiplicatively():
    opt = make_opt()
    a, b = sched.ExponentialLR(opt, 0.5), sched.StepLR(opt, 2, gamma=0.1)
    for _ in range(2):
        opt.step()
        a.step()
        b.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.25 * 0.1)


def test_initial_lr_and_resuming():
    opt = make_opt(0.3)
    sched.StepLR(opt, 1)
    assert opt.param_groups[0]["initial_lr"] == 0.3
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        sched.StepLR(make_opt(), 1, last_epoch=3)


def test_state_dict_round_trip():
    opt = make_opt()
    s = sched.StepLR(opt, 2, gamma=0.5)
    rates(s, 3)
    state = s.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3
    s2 = sched.StepLR(make_opt(), 5)
    s2.load_state_dict(state)
    assert s2.step_size == 2 and s2.last_epoch == 3 and s2.get_last_lr() == s.get_last_lr()
    lam = sched.LambdaLR(make_opt(), lambda e: 1.0)
    assert lam.state_dict()["lr_lambdas"] == [None]


def test_step_with_epoch_warns_and_uses_closed_form():
    s = sched.StepLR(make_opt(), 2, gamma=0.5)
    s.optimizer.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        s.step(5)
    assert s.get_last_lr() == [0.25]


def test_reduce_lr_on_plateau():
    opt = make_opt()
    s = sched.ReduceLROnPlateau(opt, patience=2, factor=0.5, cooldown=1, min_lr=0.2)
    lrs = []
    for metric in [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95]:
        s.step(metric)
        lrs.append(s.get_last_lr()[0])
    assert lrs == [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25]
    s.step(0.1)
    assert s.best == 0.1
    for _ in range(20):
        s.step(1.0)
    assert s.get_last_lr() == [0.2]                  # never below min_lr
    up = sched.ReduceLROnPlateau(make_opt(), mode="max", patience=0, threshold_mode="abs",
                                 threshold=0.1)
    up.step(1.0)
    up.step(1.05)                                    # not better by 0.1 in max mode
    assert up.get_last_lr() == [0.1]
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        sched.ReduceLROnPlateau(make_opt(), factor=1.0)


def test_one_cycle_rates_and_momentum():
    opt = make_opt(momentum=0.9)
    s = sched.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.3)
    got = rates(s, 9)
    assert got[0] == pytest.approx(1.0 / 25) and max(got) == pytest.approx(1.0)
    assert got.index(max(got)) == 2 and got[-1] == pytest.approx(1.0 / 25 / 1e4)
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)
    adam = optim.Adam([cr.zeros(1, requires_grad=True)])
    sched.OneCycleLR(adam, max_lr=0.1, total_steps=5, three_phase=True, anneal_strategy="linear")
    assert adam.param_groups[0]["betas"][0] == pytest.approx(0.95)
    with pytest.raises(ValueError, match="Tried to step 11 times. The specified number of total steps is 10"):
        rates(sched.OneCycleLR(make_opt(momentum=0.9), max_lr=1.0, total_steps=10), 11)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        sched.OneCycleLR(make_opt(momentum=0.9), max_lr=1.0)


def test_stepping_the_schedule_before_the_optimizer_warns_once():
    opt = make_opt()
    s = sched.StepLR(opt, 1)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before "
                                         "`optimizer.step\\(\\)`"):
        s.step()
    opt.step()
    s.step()                                   # no warning now (an error under -W error)


def test_polynomial_and_warm_restarts():
    assert close(rates(sched.PolynomialLR(make_opt(), total_iters=4, power=1.0), 5),
                 [1, 0.75, 0.5, 0.25, 0.0, 0.0])
    got = rates(sched.CosineAnnealingWarmRestarts(make_opt(), T_0=2, T_mult=2), 6)
    want = [1, 0.5, 1, (1 + math.cos(math.pi / 4)) / 2, 0.5, (1 + math.cos(3 * math.pi / 4)) / 2, 1]
    assert close(got, want)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        sched.CosineAnnealingWarmRestarts(make_opt(), T_0=0)


def test_sequential_and_chained():
    opt = make_opt()
    warm = sched.LinearLR(opt, start_factor=0.5, total_iters=2)
    decay = sched.ExponentialLR(opt, gamma=0.5)
    s = sched.SequentialLR(opt, [warm, decay], milestones=[2])
    assert close(rates(s, 4), [0.5, 0.75, 1.0, 0.5, 0.25])
    state = s.state_dict()
    assert len(state["_schedulers"]) == 2 and "optimizer" not in state
    with pytest.raises(ValueError, match="one more than the number of milestone points"):
        sched.SequentialLR(opt, [warm, decay], milestones=[])
    opt2 = make_opt()
    chained = sched.ChainedScheduler([sched.ExponentialLR(opt2, 0.5), sched.StepLR(opt2, 2, 0.1)])
    assert close(rates(chained, 2), [1, 0.5, 0.025])
