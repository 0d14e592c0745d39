"""torch.func.grad_and_value with has_aux and argnums tuples over pytrees; vmap with
chunk_size, out_dims tuples, nested vmaps, None in_dims, kwargs; and the errors users
meet when they misuse them."""
import torch
from torch.func import grad, grad_and_value, vmap, jacrev, jacfwd, hessian, vjp, jvp

x = torch.linspace(-1.0, 1.0, 4, dtype=torch.float64)
w = torch.tensor([[0.5, -0.2, 0.1, 0.3], [0.0, 0.4, -0.6, 0.2]], dtype=torch.float64)
b = torch.tensor([0.1, -0.1], dtype=torch.float64)


def loss(w, b, x, scale=1.0):
    logits = w @ x + b
    value = scale * torch.logsumexp(logits, 0) - logits[0]
    return value, {"logits": logits, "prob": logits.softmax(0)}


(gw, gb), (value, aux) = grad_and_value(loss, argnums=(0, 1), has_aux=True)(w, b, x)
print("grad_and_value", gw, gb, value, aux["prob"])
g_params, aux = grad(lambda p, x: loss(p["w"], p["b"], x), has_aux=True)({"w": w, "b": b}, x)
print("pytree argnum", sorted(g_params), g_params["b"], aux["logits"])
print("negative argnum", grad(lambda a, c: (a * c).sum(), argnums=-1)(x, x * 2))
print("kwargs pass through", grad(lambda w, b, x, scale: loss(w, b, x, scale)[0], argnums=1)(w, b, x, scale=2.0))
print("nested grads", grad(grad(lambda t: t.sin()))(torch.tensor(0.3, dtype=torch.float64)))
g, (v, n) = grad_and_value(lambda t: (t ** 3, t.exp()), has_aux=True)(torch.tensor(2.0, dtype=torch.float64))
print("aux tensor", g, v, n)

# vmap: per-example losses with kwargs, None in_dims, out_dims tuples, chunks
xs = torch.sin(torch.arange(24, dtype=torch.float64)).reshape(6, 4)
per = vmap(grad_and_value(loss, argnums=(0, 1), has_aux=True), in_dims=(None, None, 0))(w, b, xs, scale=0.5)
(gws, gbs), (values, auxes) = per
print("per-example", gws.shape, gbs, values, auxes["prob"].shape)
chunked = vmap(grad(lambda w, x: loss(w, b, x)[0]), in_dims=(None, 0), chunk_size=4)(w, xs)
print("chunk_size equal", torch.allclose(chunked, gws * 0 + vmap(grad(lambda w, x: loss(w, b, x)[0]), in_dims=(None, 0))(w, xs)))
stats = vmap(lambda r: (r.mean(), r - r.mean(), r.max()), out_dims=(0, 1, 0))(xs)
print("out_dims tuple", [s.shape for s in stats], stats[1][:, 0])
print("out_dims None entry", vmap(lambda r: (r.sum(), w), out_dims=(0, None))(xs)[1].shape)
outer = vmap(vmap(lambda a, c: (a * c).sum(), in_dims=(0, None)), in_dims=(None, 0))(xs, xs[:3])
print("nested vmap", outer.shape, outer)
print("in_dims=1", vmap(torch.sum, in_dims=1)(xs))
print("in_dims dict", vmap(lambda d: d["a"] @ d["b"], in_dims=({"a": 0, "b": None},))({"a": xs, "b": x}))
print("kwargs unbatched", vmap(lambda r, power: r.abs() ** power)(xs[:2], power=2.0))
print("jacrev in vmap", vmap(jacrev(lambda r: r.tanh() * r.sum()))(xs[:2]).shape)
print("hessian in vmap", vmap(hessian(lambda r: (r ** 3).sum()))(xs[:2]).diagonal(dim1=1, dim2=2))
print("jacfwd chunked vmap", vmap(jacfwd(torch.sin), chunk_size=1)(xs[:3]).sum())


def attempt(label, fn):
    try:
        out = fn()
        print(label, "no error", out.shape if isinstance(out, torch.Tensor) else type(out).__name__)
    except Exception as e:
        print(label, type(e).__name__, str(e).splitlines()[0][:160])


attempt("batch sizes", lambda: vmap(torch.add)(xs, xs[:3]))
attempt("non-scalar grad", lambda: grad(lambda t: t * 2)(x))
attempt("non-tensor output", lambda: grad(lambda t: 3.0)(x))
attempt("has_aux not tuple", lambda: grad(lambda t: t.sum(), has_aux=True)(x))
attempt("argnums out of range", lambda: grad(lambda a: a.sum(), argnums=2)(x))
attempt("argnums duplicate", lambda: grad(lambda a, c: a.sum(), argnums=(0, 0))(x, x))
attempt("argnums float", lambda: grad(lambda a: a.sum(), argnums=0.5)(x))
attempt("integer input", lambda: grad(lambda a: a.sum())(torch.arange(3)))
attempt("in_dims too long", lambda: vmap(torch.sin, in_dims=(0, 0))(xs))
attempt("in_dims out of range", lambda: vmap(torch.sin, in_dims=3)(xs))
attempt("no batched inputs", lambda: vmap(torch.sin, in_dims=None)(xs))
attempt("out_dims too long", lambda: vmap(torch.sin, out_dims=(0, 1))(xs))
attempt("in_dims list", lambda: vmap(torch.sin, in_dims=[0])(xs))
attempt("zero inputs", lambda: vmap(lambda: torch.ones(1))())
attempt("non-tensor return", lambda: vmap(lambda r: "s")(xs))
attempt("chunk_size negative", lambda: vmap(torch.sin, chunk_size=-1)(xs))
attempt("jacrev chunk 0", lambda: jacrev(torch.sin, chunk_size=0)(x))
attempt("vjp non-tensor", lambda: vjp(torch.sin, 1.0))
attempt("jvp not tuple", lambda: jvp(torch.sin, x, (x,)))
attempt("jvp dtype", lambda: jvp(torch.sin, (x,), (x.float(),)))
attempt("grad complex", lambda: grad(lambda z: z.abs().sum())(torch.ones(2, dtype=torch.complex128)))
attempt("aux None", lambda: grad(lambda t: (t.sum(), None), has_aux=True)(x))
attempt("aux float", lambda: grad(lambda t: (t.sum(), {"n": 1.5}), has_aux=True)(x))
attempt("vmap item", lambda: vmap(lambda r: torch.tensor(r.sum().item()))(xs))
