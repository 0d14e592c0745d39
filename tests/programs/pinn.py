"""A physics-informed network for u'' = -sin(x) on [0, pi]: second derivatives by autograd."""
import math
import torch
import torch.nn as nn


def det(*shape, scale=1.0, phase=0.0, dtype=torch.float64):
    # deterministic "random" values: generators differ between libraries
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float64) * 0.7371 + phase) * scale).reshape(shape).to(dtype)


def init_(model, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(det(*p.shape, scale=scale, phase=float(i)).to(p.dtype))


torch.manual_seed(2)
model = nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(),
                      nn.Linear(20, 1)).double()
init_(model, scale=0.5)
opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5, history_size=10,
                        line_search_fn="strong_wolfe")
x = torch.linspace(0, math.pi, 32, dtype=torch.float64).unsqueeze(1).requires_grad_(True)
xb = torch.tensor([[0.0], [math.pi]], dtype=torch.float64)


def loss_fn():
    u = model(x)
    du = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]
    d2u = torch.autograd.grad(du, x, torch.ones_like(du), create_graph=True)[0]
    residual = d2u + torch.sin(x)
    return residual.pow(2).mean() + model(xb).pow(2).mean()


def closure():
    opt.zero_grad()
    loss = loss_fn()
    loss.backward()
    return loss


for epoch in range(4):
    loss = opt.step(closure)
    print(f"epoch {epoch} loss {loss.item():.8f}")
with torch.no_grad():
    test = torch.tensor([[math.pi / 2]], dtype=torch.float64)
    print("u(pi/2)", model(test).item())
