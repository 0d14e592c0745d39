"""Second-order solvers written with torch.func and torch.autograd.functional.

1. Influence functions with conjugate gradient: a small regression model's loss hessian
over a params dict (functional_call), hvp by torch.func (jvp of grad) and by
torch.autograd.functional.hvp/vhp, CG solve, influence of each training point on a
test loss; Newton's method with autograd.functional.hessian + linalg.solve.

2. Implicit differentiation of a fixed point (torch.func.jvp/vjp + linalg.solve, and a
custom Function whose backward solves the adjoint system), Gauss-Newton and natural
gradient products with jvp then vjp (torch.func.linearize), and a damped Gauss-Newton
fit of a small network solved by conjugate gradient.
"""
import torch
import torch.nn as nn
from torch.func import functional_call, grad, jvp, vjp, hessian, vmap

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
X = torch.randn(12, 3, dtype=torch.float64)
y = torch.sin(X.sum(1, keepdim=True))
Xt = torch.randn(2, 3, dtype=torch.float64)
yt = torch.cos(Xt.sum(1, keepdim=True))
params = {k: v.detach().clone() for k, v in model.named_parameters()}
names = list(params)


def loss_fn(p, x, t):
    out = functional_call(model, p, (x,))
    return ((out - t) ** 2).mean()  # (mse_loss under jvp(grad) trips torch: ZeroTensor)


def train_loss(p):
    return loss_fn(p, X, y) + 0.1 * (p["0.weight"] ** 2).sum() + 0.1 * (p["2.weight"] ** 2).sum()


def hvp_func(p, v):
    return jvp(grad(train_loss), (p,), (v,))[1]


def tree_dot(a, b):
    return sum((a[k] * b[k]).sum() for k in a)


def cg(matvec, b, iters=30, tol=1e-10):
    x = {k: torch.zeros_like(v) for k, v in b.items()}
    r = {k: v.clone() for k, v in b.items()}
    d = {k: v.clone() for k, v in r.items()}
    rs = tree_dot(r, r)
    for it in range(iters):
        Ad = matvec(d)
        alpha = rs / tree_dot(d, Ad)
        x = {k: x[k] + alpha * d[k] for k in x}
        r = {k: r[k] - alpha * Ad[k] for k in r}
        rs_new = tree_dot(r, r)
        if rs_new.sqrt() < tol:
            break
        d = {k: r[k] + (rs_new / rs) * d[k] for k in r}
        rs = rs_new
    return x, it


# a few steps of Adam first so the hessian is positive definite-ish
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for step in range(30):
    opt.zero_grad()
    l = nn.functional.mse_loss(model(X), y) + 1e-2 * sum((q ** 2).sum() for q in model.parameters())
    l.backward()
    opt.step()
params = {k: v.detach().clone() for k, v in model.named_parameters()}
print("trained loss", round(train_loss(params).item(), 8))

g_test = grad(lambda p: loss_fn(p, Xt, yt))(params)
s_test, iters = cg(lambda v: hvp_func(params, v), g_test)
# the count itself depends on the last bits of the BLAS sums (the residual crosses the
# tolerance near iteration 25 with no margin), so the program prints that it converged
print("cg converged", iters < 29)
res = {k: hvp_func(params, s_test)[k] - g_test[k] for k in names}
print("cg residual small", all(r.abs().max().item() < 1e-6 for r in res.values()))
for k in names:
    print(k, [round(v, 5) for v in s_test[k].flatten()[:4].tolist()])

# per-example training gradients by vmap(grad) and their influence
per_ex = vmap(grad(lambda p, x, t: loss_fn(p, x.unsqueeze(0), t.unsqueeze(0))),
              in_dims=(None, 0, 0))(params, X, y)
influence = -sum((per_ex[k] * s_test[k]).flatten(1).sum(1) for k in names)
print("influence", [round(v, 5) for v in influence.tolist()])
print("most helpful", influence.argmin().item(), "most harmful", influence.argmax().item())

