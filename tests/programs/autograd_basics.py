"""The autograd tutorial: leaves, backward, grad accumulation, retain_grad, no_grad."""
import torch

x = torch.linspace(-1.0, 1.0, 5, requires_grad=True)
w = torch.tensor([[0.5, -0.25, 1.0, 0.0, 2.0]], requires_grad=True)
y = (w * x.exp()).sum()
y.backward()
print("x.grad", x.grad)
print("w.grad", w.grad)
print("is_leaf", x.is_leaf, y.is_leaf, y.requires_grad)

# gradients accumulate until zeroed
z = (x ** 2).sum()
z.backward()
print("accumulated", x.grad)
x.grad.zero_()

h = x.sin()
h.retain_grad()
out = (h * h).mean()
out.backward()
print("h.grad", h.grad)
print("x.grad", x.grad)

with torch.no_grad():
    q = x * 3
print("no_grad", q.requires_grad, torch.is_grad_enabled())
d = x.detach()
print("detach", d.requires_grad, d.is_leaf)

# non-scalar output needs a gradient argument
v = x * torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
x.grad = None
v.backward(torch.ones_like(v))
print("vector backward", x.grad)
print(y.grad_fn.name() if hasattr(y.grad_fn, "name") else type(y.grad_fn).__name__)
