"""Jacobians of a small network by hand with torch.autograd.grad: one row per call,
all rows at once with is_grads_batched, parameters that take no part (allow_unused,
materialize_grads), and torch.autograd.functional.jacobian for comparison."""
import torch
import torch.nn as nn
from torch.autograd.functional import jacobian

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
unused_head = nn.Linear(4, 5)           # registered on the side, never called
with torch.no_grad():
    for i, p in enumerate(list(net.parameters()) + list(unused_head.parameters())):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) + i).reshape(p.shape) * 0.5)

x = torch.tensor([0.3, -0.7, 1.1], requires_grad=True)
y = net(x)
print("y", [round(v, 6) for v in y.tolist()])

# row by row
rows = []
for i in range(y.numel()):
    onehot = torch.zeros_like(y)
    onehot[i] = 1.0
    (row,) = torch.autograd.grad(y, x, onehot, retain_graph=True)
    rows.append(row)
J_loop = torch.stack(rows)
print("J loop\n", J_loop.round(decimals=5))

# every row in one call: the first dimension of grad_outputs is the batch
eye = torch.eye(y.numel())
(J_batched,) = torch.autograd.grad(y, x, eye, retain_graph=True, is_grads_batched=True)
print("batched equal", torch.allclose(J_batched, J_loop), tuple(J_batched.shape))

J_func = jacobian(net, x.detach())
print("functional equal", torch.allclose(J_func, J_loop))
J_fwd = jacobian(net, x.detach(), vectorize=True, strategy="forward-mode")
print("forward-mode equal", torch.allclose(J_fwd, J_loop))

# Jacobian with respect to the parameters, unused ones included
params = list(net.parameters()) + list(unused_head.parameters())
try:
    torch.autograd.grad(y[0], params, retain_graph=True)
except RuntimeError as e:
    print("RuntimeError:", str(e)[:90])
g = torch.autograd.grad(y[0], params, retain_graph=True, allow_unused=True)
print("allow_unused", [None if t is None else tuple(t.shape) for t in g])
g = torch.autograd.grad(y[0], params, retain_graph=True, materialize_grads=True)
print("materialize", [tuple(t.shape) for t in g], "zeros:", [bool((t == 0).all()) for t in g])
try:
    torch.autograd.grad(y[0], params, allow_unused=False, materialize_grads=True)
except ValueError as e:
    print("ValueError:", e)

# per-output parameter Jacobian, batched, then checked against the loop
y = net(x)
param_rows = torch.autograd.grad(y, list(net.parameters()), torch.eye(2), is_grads_batched=True,
                                 retain_graph=True)
print("param jac shapes", [tuple(t.shape) for t in param_rows])
for k in range(2):
    loop = torch.autograd.grad(y[k], list(net.parameters()), retain_graph=True)
    print(f"row {k} equal", all(torch.allclose(a[k], b) for a, b in zip(param_rows, loop)))

# Gauss-Newton matrix J^T J for the flattened parameters
flat = torch.cat([t.reshape(2, -1) for t in param_rows], dim=1)
gn = flat.T @ flat
print("GN", tuple(gn.shape), f"trace {gn.trace().item():.6f}",
      f"rank {torch.linalg.matrix_rank(gn).item()}")

# a damped Gauss-Newton step on a least-squares fit of one input-output pair
target = torch.tensor([0.25, -0.4])
theta = [p.detach().clone().requires_grad_() for p in net.parameters()]


def forward(ps, inp):
    h = torch.tanh(inp @ ps[0].T + ps[1])
    return h @ ps[2].T + ps[3]


for it in range(3):
    out = forward(theta, x.detach())
    r = out - target
    rows = torch.autograd.grad(out, theta, torch.eye(2), is_grads_batched=True)
    Jm = torch.cat([t.reshape(2, -1) for t in rows], dim=1)
    step = torch.linalg.solve(Jm.T @ Jm + 0.1 * torch.eye(Jm.shape[1]), Jm.T @ r.detach())
    with torch.no_grad():
        offset = 0
        for p in theta:
            n = p.numel()
            p -= step[offset:offset + n].reshape(p.shape)
            offset += n
    print(f"GN iter {it} residual {r.norm().item():.6f}")
print("final residual below 1e-4:", (forward(theta, x.detach()) - target).norm().item() < 1e-4)

# batched grads through a function whose backward is a custom Function
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t ** 3

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return 3 * t ** 2 * g


u = torch.tensor([1.0, 2.0, -1.5], requires_grad=True)
v = Cube.apply(u)
(jac,) = torch.autograd.grad(v, u, torch.eye(3), is_grads_batched=True)
print("cube jacobian diag", torch.diagonal(jac).tolist())
