"""Parametrizations (parametrize, weight_norm, spectral_norm) and the old hook forms."""
import warnings
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P

def init(m, k):
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float64) * (k + i)).reshape(p.shape))
    return m

class Sym(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

class Scale(nn.Module):
    def forward(self, X):
        return X * 2
    def right_inverse(self, X):
        return X / 2

m = init(nn.Linear(3, 3).double(), 0.3)
P.register_parametrization(m, "weight", Sym())
print(m)
print(type(m).__name__, P.is_parametrized(m), P.is_parametrized(m, "bias"), P.type_before_parametrizations(m).__name__)
print(list(m.state_dict().keys()), [n for n, _ in m.named_parameters()])
P.register_parametrization(m, "weight", Scale())
print(m.parametrizations.weight, m.weight)
x = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3)
m(x).sum().backward()
print(m.parametrizations.weight.original.grad)
try:
    m.weight = torch.eye(3, dtype=torch.float64)
except RuntimeError as e:
    print(e)
with P.cached():
    print(m.weight is m.weight)
P.remove_parametrizations(m, "weight")
print(type(m).__name__, type(m.weight).__name__, list(m.state_dict().keys()), m.weight)
try:
    P.remove_parametrizations(m, "weight")
except ValueError as e:
    print(type(e).__name__)
s = init(nn.Linear(3, 3).double(), 0.5)
P.register_parametrization(s, "weight", Scale())
s.weight = torch.eye(3, dtype=torch.float64)
print(s.parametrizations.weight.original, s.weight)
P.remove_parametrizations(s, "weight", leave_parametrized=False)
print(s.weight)
wn = nn.utils.parametrizations.weight_norm(init(nn.Linear(3, 2).double(), 0.7))
print([n for n, _ in wn.named_parameters()], wn.parametrizations.weight.original0, wn.weight.detach())
wn(x).pow(2).sum().backward()
print(wn.parametrizations.weight.original0.grad, wn.parametrizations.weight.original1.grad)
wn2 = nn.utils.parametrizations.weight_norm(init(nn.Conv1d(2, 3, 2).double(), 0.2), dim=None)
print(wn2.parametrizations.weight.original0)
sn = nn.utils.parametrizations.spectral_norm(init(nn.Linear(3, 2).double(), 0.9))
print(list(sn.state_dict().keys()))
sn.eval()
print(torch.linalg.matrix_norm(sn.weight, ord=2))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    old = nn.utils.weight_norm(init(nn.Linear(3, 2).double(), 0.4))
print([n for n, _ in old.named_parameters()], old.weight_g, old(x))
nn.utils.remove_weight_norm(old)
print([n for n, _ in old.named_parameters()], old.weight)
old2 = nn.utils.spectral_norm(init(nn.Linear(3, 2).double(), 0.6))
print([n for n, _ in old2.named_parameters()], list(old2.state_dict().keys()))
for _ in range(30):
    old2(x)
print(torch.linalg.matrix_norm(old2.weight, ord=2))
nn.utils.remove_spectral_norm(old2)
print(list(old2.state_dict().keys()))
for f in (nn.utils.remove_weight_norm, nn.utils.remove_spectral_norm):
    try:
        f(nn.Linear(2, 2))
    except ValueError as e:
        print(e)
