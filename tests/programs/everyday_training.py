"""Everyday training code: initialisation by module.apply with nn.init, frozen layers and
param groups, AdamW with amsgrad and OneCycleLR, ReduceLROnPlateau, gradient
accumulation, clip_grad_value_, parameters_to_vector, foreach EMA, weighted sampling,
random_split, top-k accuracy and a confusion matrix, early stopping on a validation
loss, checkpoint round trip through torch.save/torch.load into a BytesIO."""
import io
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import TensorDataset, DataLoader, random_split, WeightedRandomSampler, Subset
from torch.nn.utils import parameters_to_vector, vector_to_parameters, clip_grad_value_

torch.manual_seed(0)
N, D, C = 96, 6, 4
X = torch.randn(N, D)
W_true = torch.randn(D, C)
y = (X @ W_true + 0.3 * torch.randn(N, C)).argmax(1)
ds = TensorDataset(X, y)
train_ds, val_ds = random_split(ds, [72, 24], generator=torch.Generator().manual_seed(1))
print("split", len(train_ds), len(val_ds), train_ds.indices[:6])
counts = torch.bincount(y[train_ds.indices], minlength=C)
print("class counts", counts.tolist())
weights = (1.0 / counts.float())[y[train_ds.indices]]
sampler = WeightedRandomSampler(weights, num_samples=72, replacement=True, generator=torch.Generator().manual_seed(2))
loader = DataLoader(train_ds, batch_size=16, sampler=sampler, drop_last=True)
val_loader = DataLoader(val_ds, batch_size=12)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(D, 32, bias=False), nn.BatchNorm1d(32), nn.SiLU(), nn.Dropout(0.1), nn.Linear(32, 16), nn.ReLU())
        self.head = nn.Linear(16, C)

    def forward(self, x):
        return self.head(self.body(x))


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5), nonlinearity="leaky_relu")
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, nn.BatchNorm1d):
        nn.init.ones_(m.weight)
        nn.init.constant_(m.bias, 0.01)


model = Net()
model.apply(init_weights)
nn.init.xavier_normal_(model.head.weight, gain=0.5)
nn.init.trunc_normal_(model.body[4].weight, std=0.1, a=-0.2, b=0.2)
print("init norms", [round(p.norm().item(), 5) for p in model.parameters()])
vec = parameters_to_vector(model.parameters())
print("num params", vec.numel(), round(vec.sum().item(), 5))

decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim == 1 else decay).append(p)
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0, "lr": 5e-3}], lr=1e-2, amsgrad=True)
epochs, accum = 6, 2
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=[2e-2, 1e-2], epochs=epochs, steps_per_epoch=len(loader) // accum)
plateau_opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(plateau_opt, mode="min", factor=0.5, patience=1)
ema = [p.detach().clone() for p in model.parameters()]
best, bad, best_state = float("inf"), 0, None
for epoch in range(epochs):
    model.train()
    if epoch == 3:                       # freeze the first layer halfway
        for p in model.body[0].parameters():
            p.requires_grad_(False)
    total = 0.0
    for i, (xb, yb) in enumerate(loader):
        loss = F.cross_entropy(model(xb), yb, label_smoothing=0.1) / accum
        loss.backward()
        total += loss.item()
        if (i + 1) % accum == 0:
            clip_grad_value_(model.parameters(), 0.5)
            opt.step()
            opt.zero_grad(set_to_none=True)
            sched.step()
            with torch.no_grad():
                torch._foreach_mul_(ema, 0.9)
                torch._foreach_add_(ema, [p.detach() for p in model.parameters()], alpha=0.1)
    model.eval()
    with torch.no_grad():
        vl = sum(F.cross_entropy(model(xb), yb, reduction="sum").item() for xb, yb in val_loader) / len(val_ds)
    plateau.step(vl)
    print(f"epoch {epoch} train {total:.5f} val {vl:.5f} lr {sched.get_last_lr()[0]:.6f} plateau lr {plateau_opt.param_groups[0]['lr']}")
    if vl < best - 1e-4:
        best, bad = vl, 0
        buf = io.BytesIO()
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": epoch}, buf)
        best_state = buf.getvalue()
    else:
        bad += 1
        if bad >= 2:
            print("early stop at", epoch)
            break

print("frozen grads", model.body[0].weight.grad is None, model.body[0].weight.requires_grad)
ckpt = torch.load(io.BytesIO(best_state), weights_only=True)
print("checkpoint epoch", ckpt["epoch"], sorted(ckpt["opt"]["state"])[:3], len(ckpt["opt"]["param_groups"]))
fresh = Net()
fresh.load_state_dict(ckpt["model"])
fresh.eval()
with torch.no_grad():
    logits = fresh(X[val_ds.indices])
target = y[val_ds.indices]
top1 = (logits.argmax(1) == target).float().mean().item()
top2 = (logits.topk(2, dim=1).indices == target[:, None]).any(1).float().mean().item()
print("top1", round(top1, 5), "top2", round(top2, 5))
conf = torch.bincount(target * C + logits.argmax(1), minlength=C * C).reshape(C, C)
print("confusion", conf.tolist())
# EMA weights into a copy via vector_to_parameters
ema_model = Net()
vector_to_parameters(parameters_to_vector(ema), ema_model.parameters())
ema_model.load_state_dict({k: v for k, v in fresh.state_dict().items() if "running" in k or "num_batches" in k}, strict=False)
ema_model.eval()
with torch.no_grad():
    print("ema val loss", round(F.cross_entropy(ema_model(X[val_ds.indices]), target).item(), 5))
print("one_hot", F.one_hot(target[:5], C).sum(0).tolist())
print("subset", len(Subset(ds, [0, 5, 9])), Subset(ds, [0, 5, 9])[1][1].item())
