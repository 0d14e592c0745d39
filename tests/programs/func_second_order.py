"""The empirical neural tangent kernel (jacobian contraction and the implicit
jvp/vjp variant of torch's tutorial) and hessians by jacfwd(jacrev) against
torch.autograd.functional.hessian.
Then: second-order optimisation with torch.autograd.functional: a Newton-CG and a
trust-region step with hvp/vhp, jacobians by forward mode, jvp/vjp with tuples, and
the strict / create_graph arguments as users meet them."""
import torch
import torch.nn as nn
from torch.func import functional_call, vmap, vjp, jvp, jacrev, jacfwd, hessian

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 6)
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


net = Net().double()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float64) * (0.7 + i)).reshape(p.shape) * 0.5)
params = {k: v.detach() for k, v in net.named_parameters()}


def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


x_train = torch.sin(torch.arange(12, dtype=torch.float64) * 0.8).reshape(4, 3)
x_test = torch.cos(torch.arange(9, dtype=torch.float64) * 1.1).reshape(3, 3)


def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute="full"):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = [j.flatten(2) for j in jac1.values()]
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = [j.flatten(2) for j in jac2.values()]
    einsum_expr = {"full": "Naf,Mbf->NMab", "trace": "Naf,Maf->NM", "diagonal": "Naf,Maf->NMa"}[compute]
    result = torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
    return result.sum(0)


def empirical_ntk_ntk_vps(func, params, x1, x2, compute="full"):
    def get_ntk(x1, x2):
        def func_x1(params):
            return func(params, x1)

        def func_x2(params):
            return func(params, x2)

        output, vjp_fn = vjp(func_x1, params)

        def get_ntk_slice(vec):
            vjps = vjp_fn(vec)
            _, jvps = jvp(func_x2, (params,), vjps)
            return jvps

        basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device).view(output.numel(), -1)
        return vmap(get_ntk_slice)(basis)

    result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
    if compute == "full":
        return result
    if compute == "trace":
        return torch.einsum("NMKK->NM", result)
    if compute == "diagonal":
        return torch.einsum("NMKK->NMK", result)


full = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test)
implicit = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test)
print("ntk", full.shape, full[0])
print("ntk implicit", implicit.shape, implicit[1])
print("agree", torch.allclose(full, implicit, atol=1e-10))
print("trace", empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, "trace"))
print("diag implicit", empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test, "diagonal")[2])


# hessians: jacfwd(jacrev) against autograd.functional.hessian
def rosen(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


x0 = torch.tensor([-1.2, 1.0, 0.5, 0.8], dtype=torch.float64)
h_func = jacfwd(jacrev(rosen))(x0)
h_af = torch.autograd.functional.hessian(rosen, x0)
h_rev = jacrev(jacrev(rosen))(x0)
print("hessian", h_func)
print("hessian agree", torch.allclose(h_func, h_af), torch.allclose(h_rev, h_af), torch.allclose(hessian(rosen)(x0), h_af))
print("outer fwd", torch.allclose(torch.autograd.functional.hessian(rosen, x0, vectorize=True, outer_jacobian_strategy="forward-mode"), h_af))


def two_args(a, b):
    return (a.sin().sum() * b).sum() + (a * a).sum() * b.prod()


a, b = torch.tensor([0.3, -0.4], dtype=torch.float64), torch.tensor([1.5, 0.5, -1.0], dtype=torch.float64)
hf = jacfwd(jacrev(two_args, argnums=(0, 1)), argnums=(0, 1))(a, b)
ha = torch.autograd.functional.hessian(two_args, (a, b))
print("hessian tuple shapes", [[t.shape for t in row] for row in hf], [[t.shape for t in row] for row in ha])
print("hessian tuple agree", all(torch.allclose(x, y) for rx, ry in zip(hf, ha) for x, y in zip(rx, ry)))
print("hessian of params", {k: v["fc2.bias"].shape for k, v in hessian(lambda p: fnet_single(p, x_train[0]).pow(2).sum())(params).items()})
# per-example hessians
print("batched hessian", vmap(hessian(rosen))(torch.stack([x0, x0.flip(0), x0 * 0.5])).sum((1, 2)))


# --- second-order optimisation with torch.autograd.functional ----------------------
import torch
from torch.autograd.functional import hvp, vhp, hessian, jacobian, jvp, vjp

A = torch.tensor([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.5]], dtype=torch.float64)
b = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)