# the same hvp three other ways: autograd.functional.hvp / vhp on a flat vector
flat = torch.cat([params[k].flatten() for k in names])
shapes = [params[k].shape for k in names]
sizes = [params[k].numel() for k in names]


def unflatten(v):
    return {k: c.view(s) for k, c, s in zip(names, v.split(sizes), shapes)}


def flat_loss(v):
    return train_loss(unflatten(v))


vec = torch.cat([s_test[k].flatten() for k in names])
_, hv = torch.autograd.functional.hvp(flat_loss, flat, vec)
_, vh = torch.autograd.functional.vhp(flat_loss, flat, vec)
ref = torch.cat([hvp_func(params, s_test)[k].flatten() for k in names])
print("hvp agree", torch.allclose(hv, ref), torch.allclose(vh, ref))
# reverse-over-reverse with vjp
_, vjp_fn = vjp(grad(train_loss), params)
rr = vjp_fn(s_test)[0]
print("vjp of grad agrees", all(torch.allclose(rr[k], hvp_func(params, s_test)[k]) for k in names))

# full hessian over the params dict with torch.func.hessian: nested dict structure
H = hessian(train_loss)(params)
print("hessian keys", sorted(H), sorted(H["0.weight"]))
print("block shapes", tuple(H["0.weight"]["2.bias"].shape), tuple(H["2.bias"]["0.weight"].shape))
Hflat = torch.autograd.functional.hessian(flat_loss, flat)
print("Hflat", tuple(Hflat.shape), round(Hflat.trace().item(), 6), torch.allclose(Hflat, Hflat.T))
print("eig min/max", [round(e, 5) for e in torch.linalg.eigvalsh(Hflat)[[0, -1]].tolist()])

# Newton's method on a small convex problem with functional.hessian + linalg.solve
A = torch.tensor([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.5]], dtype=torch.float64)
c = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)


def energy(w):
    return 0.5 * w @ A @ w - c @ w + 0.1 * torch.exp(w).sum()


w = torch.zeros(3, dtype=torch.float64)
for k in range(4):
    g = torch.autograd.functional.jacobian(energy, w)
    Hn = torch.autograd.functional.hessian(energy, w)
    step = torch.linalg.solve(Hn, g)
    w = w - step
    print("newton", k, round(energy(w).item(), 12), f"{g.norm().item():.3e}")
print("w*", [round(v, 8) for v in w.tolist()])


# --- 2 ----------------------------------------------------------------------
import torch
import torch.nn as nn
from torch.func import jvp, vjp, linearize, jacrev, jacfwd, functional_call, vmap

torch.manual_seed(0)
W = torch.randn(4, 4, dtype=torch.float64) * 0.3
b = torch.randn(4, dtype=torch.float64)


def f(z, x):
    return torch.tanh(W @ z + x)


def solve_fixed_point(x, iters=60):
    z = torch.zeros_like(x)
    for _ in range(iters):
        z = f(z, x)
    return z


x0 = torch.linspace(-1, 1, 4, dtype=torch.float64)
z_star = solve_fixed_point(x0)
print("fixed point", [round(v, 10) for v in z_star.tolist()])
print("residual", f"{(f(z_star, x0) - z_star).norm().item():.2e}" if (f(z_star, x0) - z_star).norm() > 1e-12 else "tiny")

# dz*/dx = (I - df/dz)^{-1} df/dx, from jacobians of f at the fixed point
Jz = jacrev(f, argnums=0)(z_star, x0)
Jx = jacfwd(f, argnums=1)(z_star, x0)
dz_dx = torch.linalg.solve(torch.eye(4, dtype=torch.float64) - Jz, Jx)
print("dz/dx row0", [round(v, 8) for v in dz_dx[0].tolist()])
# check by unrolled autodiff through the iterations
unrolled = torch.autograd.functional.jacobian(solve_fixed_point, x0)
print("matches unrolled", torch.allclose(dz_dx, unrolled, atol=1e-8))

