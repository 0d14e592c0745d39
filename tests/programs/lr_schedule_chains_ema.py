"""Learning-rate schedule chains printed every step (CosineAnnealingWarmRestarts with
fractional epochs, OneCycleLR three-phase with momentum cycling on Adam's betas,
SequentialLR, ChainedScheduler, LambdaLR per group, MultiplicativeLR, PolynomialLR,
ReduceLROnPlateau, scheduler state_dict round trips) and EMA/SWA averaging variants
(avg_fn, multi_avg_fn, use_buffers) on a model with BatchNorm."""
import torch
import torch.nn as nn
from torch.optim import lr_scheduler as S
from torch.optim.swa_utils import (AveragedModel, SWALR, get_ema_avg_fn, get_ema_multi_avg_fn,
                                   get_swa_multi_avg_fn, update_bn)

torch.manual_seed(0)


def lrs(sched):
    return [round(v, 6) for v in sched.get_last_lr()]


def params():
    return [nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(3))]


def run(name, opt, sched, steps, step_arg=None):
    out = []
    for i in range(steps):
        opt.step()
        sched.step() if step_arg is None else sched.step(step_arg(i))
        out.append(lrs(sched))
    print(name, out)


a, b = params()
opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
run("warm_restarts", opt, S.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01), 10)
opt = torch.optim.SGD(params(), lr=0.1)
sched = S.CosineAnnealingWarmRestarts(opt, T_0=2)
run("fractional", opt, sched, 6, step_arg=lambda i: i * 0.5 + 0.25)
print("T_cur", round(sched.T_cur, 6), "T_i", sched.T_i, "epoch", sched.last_epoch)

opt = torch.optim.Adam(params(), lr=0.01, betas=(0.9, 0.99))
oc = S.OneCycleLR(opt, max_lr=0.1, total_steps=8, pct_start=0.25, anneal_strategy="linear",
                  three_phase=True, div_factor=10, final_div_factor=100, base_momentum=0.8,
                  max_momentum=0.95)
out = []
for _ in range(7):
    opt.step()
    oc.step()
    out.append((lrs(oc)[0], round(opt.param_groups[0]["betas"][0], 6)))
print("one_cycle", out)
try:
    opt.step()
    oc.step()
    oc.step()
except ValueError as e:
    print("ValueError:", e)

opt = torch.optim.SGD(params(), lr=1.0)
warm = S.LinearLR(opt, start_factor=0.25, end_factor=1.0, total_iters=3)
cos = S.CosineAnnealingLR(opt, T_max=4, eta_min=0.1)
seq = S.SequentialLR(opt, schedulers=[warm, cos], milestones=[3])
run("sequential", opt, seq, 8)

opt = torch.optim.SGD(params(), lr=1.0)
chain = S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=2),
                            S.ExponentialLR(opt, gamma=0.9),
                            S.MultiplicativeLR(opt, lr_lambda=lambda e: 0.95)])
run("chained", opt, chain, 5)
print("chained state keys", sorted(chain.state_dict().keys()))

a, b = params()
opt = torch.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.2)
lam = S.LambdaLR(opt, lr_lambda=[lambda e: 0.5 ** e, lambda e: 1.0 / (e + 1)])
run("lambda_groups", opt, lam, 4)
poly = S.PolynomialLR(torch.optim.SGD(params(), lr=0.3), total_iters=4, power=2.0)
run("polynomial", poly.optimizer, poly, 6)

opt = torch.optim.SGD(params(), lr=1.0)
plateau = S.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1, threshold=0.01,
                              cooldown=1, min_lr=0.1)
history = []
for metric in [1.0, 0.9, 0.95, 0.91, 0.9, 0.89, 0.895, 0.9, 0.9, 0.9]:
    plateau.step(metric)
    history.append(round(opt.param_groups[0]["lr"], 6))
print("plateau", history, plateau.num_bad_epochs, round(plateau.best, 6), lrs(plateau))

opt = torch.optim.SGD(params(), lr=1.0)
step = S.StepLR(opt, step_size=2, gamma=0.3)
for _ in range(3):
    opt.step()
    step.step()
state = step.state_dict()
opt2 = torch.optim.SGD(params(), lr=1.0)
step2 = S.StepLR(opt2, step_size=2, gamma=0.3)
step2.load_state_dict(state)
print("restored", step2.last_epoch, lrs(step2), state["_last_lr"], state["step_size"])

# averaging variants
net = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 1))
xs = torch.randn(24, 3)
ys = xs[:, :1] * 2 - xs[:, 1:2]
ema_fn = AveragedModel(net, avg_fn=get_ema_avg_fn(0.8))
ema_multi = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.8), use_buffers=True)
swa = AveragedModel(net, multi_avg_fn=get_swa_multi_avg_fn())
custom = AveragedModel(net, avg_fn=lambda avg, new, n: avg + (new - avg) / (n + 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
swalr = SWALR(opt, swa_lr=0.01, anneal_epochs=2, anneal_strategy="linear")
for epoch in range(6):
    for i in range(3):
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(xs[i * 8:(i + 1) * 8]), ys[i * 8:(i + 1) * 8])
        loss.backward()
        opt.step()
        for m in (ema_fn, ema_multi, swa, custom):
            m.update_parameters(net)
    swalr.step()
    print("swa epoch", epoch, round(loss.item(), 5), lrs(swalr))   # float32 sums: 5 places


def pnorm(m):
    return round(torch.cat([p.detach().flatten() for p in m.parameters()]).norm().item(), 6)


print("n_averaged", ema_fn.n_averaged.item(), swa.n_averaged.item(), ema_multi.n_averaged.dtype)
print("norms", pnorm(net), pnorm(ema_fn), pnorm(ema_multi), pnorm(swa), pnorm(custom))
print("ema buffers", [round(v, 6) for v in ema_multi.module[1].running_mean.tolist()])
loader = [(xs[i * 8:(i + 1) * 8], ys[i * 8:(i + 1) * 8]) for i in range(3)]
update_bn(loader, swa)
print("swa bn", [round(v, 6) for v in swa.module[1].running_mean.tolist()],
      swa.module[1].num_batches_tracked.item(), swa.module[1].momentum)
swa.eval()
with torch.no_grad():
    print("swa eval loss", round(nn.functional.mse_loss(swa(xs), ys).item(), 6))
print("state keys", list(swa.state_dict().keys())[:2], len(swa.state_dict()))