def loss(x):
    return 0.5 * x @ A @ x - b @ x + 0.1 * (x ** 4).sum()


def conjugate_gradient(x, g, iters=10, tol=1e-12):
    """Solves H p = -g with Hessian-vector products only."""
    p = torch.zeros_like(g)
    r = -g.clone()
    d = r.clone()
    rs = r @ r
    for _ in range(iters):
        _, hd = hvp(loss, x, d)
        alpha = rs / (d @ hd)
        p = p + alpha * d
        r = r - alpha * hd
        rs_new = r @ r
        if rs_new < tol:
            break
        d = r + (rs_new / rs) * d
        rs = rs_new
    return p


x = torch.tensor([0.5, 0.5, 0.5], dtype=torch.float64)
for step in range(4):
    g = torch.autograd.functional.jacobian(loss, x)
    x = x + conjugate_gradient(x, g)
    print("newton-cg", step, x, loss(x).item())
print("gradient at optimum", (jacobian(loss, x).abs().max() < 1e-6).item())

# a trust-region (Cauchy point) step: vhp equals hvp for a symmetric hessian
x = torch.tensor([2.0, -1.0, 1.0], dtype=torch.float64)
radius = 0.5
for step in range(3):
    g = jacobian(loss, x)
    f0, Hg = vhp(loss, x, g)
    _, Hg2 = hvp(loss, x, g)
    gHg = g @ Hg
    tau = 1.0 if gHg <= 0 else min(1.0, (g.norm() ** 3 / (radius * gHg)).item())
    p = -tau * radius / g.norm() * g
    predicted = -(g @ p + 0.5 * p @ hvp(loss, x, p)[1])
    actual = f0 - loss(x + p)
    rho = (actual / predicted).item()
    print("trust-region", step, round(f0.item(), 10), round(rho, 10), torch.allclose(Hg, Hg2))
    if rho > 0.25:
        x = x + p
    radius = radius * 2 if rho > 0.75 else radius / 4 if rho < 0.25 else radius

# output structure: tuple inputs, tuple vectors
def two(x, y):
    return (x.sin() * y[:2]).sum() + y.pow(3).sum() * x.sum()


xs = (torch.tensor([0.1, 0.2], dtype=torch.float64), torch.tensor([0.3, -0.4, 0.5], dtype=torch.float64))
vs = (torch.ones(2, dtype=torch.float64), torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64))
value, hv = hvp(two, xs, vs)
print("hvp tuple", value, type(hv).__name__, hv)
value, vh = vhp(two, xs, vs)
print("vhp tuple", vh)
out, hv = hvp(two, xs, vs, create_graph=True)
print("create_graph", hv[0].requires_grad, hv[0].grad_fn is not None)
print("no create_graph", hvp(two, xs, vs)[1][0].requires_grad)
h = hessian(two, xs)
print("hessian nesting", len(h), len(h[0]), h[0][1].shape, h[1][0].shape)

# strict catches an input the output does not depend on
def ignores_y(x, y):
    return (x ** 2).sum()


