"""An orthogonally parametrized recurrent cell trained with SGD (each orthogonal map),
plus the small utilities around it: increment_version, swap_tensors and
convert_conv2d_weight_memory_format."""
import torch
import torch.nn as nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import orthogonal

torch.set_default_dtype(torch.float64)


def make_cell(orthogonal_map, use_trivialization):
    cell = nn.Linear(4, 4, bias=False)
    with torch.no_grad():
        cell.weight.copy_(torch.sin(torch.arange(16.0) * 0.9).reshape(4, 4) + 2 * torch.eye(4))
    return orthogonal(cell, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)


x0 = torch.cos(torch.arange(8.0)).reshape(2, 4)
target = torch.tensor([[0.5, -0.5, 0.25, 0.0], [0.0, 1.0, -0.25, 0.5]])
for orthogonal_map in ["matrix_exp", "cayley", "householder"]:
    for use_trivialization in [True, False]:
        cell = make_cell(orthogonal_map, use_trivialization)
        opt = torch.optim.SGD(cell.parameters(), lr=0.1)
        for step in range(5):
            opt.zero_grad()
            h = x0
            for _ in range(3):
                h = torch.tanh(cell(h))
            loss = (h - target).pow(2).mean()
            loss.backward()
            opt.step()
        W = cell.weight
        err = (W.T @ W - torch.eye(4)).abs().max().item()
        print(f"{orthogonal_map:10s} trivialization={use_trivialization!s:5s} "
              f"loss {loss.item():.8f} orthogonal {err < 1e-10} norm {W.norm().item():.6f}")
print(parametrize.is_parametrized(cell), list(cell.state_dict()))

wide = orthogonal(nn.Linear(5, 2), orthogonal_map="householder")
print("rows orthonormal", torch.allclose(wide.weight @ wide.weight.T, torch.eye(2)))

a = torch.ones(3, requires_grad=True)
b = a * 2
c = b * b
torch.autograd.graph.increment_version(b)
try:
    c.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", str(e).split(":")[0])

p, q = nn.Parameter(torch.zeros(2)), nn.Parameter(torch.arange(3.0))
torch.utils.swap_tensors(p, q)
print(p, q.shape)

model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Sequential(nn.ConvTranspose2d(2, 1, 3)))
same = torch.nn.utils.convert_conv2d_weight_memory_format(model, torch.channels_last) is model
print("converted in place", same, model[0].weight.shape)
