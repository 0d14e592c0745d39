"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp."""
import torch

x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
f = lambda t: (t.sin() * t.cos()).sum()
print("functional hessian", torch.autograd.functional.hessian(f, x))
print("functional jacobian", torch.autograd.functional.jacobian(lambda t: t.exp() * t, x))
v = torch.ones(3, dtype=torch.float64)
print("vjp", torch.autograd.functional.vjp(lambda t: t ** 2, x, v)[1])
print("hvp", torch.autograd.functional.hvp(f, x, v)[1])

print("jvp", torch.autograd.functional.jvp(lambda t: t.exp(), x, v)[1])