for fn, name in [(lambda: hvp(ignores_y, xs, vs, strict=True), "hvp"),
                 (lambda: vhp(ignores_y, xs, vs, strict=True), "vhp"),
                 (lambda: jacobian(ignores_y, xs, strict=True), "jacobian"),
                 (lambda: vjp(lambda x, y: x * 2, xs, torch.ones(2, dtype=torch.float64), strict=True), "vjp"),
                 (lambda: jvp(lambda x, y: x * 2, xs, vs, strict=True), "jvp"),
                 (lambda: hessian(ignores_y, xs, strict=True), "hessian")]:
    try:
        fn()
        print(name, "strict: no error")
    except RuntimeError as e:
        print(name, "strict:", e)
print("non-strict zeros", hvp(ignores_y, xs, vs)[1][1], jacobian(ignores_y, xs)[1])
for fn, name in [(lambda: jacobian(loss, x, strict=True, vectorize=True), "vectorize+strict"),
                 (lambda: jacobian(loss, x, strategy="forward-mode"), "forward needs vectorize"),
                 (lambda: jacobian(loss, x, strategy="sideways"), "bad strategy"),
                 (lambda: hessian(loss, x, outer_jacobian_strategy="forward-mode"), "outer fwd"),
                 (lambda: hvp(loss, x, torch.ones(2, dtype=torch.float64)), "bad v shape"),
                 (lambda: hvp(lambda t: t * 2, x, torch.ones(3, dtype=torch.float64)), "non-scalar"),
                 (lambda: vjp(lambda t: t * 2, x), "missing v"),
                 (lambda: jvp(lambda t: t.sum(), x), "jvp missing v")]:
    try:
        r = fn()
        print(name, "ok", r if isinstance(r, torch.Tensor) else type(r).__name__)
    except Exception as e:
        print(name, type(e).__name__, e)

# jacobian by forward mode (vectorized), tuple inputs and outputs
def many(x, y):
    return x.exp() * y[:2], torch.cat([x, y]).cumsum(0)


jf = jacobian(many, xs, vectorize=True, strategy="forward-mode")
jr = jacobian(many, xs)
print("jacobian nesting", len(jf), len(jf[0]), [[t.shape for t in row] for row in jf])
print("forward = reverse", all(torch.allclose(a, c) for ra, rc in zip(jf, jr) for a, c in zip(ra, rc)))
print("jacobian single out", jacobian(lambda t: t.tanh(), xs[1], vectorize=True, strategy="forward-mode"))
print("jacobian create_graph", jacobian(lambda t: t ** 3, xs[0].requires_grad_(), create_graph=True).requires_grad)
xs[0].requires_grad_(False)
out, jv = jvp(many, xs, vs)
print("jvp tuple", type(out).__name__, len(out), jv)
out, vj = vjp(many, xs, (torch.ones(2, dtype=torch.float64), torch.arange(5, dtype=torch.float64)))
print("vjp tuple", vj)
out, vj = vjp(lambda x: x.sum(), xs[0])
print("vjp scalar default v", vj)
out, jv = jvp(lambda x: x.sum() * 2, torch.tensor(3.0, dtype=torch.float64))
print("jvp scalar default v", out, jv)

# second order through the functional API (meta-learning style): create_graph then backward
th = torch.tensor([0.3, -0.2], dtype=torch.float64, requires_grad=True)
vv = torch.tensor([1.0, 2.0], dtype=torch.float64)
_, hv = hvp(lambda t: (t.sin() ** 2).sum() * t.prod(), th, vv, create_graph=True)
hv.sum().backward()
print("hvp create_graph backward", hv, th.grad)
th.grad = None
_, vh = vhp(lambda t: (t.exp() * t).sum(), th, vv, create_graph=True)
vh.pow(2).sum().backward()
print("vhp create_graph backward", vh, th.grad)
J = jacobian(lambda t: (t * t, t.sum()), th, create_graph=True)
print("jacobian tuple create_graph", [j.requires_grad for j in J])
H = hessian(lambda a, c: (a * c).sum() ** 2, (th, vv.requires_grad_()), create_graph=True)
print("hessian tuple create_graph", [[h.requires_grad for h in r] for r in H])
