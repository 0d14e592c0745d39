"""A TorchFunctionMode that counts the torch calls a small model makes (the
torch.overrides docs' mode pattern), nested modes, a mode that rewrites results, and
the mode stack helpers."""
import collections

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode


class CountCalls(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.counts[func.__name__] += 1
        return func(*args, **(kwargs or {}))


class Tag(TorchFunctionMode):
    def __init__(self, name):
        super().__init__()
        self.name = name

    def __torch_function__(self, func, types, args=(), kwargs=None):
        print(f"  {self.name}: {func.__name__} types={[t.__name__ for t in types]}")
        return func(*args, **(kwargs or {}))


torch.manual_seed(0)
w1 = torch.randn(4, 3, requires_grad=True)
b1 = torch.zeros(4, requires_grad=True)
w2 = torch.randn(1, 4, requires_grad=True)
x = torch.randn(5, 3)
target = torch.randn(5, 1)

with CountCalls() as counter:
    h = F.relu(F.linear(x, w1, b1))
    out = torch.tanh(F.linear(h, w2))
    loss = F.mse_loss(out, target)
    loss.backward()
    total = torch.add(w1.grad.sum(), b1.grad.sum()) * 2
for name, n in sorted(counter.counts.items()):
    print(name, n)
print("loss", round(loss.item(), 4), "total", round(total.item(), 4))

print("nested:")
with Tag("outer"):
    with Tag("inner"):
        y = torch.mul(x[:2], 3)
        z = y.sum()
print(round(z.item(), 4))


class Doubling(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out * 2 if func is torch.exp else out


with Doubling():
    print(torch.exp(torch.zeros(2)), torch.sin(torch.zeros(2)))
print(torch.exp(torch.zeros(2)))

print(torch.overrides._get_current_function_mode())
with CountCalls() as m:
    print(torch.overrides._get_current_function_mode() is m)
    with torch._C.DisableTorchFunction():
        torch.add(x, 1)
    torch.add(x, 1)
print(dict(m.counts))
