"""optim.swa_utils (AveragedModel, SWALR, update_bn, the avg functions) and CyclicLR;
torch parity of whole training runs in tests/programs/cyclic_lr_and_swa.py."""
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.optim.lr_scheduler import CyclicLR
from chainrule.optim.swa_utils import (SWALR, AveragedModel, get_ema_avg_fn,
                                       get_ema_multi_avg_fn, get_swa_multi_avg_fn,
                                       update_bn)


def weight_model(value):
    net = nn.Linear(1, 1, bias=False)
    with cr.no_grad():
        net.weight.fill_(value)
    return net


@pytest.mark.parametrize("kwargs, expected", [({}, 2.0),
                                              ({"avg_fn": get_ema_avg_fn(0.5)}, 2.0),
                                              ({"multi_avg_fn": get_ema_multi_avg_fn(0.5)}, 2.0)])
def test_averages(kwargs, expected):
    net = weight_model(0.0)
    avg = AveragedModel(net, **kwargs)
    for w in (1.0, 3.0):
        with cr.no_grad():
            net.weight.fill_(w)
        avg.update_parameters(net)
    assert avg.module.weight.item() == expected and int(avg.n_averaged) == 2
    assert avg(cr.ones(1, 1)).item() == expected
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        AveragedModel(net, avg_fn=get_ema_avg_fn(), multi_avg_fn=get_ema_multi_avg_fn())


def bn_net_with_steps(steps):
    net = nn.Sequential(nn.Linear(1, 1), nn.BatchNorm1d(1))
    net[1].num_batches_tracked.fill_(steps)
    return net


def test_ema_with_buffers_truncates_integer_buffers():
    net = bn_net_with_steps(1)
    avg = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.7), use_buffers=True)
    avg.update_parameters(net)
    net[1].num_batches_tracked.fill_(3)
    avg.update_parameters(net)
    assert avg.module[1].num_batches_tracked.item() == 1      # int(1 * 0.7 + 3 * 0.3)


def test_swa_multi_avg_fn_raises_on_integer_buffers_before_averaging_floats():
    net = bn_net_with_steps(0)
    avg = AveragedModel(net, multi_avg_fn=get_swa_multi_avg_fn(), use_buffers=True)
    avg.update_parameters(net)
    with cr.no_grad():
        net[0].weight.add_(1.0)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        avg.update_parameters(net)
    assert avg.module[0].weight.item() == net[0].weight.item() - 1.0
    assert int(avg.n_averaged) == 1


def test_multi_avg_fn_gets_one_dtype_per_call():
    net = bn_net_with_steps(0)
    seen = []
    avg = AveragedModel(net, multi_avg_fn=lambda a, c, n: seen.append({t.dtype for t in a}),
                        use_buffers=True)
    avg.update_parameters(net)
    avg.update_parameters(net)
    assert seen == [{cr.int64}, {cr.float32}]


def test_update_bn_averages_over_the_loader():
    net = nn.Sequential(nn.Linear(1, 1), nn.BatchNorm1d(1))
    update_bn([(cr.ones(2, 1), 0), (cr.ones(2, 1) * 3, 0)], net)
    bn = net[1]
    expected = (net[0](cr.ones(1, 1)).item() + net[0](cr.ones(1, 1) * 3).item()) / 2
    assert abs(bn.running_mean.item() - expected) < 1e-6 and bn.momentum == 0.1


def test_swalr_anneals_to_swa_lr():
    opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    sched = SWALR(opt, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    rates = []
    for _ in range(6):
        opt.step()
        sched.step()
        rates.append(round(sched.get_last_lr()[0], 6))
    assert rates[-1] == 0.1 and rates == sorted(rates, reverse=True)
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        SWALR(opt, 0.1, anneal_epochs=-1)


def test_cyclic_lr_modes_and_momentum():
    opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
    sched = CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2, mode="triangular2")
    rates, momenta = [], []
    for _ in range(8):
        opt.step()
        sched.step()
        rates.append(round(sched.get_last_lr()[0], 6))
        momenta.append(round(opt.param_groups[0]["momentum"], 6))
    assert rates == [0.3, 0.5, 0.3, 0.1, 0.2, 0.3, 0.2, 0.1]
    assert momenta[1] == 0.8 and momenta[3] == 0.9
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        CyclicLR(opt, 0.1, 0.5, mode="square")
    with pytest.raises(ValueError, match="expected 1 values for max_lr, got 2"):
        CyclicLR(opt, 0.1, [0.5, 0.6])
