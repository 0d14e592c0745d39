"""Checkpoint and resume: state_dicts of model, optimizer and scheduler through
torch.save/torch.load on a BytesIO, training continues identically; activation checkpointing."""
import io
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


def make():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2)).double()
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float64) * 0.5 + i).reshape(p.shape) * 0.4)
    opt = torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5, centered=True)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=20)
    return model, opt, sched


x = torch.linspace(-1, 1, 40, dtype=torch.float64).reshape(10, 4)
y = torch.stack([x.sum(1), (x ** 2).sum(1)], dim=1)


def step(model, opt, sched):
    h = checkpoint(model[:3], x, use_reentrant=False)
    loss = nn.functional.smooth_l1_loss(model[3:](h), y, beta=0.5)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    return loss.item()


model, opt, sched = make()
for i in range(6):
    step(model, opt, sched)
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "step": 6}, buf)
print("saved keys", sorted(model.state_dict().keys()))
print("opt state keys", sorted(opt.state_dict()["state"][0].keys()))
cont = [step(model, opt, sched) for _ in range(4)]
buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
model2, opt2, sched2 = make()
model2.load_state_dict(ckpt["model"])
opt2.load_state_dict(ckpt["opt"])
sched2.load_state_dict(ckpt["sched"])
resumed = [step(model2, opt2, sched2) for _ in range(4)]
print("continued", [round(v, 10) for v in cont])
print("resumed  ", [round(v, 10) for v in resumed])
print("lr", sched2.get_last_lr())
print("same weights", all(torch.equal(a, b) for a, b in zip(model.parameters(), model2.parameters())))
