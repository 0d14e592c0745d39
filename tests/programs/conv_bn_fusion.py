"""Folding BatchNorm into the preceding conv / linear layer for inference: train a
little, switch to eval, fuse, and check the fused model gives the same outputs."""
import torch
import torch.nn as nn
from torch.nn.utils import fuse_conv_bn_eval, fuse_linear_bn_eval
from torch.nn.utils.fusion import fuse_conv_bn_weights

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 4, 3, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                      nn.Flatten(), nn.Linear(4 * 4 * 4, 3), nn.BatchNorm1d(3))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + i).reshape(p.shape) / 2)
x = torch.sin(torch.arange(6 * 36, dtype=torch.float32) / 5).reshape(6, 1, 6, 6)
target = torch.arange(6) % 3
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), target)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")

model.eval()
print("running mean", model[1].running_mean)
print("running var", model[5].running_var)
conv = fuse_conv_bn_eval(model[0], model[1])
linear = fuse_linear_bn_eval(model[4], model[5])
fused = nn.Sequential(conv, nn.ReLU(), nn.Flatten(), linear).eval()
print(fused)
print("fused conv bias", conv.bias)
print("fused linear weight norm", round(linear.weight.norm().item(), 4))
with torch.no_grad():
    ref, out = model(x), fused(x)
print("max difference below 1e-5:", (ref - out).abs().max().item() < 1e-5)
print("predictions", out.argmax(1).tolist(), ref.argmax(1).tolist())

w, b = fuse_conv_bn_weights(torch.ones(2, 3, 1, 1), None, torch.zeros(3), torch.full((3,), 3.0),
                            1.0, None, torch.tensor([0.0, 1.0, 2.0]), transpose=True)
print(w.shape, w.flatten().tolist(), b.tolist(), w.requires_grad, b.requires_grad)
try:
    fuse_conv_bn_eval(model[0].train(), model[1])
except AssertionError as e:
    print("AssertionError:", e)
