"""Second-order optimisation with torch.autograd.functional: a Newton-CG and a
trust-region step with hvp/vhp, jacobians by forward mode, jvp/vjp with tuples, and
the strict / create_graph arguments as users meet them."""
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
