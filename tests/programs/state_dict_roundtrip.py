"""state_dict save/load round-trips for a model, an optimizer and a scheduler."""
import io
import os
import tempfile
import torch
import torch.nn as nn


def make():
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Linear(3, 2))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
    return model, opt, sched


def train(model, opt, sched, steps):
    X = torch.linspace(-1, 1, 32).reshape(8, 4)
    y = torch.arange(8) % 2
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        sched.step()
    return loss.item()


model, opt, sched = make()
print("loss after 3", round(train(model, opt, sched, 3), 6))
sd = model.state_dict()
print(list(sd.keys()))
print("num_batches_tracked", sd["1.num_batches_tracked"])

buf = io.BytesIO()
torch.save({"model": sd, "opt": opt.state_dict(), "sched": sched.state_dict(), "epoch": 3}, buf)
buf.seek(0)
ckpt = torch.load(buf)
print("epoch", ckpt["epoch"], "opt keys", sorted(ckpt["opt"].keys()), ckpt["opt"]["param_groups"][0]["lr"])
print("state step", ckpt["opt"]["state"][0]["step"])

model2, opt2, sched2 = make()
print(model2.load_state_dict(ckpt["model"]))
opt2.load_state_dict(ckpt["opt"])
sched2.load_state_dict(ckpt["sched"])
a = train(model, opt, sched, 2)
b = train(model2, opt2, sched2, 2)
print("resumed identically", a == b, round(b, 6), sched2.get_last_lr())

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "weights.pt")
    torch.save(model.state_dict(), path)
    model3, _, _ = make()
    res = model3.load_state_dict(torch.load(path, weights_only=True), strict=True)
    print(res.missing_keys, res.unexpected_keys)
    print(all(torch.equal(p, q) for p, q in zip(model.parameters(), model3.parameters())))

partial = {k: v for k, v in model.state_dict().items() if k.startswith("0.")}
print(model3.load_state_dict(partial, strict=False))
try:
    model3.load_state_dict(partial)
except RuntimeError as e:
    print("strict error:", str(e).splitlines()[0])
t = torch.arange(6.0).reshape(2, 3)
buf = io.BytesIO()
torch.save([t, t[1]], buf)
buf.seek(0)
u, v = torch.load(buf)
print(u, v)
