"""CyclicLR, SWA (AveragedModel, SWALR, update_bn) and an EMA model, as training scripts
use them."""
import torch
import torch.nn as nn
from torch.optim.swa_utils import AveragedModel, SWALR, update_bn, get_ema_multi_avg_fn

model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1)).double()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float64) * (0.5 + i)).reshape(p.shape) * 0.5)
xs = torch.cos(torch.arange(48, dtype=torch.float64)).reshape(16, 3)
ys = xs.sum(1, keepdim=True)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
cyc = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2")
swa_model = AveragedModel(model)
ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
swa_sched = SWALR(opt, swa_lr=0.02, anneal_epochs=3)
for epoch in range(8):
    for b in range(4):
        opt.zero_grad()
        loss = ((model(xs[b * 4:(b + 1) * 4]) - ys[b * 4:(b + 1) * 4]) ** 2).mean()
        loss.backward()
        opt.step()
        if epoch < 4:
            cyc.step()
        ema.update_parameters(model)
    if epoch >= 4:
        swa_model.update_parameters(model)
        swa_sched.step()
    print(epoch, round(loss.item(), 8), opt.param_groups[0]["lr"], round(opt.param_groups[0]["momentum"], 6))
update_bn([xs[:8], xs[8:]], swa_model)
print(swa_model.n_averaged, swa_model.module[1].running_mean, ema.n_averaged)
print(swa_model(xs[:2]), ema(xs[:2]).detach())
print([round(v, 6) for v in cyc.get_last_lr()], list(swa_model.state_dict().keys())[:3])
opt2 = torch.optim.Adam([torch.zeros(1, requires_grad=True)], lr=0.1)
c2 = torch.optim.lr_scheduler.CyclicLR(opt2, 0.001, [0.01], step_size_up=2, step_size_down=3, mode="exp_range", gamma=0.9)
print([(opt2.step(), c2.step(), round(c2.get_last_lr()[0], 8), opt2.param_groups[0]["betas"][0])[2:] for _ in range(6)])
for bad in [lambda: torch.optim.lr_scheduler.CyclicLR(torch.optim.Adagrad([torch.zeros(1, requires_grad=True)]), 0.1, 1.0),
            lambda: torch.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="bad"),
            lambda: SWALR(opt, 0.1, anneal_strategy="step"), lambda: SWALR(opt, 0.1, anneal_epochs=-1)]:
    try:
        bad()
    except ValueError as e:
        print(e)
