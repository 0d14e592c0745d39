"""A deep MLP trained with activation checkpointing (use_reentrant True and False,
checkpoint_sequential), anomaly detection catching a NaN in backward, weight_norm /
spectral_norm in both the parametrization and the old hook API, and gradient clipping
(clip_grad_value_, clip_grad_norm_ with norm types, foreach, error_if_nonfinite)."""
import warnings
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential
from torch.nn.utils import parametrizations as P

torch.manual_seed(0)
warnings.simplefilter("ignore")


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        return x + self.drop(torch.tanh(self.fc(self.norm(x))))


class DeepMLP(nn.Module):
    def __init__(self, d=8, depth=6, reentrant=None):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(depth))
        self.head = nn.Linear(d, 1)
        self.reentrant = reentrant

    def forward(self, x):
        for blk in self.blocks:
            if self.reentrant is None:
                x = blk(x)
            else:
                x = checkpoint(blk, x, use_reentrant=self.reentrant, preserve_rng_state=True)
        return self.head(x)


x = torch.randn(16, 8)
y = x[:, :1] * 0.5 - x[:, 1:2]
results = {}
for mode in (None, False, True):
    torch.manual_seed(1)
    net = DeepMLP(reentrant=mode)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    inp = x.clone().requires_grad_(mode is True)   # reentrant needs an input that requires grad
    for step in range(5):
        opt.zero_grad()
        torch.manual_seed(100 + step)                # same dropout masks in every mode
        loss = nn.functional.mse_loss(net(inp), y)
        loss.backward()
        opt.step()
    results[mode] = [p.detach().clone() for p in net.parameters()]
    print("checkpoint", mode, round(loss.item(), 6), type(loss.grad_fn).__name__)
for mode in (False, True):
    diff = max((a - b).abs().max().item() for a, b in zip(results[None], results[mode]))
    print("max param diff vs plain", mode, diff < 1e-6)

seq = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.ReLU()) for _ in range(4)])
xin = torch.randn(3, 8, requires_grad=True)
out = checkpoint_sequential(seq, 2, xin, use_reentrant=False)
out.sum().backward()
print("checkpoint_sequential", out.shape, round(xin.grad.norm().item(), 6))
try:
    checkpoint(lambda t: t * 2, torch.ones(2))
except Exception as e:
    print(type(e).__name__)

# anomaly detection: a sqrt at zero gives inf * 0 = nan in backward
w = torch.tensor([0.0, 1.0, 4.0], requires_grad=True)
with torch.autograd.detect_anomaly():
    z = torch.sqrt(w) * torch.tensor([0.0, 1.0, 1.0])
    try:
        torch.sqrt(z).sum().backward()
    except RuntimeError as e:
        print("anomaly:", str(e).split(".")[0])
print("grad after anomaly", w.grad)
with torch.autograd.set_detect_anomaly(True, check_nan=False):
    z = torch.sqrt(w) * torch.tensor([0.0, 1.0, 1.0])
    torch.sqrt(z).sum().backward()
    print("check_nan off", w.grad.tolist(), torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
print("anomaly after", torch.is_anomaly_enabled())

# weight / spectral norm, new and old API
lin = nn.Linear(5, 4)
wn = P.weight_norm(nn.Linear(5, 4), name="weight", dim=0)
sn = P.spectral_norm(nn.Linear(5, 4), n_power_iterations=3)
old_wn = nn.utils.weight_norm(nn.Linear(5, 4), dim=1)
old_sn = nn.utils.spectral_norm(nn.Linear(5, 4), n_power_iterations=2)
print("wn params", sorted(n for n, _ in wn.named_parameters()))
print("old wn params", sorted(n for n, _ in old_wn.named_parameters()), old_wn.weight_g.shape)
print("sn buffers", sorted(n for n, _ in sn.named_buffers()), sorted(n for n, _ in old_sn.named_buffers()))
mods = [wn, sn, old_wn, old_sn]
opt = torch.optim.Adam([p for m in mods for p in m.parameters()], lr=0.01)
inp = torch.randn(6, 5)
for step in range(4):
    opt.zero_grad()
    loss = sum(m(inp).pow(2).mean() for m in mods)
    loss.backward()
    opt.step()
    print("wn/sn step", step, round(loss.item(), 6))
sn.eval()
old_sn.eval()
with torch.no_grad():
    s1 = torch.linalg.matrix_norm(sn.weight, ord=2).item()
    s2 = torch.linalg.svdvals(old_sn.weight)[0].item()
print("spectral norms", round(s1, 4), round(s2, 4))
print("wn g", [round(v, 5) for v in wn.parametrizations.weight.original0.flatten().tolist()])
nn.utils.remove_weight_norm(old_wn)
print("removed", sorted(n for n, _ in old_wn.named_parameters()))

# gradient clipping
net = nn.Sequential(nn.Linear(5, 6), nn.ReLU(), nn.Linear(6, 2))
(net(inp) * 50).sum().backward()
grads = [p.grad.clone() for p in net.parameters()]
for kw in ({"max_norm": 1.0}, {"max_norm": 2.0, "norm_type": 1.0}, {"max_norm": 0.5, "norm_type": "inf"},
           {"max_norm": 1.0, "foreach": True}, {"max_norm": 1.0, "norm_type": 3}):
    for p, g in zip(net.parameters(), grads):
        p.grad = g.clone()
    total = nn.utils.clip_grad_norm_(net.parameters(), **kw)
    after = nn.utils.get_total_norm([p.grad for p in net.parameters()], norm_type=kw.get("norm_type", 2.0))
    print("clip_norm", kw, round(total.item(), 4), round(after.item(), 4))
nn.utils.clip_grad_value_(net.parameters(), clip_value=0.3)
print("clip_value", round(max(p.grad.abs().max().item() for p in net.parameters()), 6))
net[0].weight.grad[0, 0] = float("nan")
print("nonfinite total", nn.utils.clip_grad_norm_(net.parameters(), 1.0).item())
try:
    nn.utils.clip_grad_norm_(net.parameters(), 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("RuntimeError:", str(e)[:80])
print("no grads", nn.utils.clip_grad_norm_([torch.zeros(2, requires_grad=True)], 1.0))