# a vector-jacobian product through the fixed point without the full jacobian
v = torch.tensor([1.0, -1.0, 0.5, 2.0], dtype=torch.float64)
_, vjp_z = vjp(lambda z: f(z, x0), z_star)
u = v.clone()
for _ in range(60):                     # u = v + J_z^T u  (the adjoint fixed point)
    u = v + vjp_z(u)[0]
_, vjp_x = vjp(lambda x: f(z_star, x), x0)
print("implicit vjp", [round(t, 8) for t in vjp_x(u)[0].tolist()])
print("vs solve    ", [round(t, 8) for t in (v @ dz_dx).tolist()])
# and a jvp: (I - Jz) dz = Jx dx
dx = torch.tensor([0.3, 0.1, -0.2, 0.4], dtype=torch.float64)
_, rhs = jvp(lambda x: f(z_star, x), (x0,), (dx,))
print("implicit jvp", [round(t, 8) for t in torch.linalg.solve(torch.eye(4, dtype=torch.float64) - Jz, rhs).tolist()])


class FixedPoint(torch.autograd.Function):
    @staticmethod
    def forward(x):
        with torch.no_grad():
            return solve_fixed_point(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output)

    @staticmethod
    def backward(ctx, grad_out):
        x, z = ctx.saved_tensors
        Jz = torch.func.jacrev(f, argnums=0)(z, x)
        u = torch.linalg.solve((torch.eye(4, dtype=x.dtype) - Jz).T, grad_out)
        _, pull = torch.func.vjp(lambda xx: f(z, xx), x)
        return pull(u)[0]


xr = x0.clone().requires_grad_()
out = FixedPoint.apply(xr)
(out * v).sum().backward()
print("Function backward", [round(t, 8) for t in xr.grad.tolist()], out.grad_fn.__class__.__name__)
print("gradcheck", torch.autograd.gradcheck(FixedPoint.apply, (x0.clone().requires_grad_(),), atol=1e-6))

# Gauss-Newton products with linearize: G v = J^T (J v)
net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1)).double()
X = torch.randn(20, 2, dtype=torch.float64)
Y = torch.sin(3 * X[:, :1]) * torch.cos(X[:, 1:])
params = {k: p.detach().clone() for k, p in net.named_parameters()}


def residuals(p):
    return (functional_call(net, p, (X,)) - Y).squeeze(1)


def gn_solve(p, g, damping, iters=40):
    r0, jvp_fn = linearize(residuals, p)
    _, vjp_fn = vjp(residuals, p)
    mv = lambda d: {k: vjp_fn(jvp_fn(d))[0][k] + damping * d[k] for k in d}
    return cg(mv, g, iters, tol=1e-10)[0]


for it in range(6):
    r0 = residuals(params)
    loss = 0.5 * (r0 ** 2).sum()
    _, pull = vjp(residuals, params)
    g = pull(r0)[0]
    step = gn_solve(params, g, damping=0.5)
    params = {k: params[k] - step[k] for k in params}
    print("gauss-newton", it, round(loss.item(), 8))
print("final", round(0.5 * (residuals(params) ** 2).sum().item(), 8))

# the Gauss-Newton matrix itself via vmap over basis tangents of a flat parameter
flat = torch.cat([t.flatten() for t in params.values()])
shapes = [(k, t.shape, t.numel()) for k, t in params.items()]


def res_flat(w):
    parts, i = {}, 0
    for k, s, n in shapes:
        parts[k] = w[i:i + n].view(s)
        i += n
    return residuals(parts)


_, jvp_flat = linearize(res_flat, flat)
J = vmap(jvp_flat)(torch.eye(flat.numel(), dtype=torch.float64)).T
G = J.T @ J
print("J", tuple(J.shape), "G trace", round(G.trace().item(), 6), "rank", torch.linalg.matrix_rank(G).item())
print("J matches jacrev", torch.allclose(J, jacrev(res_flat)(flat)))
