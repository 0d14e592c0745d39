"""torch.func with its arguments: argnums, has_aux, in_dims/out_dims pytrees, chunk_size,
randomness, and the errors users meet."""
import torch
from torch.func import grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap

torch.manual_seed(0)
W = torch.randn(3, 4, dtype=torch.float64)
xb = torch.randn(5, 4, dtype=torch.float64)
x = xb[0]
y = torch.randn(3, dtype=torch.float64)

def show(name, value):
    if isinstance(value, torch.Tensor):
        print(name, tuple(value.shape), value.dtype, [round(v, 6) for v in value.flatten().tolist()[:8]])
    elif isinstance(value, dict):
        print(name, "dict", sorted(value))
        for k in sorted(value):
            show(f"{name}[{k!r}]", value[k])
    elif isinstance(value, (tuple, list)):
        print(name, type(value).__name__, len(value))
        for i, v in enumerate(value):
            show(f"{name}[{i}]", v)
    else:
        print(name, repr(value))

def attempt(name, fn):
    try:
        show(name, fn())
    except Exception as e:
        print(name, "raised", type(e).__name__, str(e).split("\n")[0][:160])

def loss(W, x, y):
    return ((torch.tanh(W @ x) - y) ** 2).sum()

def loss_aux(W, x, y):
    r = torch.tanh(W @ x) - y
    return (r ** 2).sum(), {"residual": r, "norm": r.norm()}

attempt("grad argnums=0", lambda: grad(loss)(W, x, y))
attempt("grad argnums=1", lambda: grad(loss, argnums=1)(W, x, y))
attempt("grad argnums=(0,2)", lambda: grad(loss, argnums=(0, 2))(W, x, y))
attempt("grad argnums=-1", lambda: grad(loss, argnums=-1)(W, x, y))
attempt("grad has_aux", lambda: grad(loss_aux, has_aux=True)(W, x, y))
attempt("grad_and_value has_aux", lambda: grad_and_value(loss_aux, argnums=(1,), has_aux=True)(W, x, y))
attempt("grad bad argnums", lambda: grad(loss, argnums=3)(W, x, y))
attempt("grad dup argnums", lambda: grad(loss, argnums=(0, 0))(W, x, y))
attempt("grad nonscalar", lambda: grad(lambda x: x * 2)(x))
attempt("grad int input", lambda: grad(lambda x: (x * 2).sum())(torch.tensor([1, 2])))
attempt("grad aux not tuple", lambda: grad(lambda x: x.sum(), has_aux=True)(x))
attempt("grad dict input", lambda: grad(lambda p: (p["a"] * p["b"]).sum())({"a": x, "b": x * 2}))
attempt("vjp has_aux", lambda: (lambda o, fn, aux: (o, fn(torch.ones_like(o)), aux))(*vjp(lambda x: (torch.sin(x), x.sum()), x, has_aux=True)))
attempt("jvp has_aux", lambda: jvp(lambda x: (torch.sin(x), x.cos()), (x,), (torch.ones_like(x),), has_aux=True))
attempt("jvp tangent mismatch", lambda: jvp(torch.sin, (x,), (torch.ones(3, dtype=torch.float64),)))
attempt("jvp not tuple", lambda: jvp(torch.sin, x, torch.ones_like(x)))
attempt("jacrev argnums", lambda: jacrev(loss, argnums=(1, 2))(W, x, y))
attempt("jacrev chunk", lambda: jacrev(lambda x: torch.tanh(W @ x), chunk_size=2)(x))
attempt("jacrev chunk 0", lambda: jacrev(lambda x: torch.tanh(W @ x), chunk_size=0)(x))
attempt("jacrev has_aux", lambda: jacrev(lambda x: (torch.tanh(W @ x), x.sum()), has_aux=True)(x))
attempt("jacfwd argnums", lambda: jacfwd(loss, argnums=1)(W, x, y))
attempt("jacfwd has_aux", lambda: jacfwd(lambda x: (torch.tanh(W @ x), x.sum()), has_aux=True)(x))
attempt("jacfwd randomness", lambda: jacfwd(lambda x: x * 2, randomness="same")(x))
attempt("hessian argnums", lambda: hessian(loss, argnums=1)(W, x, y))
attempt("vmap in_dims", lambda: vmap(loss, in_dims=(None, 0, None))(W, xb, y))
attempt("vmap grad", lambda: vmap(grad(loss), in_dims=(None, 0, None))(W, xb, y))
attempt("vmap out_dims=1", lambda: vmap(lambda x: W @ x, out_dims=1)(xb))
attempt("vmap out_dims tuple", lambda: vmap(lambda x: (x.sum(), x * 2), out_dims=(0, 1))(xb))
attempt("vmap out_dims None", lambda: vmap(lambda x: (x.sum(), y), out_dims=(0, None))(xb))
attempt("vmap in_dims dict", lambda: vmap(lambda d: d["a"] + d["b"], in_dims=({"a": 0, "b": None},))({"a": xb, "b": x}))
attempt("vmap in_dims 1", lambda: vmap(lambda c: c.sum(), in_dims=1)(xb))
attempt("vmap chunk", lambda: vmap(lambda x: torch.tanh(W @ x), chunk_size=2)(xb))
attempt("vmap nested", lambda: vmap(vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(x, xb))
attempt("vmap size mismatch", lambda: vmap(lambda a, b: a + b)(xb, torch.ones(4, 4, dtype=torch.float64)))
attempt("vmap in_dims len", lambda: vmap(loss, in_dims=(None, 0))(W, xb, y))
attempt("vmap bad in_dim", lambda: vmap(lambda a: a, in_dims=2)(xb))
attempt("vmap no batched", lambda: vmap(lambda a: a, in_dims=None)(xb))
attempt("vmap returns int", lambda: vmap(lambda a: 3)(xb))
attempt("vmap randomness error", lambda: vmap(lambda a: a + torch.rand(4))(xb))
torch.manual_seed(1)
attempt("vmap randomness same", lambda: vmap(lambda a: torch.rand(2) * 0 + a.sum(), randomness="same")(xb))
attempt("vmap item", lambda: vmap(lambda a: a.sum().item())(xb))
attempt("vmap bad randomness", lambda: vmap(lambda a: a, randomness="maybe")(xb))
