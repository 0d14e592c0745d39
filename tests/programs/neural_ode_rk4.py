"""Neural ODE: a vector field MLP integrated with a hand-written RK4 solver, trained by
backprop through the solver to fit a spiral; gradients checked against an adjoint-style
vector-Jacobian product, and torch.autograd.functional.jvp/vjp on the solver."""
import torch
import torch.nn as nn
from torch.autograd.functional import jacobian, jvp, vjp

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


class Field(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))

    def forward(self, t, z):
        tt = torch.full_like(z[..., :1], t)
        return self.net(torch.cat([z, tt], -1))


def rk4(f, z0, t0, t1, steps):
    h = (t1 - t0) / steps
    z, t, path = z0, t0, [z0]
    for _ in range(steps):
        k1 = f(t, z)
        k2 = f(t + h / 2, z + h / 2 * k1)
        k3 = f(t + h / 2, z + h / 2 * k2)
        k4 = f(t + h, z + h * k3)
        z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + h
        path.append(z)
    return torch.stack(path)


# target: a damped rotation z' = A z sampled at 9 times
A = torch.tensor([[-0.1, -1.0], [1.0, -0.1]])
z0 = torch.tensor([[1.0, 0.0], [0.0, 0.5], [-0.7, 0.2]])
with torch.no_grad():
    target = rk4(lambda t, z: z @ A.T, z0, 0.0, 2.0, 8)
print("target", tuple(target.shape), [f"{v:.5f}" for v in target[-1, 0].tolist()])

field = Field()
opt = torch.optim.Adam(field.parameters(), lr=0.02)
for it in range(30):
    pred = rk4(field, z0, 0.0, 2.0, 8)
    loss = (pred - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 6 == 0 or it == 29:
        print(f"iter {it:2d} loss {loss.item():.6f}")
print("grad_fn:", type(pred.grad_fn).__name__, "steps recorded:", pred.shape[0] - 1)

# adjoint-style check: dL/dz0 from backprop equals a VJP through the flow map
z_in = z0.clone().requires_grad_()
zT = rk4(field, z_in, 0.0, 2.0, 8)[-1]
lossT = (zT - target[-1]).pow(2).sum()
g_backprop, = torch.autograd.grad(lossT, z_in, create_graph=True)
adj = 2 * (zT - target[-1]).detach()
g_vjp, = torch.autograd.grad(zT, z_in, grad_outputs=adj, retain_graph=True)
print("dL/dz0:", [f"{v:.6f}" for v in g_backprop.flatten().tolist()])
print("vjp matches:", torch.allclose(g_backprop, g_vjp))
hv, = torch.autograd.grad(g_backprop.sum(), z_in)
print("second-order:", [f"{v:.6f}" for v in hv.flatten().tolist()])


def flow(z):
    return rk4(field, z, 0.0, 1.0, 4)[-1]


with torch.no_grad():
    start = z0[0].clone()
out, tangent = jvp(flow, start, torch.tensor([1.0, 0.0]))
_, cotangent = vjp(flow, start, torch.tensor([0.0, 1.0]))
J = jacobian(flow, start)
print("flow:", [f"{v:.6f}" for v in out.tolist()])
print("jvp:", [f"{v:.6f}" for v in tangent.tolist()], "J[:,0]:", [f"{v:.6f}" for v in J[:, 0].tolist()])
print("vjp:", [f"{v:.6f}" for v in cotangent.tolist()], "J[1]:", [f"{v:.6f}" for v in J[1].tolist()])
print("det J (volume change): %.6f" % torch.linalg.det(J).item())
print("requires_grad:", out.requires_grad, tangent.requires_grad, J.requires_grad)
