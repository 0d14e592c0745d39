"""Gradient clipping by norm and value, parameters_to_vector, zero_grad(set_to_none)."""
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters

model = nn.Sequential(nn.Linear(3, 5), nn.Sigmoid(), nn.Linear(5, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) + i).reshape(p.shape))
x = torch.linspace(-3, 3, 12).reshape(4, 3)
y = torch.tensor([[10.0, -10.0]] * 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    total = clip_grad_norm_(model.parameters(), max_norm=1.0)
    after = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    print(f"step {step} loss {loss.item():.5f} norm before {total.item():.5f} after {after.item():.5f}")
    opt.step()

opt.zero_grad(set_to_none=False)
print("zeroed", [p.grad.abs().sum().item() for p in model.parameters()])
opt.zero_grad()
print("none", [p.grad is None for p in model.parameters()])
nn.functional.mse_loss(model(x), y).backward()
clip_grad_value_(model.parameters(), clip_value=0.05)
print("value clipped max", max(p.grad.abs().max().item() for p in model.parameters()))
inf_norm = clip_grad_norm_(model.parameters(), 0.01, norm_type=float("inf"))
print("inf norm", inf_norm)
vec = parameters_to_vector(model.parameters())
print("vector", vec.shape, vec[:5])
vector_to_parameters(vec * 0 + 1, model.parameters())
print("ones", model[0].weight)
