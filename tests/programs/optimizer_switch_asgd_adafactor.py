"""A training loop that starts with Adafactor under a warm-up + cosine schedule, then
switches to ASGD (averaging from t0 on) for the end, evaluates the averaged weights,
checkpoints the optimizer, and trains a hidden layer with Muon; data sharded with
DistributedSampler as a two-process job would."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

torch.set_default_dtype(torch.float64)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel()) * (0.7 + i)).reshape(p.shape) * 0.4)
xs = torch.sin(torch.arange(64.0) * 0.37).reshape(16, 4)
ys = (xs[:, :1] * 2 - xs[:, 1:2] + 0.5 * xs[:, 2:3] * xs[:, 3:4]).tanh()
data = TensorDataset(xs, ys)
loss_fn = nn.MSELoss()


def epoch_loss(loader, opt, scheduler=None):
    total = 0.0
    for x, y in loader:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item()
    if scheduler is not None:
        scheduler.step()
    return total / len(loader)


sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=False)
loader = DataLoader(data, batch_size=4, sampler=sampler)
print("rank 0 sees", list(sampler), "of", len(data))

opt = torch.optim.Adafactor(model.parameters(), lr=0.05, weight_decay=0.01)
warmup = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.2, total_iters=3)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=7, eta_min=0.005)
schedule = torch.optim.lr_scheduler.SequentialLR(opt, [warmup, cosine], milestones=[3])
for epoch in range(10):
    sampler.set_epoch(epoch)
    loss = epoch_loss(loader, opt, schedule)
    print(f"adafactor epoch {epoch} loss {loss:.10f} lr {schedule.get_last_lr()[0]:.6f}")
print("adafactor state", sorted(opt.state[model[0].weight]), tuple(opt.state[model[0].weight]["row_var"].shape))

opt = torch.optim.ASGD(model.parameters(), lr=0.05, lambd=1e-3, alpha=0.6, t0=8)
step_lr = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
for epoch in range(10):
    loss = epoch_loss(loader, opt, step_lr)
    print(f"asgd epoch {epoch} loss {loss:.10f} lr {step_lr.get_last_lr()[0]:.6f}")
state = opt.state[model[0].weight]
print("asgd eta", round(state["eta"].item(), 8), "mu", round(state["mu"].item(), 8), "step", state["step"].item())

# evaluate with the averaged weights (ASGD keeps them in state['ax'])
with torch.no_grad():
    saved = [p.clone() for p in model.parameters()]
    for p in model.parameters():
        p.copy_(opt.state[p]["ax"])
    print("averaged-weights loss", round(loss_fn(model(xs), ys).item(), 10))
    for p, s in zip(model.parameters(), saved):
        p.copy_(s)

checkpoint = opt.state_dict()
again = torch.optim.ASGD(model.parameters(), lr=0.05, lambd=1e-3, alpha=0.6, t0=8)
again.load_state_dict(checkpoint)
print("restored groups", [(g["lr"], g["t0"], g["params"]) for g in again.state_dict()["param_groups"]])
print("one more step", round(epoch_loss(loader, again), 10))

# Muon for the hidden matrix, AdamW for the rest
hidden = [p for p in model.parameters() if p.ndim == 2]
rest = [p for p in model.parameters() if p.ndim != 2]
muon = torch.optim.Muon(hidden, lr=0.02, momentum=0.9, adjust_lr_fn="match_rms_adamw")
adamw = torch.optim.AdamW(rest, lr=0.01)
for step in range(6):
    muon.zero_grad()
    adamw.zero_grad()
    loss = loss_fn(model(xs), ys)
    loss.backward()
    muon.step()
    adamw.step()
    print(f"muon step {step} loss {loss.item():.8f}")
try:
    torch.optim.Muon([model[0].bias])
except ValueError as e:
    print("Muon refuses:", str(e).split(" whereas")[0])
try:
    sparse = torch.optim.SparseAdam([model[2].bias])
    loss_fn(model(xs), ys).backward()
    sparse.step()
except RuntimeError as e:
    print("SparseAdam:", e)
