"""Parametrized weights trained with RAdam / NAdam and param groups: a symmetric and a
low-rank parametrization, parametrize.cached() (how often the parametrization runs),
tuple-valued right_inverse, removing parametrizations, add_param_group."""
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P

torch.manual_seed(0)
calls = {"sym": 0, "lowrank": 0}


class Symmetric(nn.Module):
    def forward(self, X):
        calls["sym"] += 1
        return X.triu() + X.triu(1).transpose(-1, -2)


class LowRank(nn.Module):
    """W = U @ V stored as two factors (right_inverse returns a tuple)."""

    def __init__(self, rank):
        super().__init__()
        self.rank = rank

    def forward(self, U, V):
        calls["lowrank"] += 1
        return U @ V

    def right_inverse(self, W):
        U, S, Vh = torch.linalg.svd(W, full_matrices=False)
        root = S[: self.rank].sqrt()
        return U[:, : self.rank] * root, root[:, None] * Vh[: self.rank]


def fixed(*shape, scale=0.3):
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float32) * 1.7) * scale).reshape(shape)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = nn.Linear(4, 4)
        self.proj = nn.Linear(4, 3)
        with torch.no_grad():
            self.mix.weight.copy_(fixed(4, 4))
            self.mix.bias.copy_(fixed(4, scale=0.1))
            self.proj.weight.copy_(fixed(3, 4, scale=0.5))
            self.proj.bias.zero_()

    def forward(self, x):
        # the symmetric weight is used twice per forward
        h = torch.tanh(self.mix(x))
        h = torch.tanh(self.mix(h))
        return self.proj(h)


net = Net()
P.register_parametrization(net.mix, "weight", Symmetric())
P.register_parametrization(net.proj, "weight", LowRank(rank=2))
print("parametrized:", P.is_parametrized(net.mix), P.is_parametrized(net.proj, "weight"),
      P.is_parametrized(net.proj, "bias"))
print("names", sorted(n for n, _ in net.named_parameters()))
W = net.mix.weight
print("symmetric", torch.equal(W, W.T), "proj rank", torch.linalg.matrix_rank(net.proj.weight).item())

x = fixed(8, 4, scale=1.0)
y = fixed(8, 3, scale=0.8) + 0.1

calls.update(sym=0, lowrank=0)
net(x)
print("calls without cache", calls)
calls.update(sym=0, lowrank=0)
with P.cached():
    out = net(x)
    out = net(x)
print("calls with cache", calls)

opt = torch.optim.RAdam([
    {"params": [net.mix.parametrizations.weight.original, net.mix.bias]},
    {"params": net.proj.parameters(), "lr": 0.02, "weight_decay": 0.01},
], lr=0.05, decoupled_weight_decay=True)
print("groups", [(g["lr"], g["weight_decay"], len(g["params"])) for g in opt.param_groups])
for step in range(6):
    opt.zero_grad()
    with P.cached():
        loss = nn.functional.mse_loss(net(x), y)
    loss.backward()
    opt.step()
    print(f"radam {step} loss {loss.item():.6f}")
print("still symmetric", torch.allclose(net.mix.weight, net.mix.weight.T))
state = opt.state[net.mix.bias]
print("radam state", sorted(state), round(state["step"].item()), [round(v, 6) for v in state["exp_avg"].tolist()])

# a new head joins later with its own settings
extra = nn.Linear(3, 1)
with torch.no_grad():
    extra.weight.copy_(fixed(1, 3, scale=0.4))
    extra.bias.fill_(0.05)
opt.add_param_group({"params": extra.parameters(), "lr": 0.1})
print("added group", opt.param_groups[-1]["lr"], opt.param_groups[-1]["betas"],
      opt.param_groups[-1]["decoupled_weight_decay"])
target = y.sum(1, keepdim=True)
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(extra(net(x)), target)
    loss.backward()
    opt.step()
    print(f"with head {step} loss {loss.item():.6f}")

# NAdam on the same problem from a copy of the starting weights
net2 = Net()
P.register_parametrization(net2.mix, "weight", Symmetric())
nadam = torch.optim.NAdam(net2.parameters(), lr=0.03, momentum_decay=0.004, weight_decay=0.001,
                          decoupled_weight_decay=True)
for step in range(5):
    nadam.zero_grad()
    loss = nn.functional.mse_loss(net2(x), y)
    loss.backward()
    nadam.step()
    print(f"nadam {step} loss {loss.item():.6f}")
s = nadam.state[net2.mix.bias]
print("nadam state", sorted(s), round(s["mu_product"].item(), 6))

# removing: keep the current value as a plain parameter, or go back to the original
before = net.mix.weight.detach().clone()
P.remove_parametrizations(net.mix, "weight", leave_parametrized=True)
print("removed, same value", torch.equal(net.mix.weight, before),
      type(net.mix.weight).__name__, P.is_parametrized(net.mix))
orig = net.proj.parametrizations.weight.original0.detach().clone()
P.remove_parametrizations(net.proj, "weight", leave_parametrized=True)
print("low-rank removed", tuple(net.proj.weight.shape), round(net.proj.weight.sum().item(), 5))
try:
    P.remove_parametrizations(net.proj, "weight")
except ValueError as e:
    print("ValueError:", e)
try:
    with P.cached():
        with P.cached():
            net2(x)
    print("nested cached ok")
except RuntimeError as e:
    print("RuntimeError:", e)
