"""Higher-order gradients: create_graph, torch.autograd.grad, Hessians, functional API."""
import torch

x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
y = (x ** 3).sum() + (x[0] * x[1] * x[2])
(g,) = torch.autograd.grad(y, x, create_graph=True)
print("grad", g)
rows = [torch.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(3)]
print("hessian rows", torch.stack(rows))

# gradient penalty style: backward through a gradient norm
w = torch.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=torch.float64, requires_grad=True)
inp = torch.tensor([[0.2, 0.4], [0.6, -0.8]], dtype=torch.float64, requires_grad=True)
out = torch.tanh(inp @ w).sum()
(gi,) = torch.autograd.grad(out, inp, create_graph=True)
penalty = (gi.norm(2, dim=1) - 1).pow(2).mean()
penalty.backward()
print("penalty", penalty.item())
print("w.grad", w.grad)

# third derivative of a scalar function
t = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
d1 = torch.autograd.grad(torch.sin(t) * t ** 2, t, create_graph=True)[0]
d2 = torch.autograd.grad(d1, t, create_graph=True)[0]
d3 = torch.autograd.grad(d2, t)[0]
print("derivatives", d1.item(), d2.item(), d3.item())
