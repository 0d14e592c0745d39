"""torch.autograd.functional with every argument: strict, create_graph, vectorize,
strategy, outer_jacobian_strategy; tuple inputs/outputs; the error messages."""
import torch
from torch.autograd.functional import jacobian, hessian, vjp, jvp, vhp, hvp

torch.manual_seed(0)
A = torch.randn(3, 3, dtype=torch.float64)
x = torch.randn(3, dtype=torch.float64)
y = torch.randn(2, dtype=torch.float64)

def show(name, value, fn_names=True):
    if isinstance(value, torch.Tensor):
        print(name, tuple(value.shape), value.dtype, [round(v, 6) for v in value.flatten().tolist()],
              value.requires_grad, type(value.grad_fn).__name__ if value.grad_fn and fn_names else None)
    elif isinstance(value, (tuple, list)):
        print(name, type(value).__name__, len(value))
        for i, v in enumerate(value):
            show(f"{name}[{i}]", v, fn_names)
    else:
        print(name, value)

def attempt(name, fn, fn_names=True):
    try:
        show(name, fn(), fn_names)
    except Exception as e:
        print(name, "raised", type(e).__name__, str(e).split("\n")[0][:150])

f1 = lambda x: torch.tanh(A @ x)
f2 = lambda x, y: (x.sum() * y, torch.cat([x, y]).exp())
s1 = lambda x: (torch.tanh(A @ x) ** 2).sum()
s2 = lambda x, y: (x ** 2).sum() * y.prod() + (x[:2] * y).sum()
const = lambda x: torch.ones(3, dtype=torch.float64)
half = lambda x, y: x * 2

for vec in (False, True):
    attempt(f"jac f1 vec={vec}", lambda: jacobian(f1, x, vectorize=vec))
    attempt(f"jac f2 vec={vec}", lambda: jacobian(f2, (x, y), vectorize=vec))
    attempt(f"jac half strict vec={vec}", lambda: jacobian(half, (x, y), strict=True, vectorize=vec))
    attempt(f"jac half nonstrict vec={vec}", lambda: jacobian(half, (x, y), vectorize=vec))
    attempt(f"jac const vec={vec}", lambda: jacobian(const, x, vectorize=vec))
    attempt(f"jac const strict vec={vec}", lambda: jacobian(const, x, strict=True, vectorize=vec))
    attempt(f"hes s1 vec={vec}", lambda: hessian(s1, x, vectorize=vec))
    attempt(f"hes s2 vec={vec}", lambda: hessian(s2, (x, y), vectorize=vec))
    attempt(f"hes s2 cg vec={vec}", lambda: hessian(s2, (x, y), create_graph=True, vectorize=vec))
attempt("jac fwd", lambda: jacobian(f2, (x, y), vectorize=True, strategy="forward-mode"))
attempt("jac fwd novec", lambda: jacobian(f1, x, strategy="forward-mode"))
attempt("jac bad strategy", lambda: jacobian(f1, x, strategy="sideways"))
attempt("jac fwd strict", lambda: jacobian(f1, x, vectorize=True, strategy="forward-mode", strict=True))
attempt("hes fwd outer", lambda: hessian(s2, (x, y), vectorize=True, outer_jacobian_strategy="forward-mode"), False)  # torch leaks a ReshapeAliasBackward0 graph here
attempt("hes fwd outer novec", lambda: hessian(s2, (x, y), outer_jacobian_strategy="forward-mode"))
attempt("hes non-scalar", lambda: hessian(f1, x))
attempt("jac cg", lambda: jacobian(f1, x, create_graph=True))
v3 = torch.ones(3, dtype=torch.float64)
attempt("vjp f1", lambda: vjp(f1, x, v3))
attempt("vjp f1 no v", lambda: vjp(f1, x))
attempt("vjp s1 no v", lambda: vjp(s1, x))
attempt("vjp f2", lambda: vjp(f2, (x, y), (torch.ones(2, dtype=torch.float64), torch.ones(5, dtype=torch.float64))))
attempt("vjp bad v shape", lambda: vjp(f1, x, torch.ones(4, dtype=torch.float64)))
attempt("vjp strict const", lambda: vjp(const, x, v3, strict=True))
attempt("vjp cg", lambda: vjp(f1, x, v3, create_graph=True))
attempt("jvp f1", lambda: jvp(f1, x, v3))
attempt("jvp f1 no v", lambda: jvp(f1, x))
attempt("jvp scalar in", lambda: jvp(lambda a: a * 3, torch.tensor(2., dtype=torch.float64)))
attempt("jvp f2", lambda: jvp(f2, (x, y), (v3, torch.ones(2, dtype=torch.float64))))
attempt("jvp strict half", lambda: jvp(half, (x, y), (v3, torch.ones(2, dtype=torch.float64)), strict=True))
attempt("jvp cg", lambda: jvp(f1, x, v3, create_graph=True)[0])
attempt("jvp cg tangent", lambda: jvp(f1, x, v3, create_graph=True)[1], False)  # torch: TanhBackwardBackward0
attempt("vhp s1", lambda: vhp(s1, x, v3))
attempt("hvp s1", lambda: hvp(s1, x, v3))
attempt("hvp s2", lambda: hvp(s2, (x, y), (v3, torch.ones(2, dtype=torch.float64))))
attempt("vhp s2 cg", lambda: vhp(s2, (x, y), (v3, torch.ones(2, dtype=torch.float64)), create_graph=True))
attempt("hvp strict lin", lambda: hvp(lambda x: x.sum(), x, v3, strict=True))
attempt("hvp lin", lambda: hvp(lambda x: x.sum(), x, v3))
attempt("hvp no v", lambda: hvp(s1, x))
attempt("hvp nonscalar", lambda: hvp(f1, x, v3))
attempt("vhp tuple out", lambda: vhp(lambda x: (x.sum(),), x, v3))
attempt("jac nontensor out", lambda: jacobian(lambda x: 3.0, x))
attempt("jac nontensor in", lambda: jacobian(f1, [1.0, 2.0]))
attempt("jac list in", lambda: jacobian(f2, [x, y]))
attempt("jac int in", lambda: jacobian(lambda a: a * 2, torch.tensor([1, 2])))
attempt("jac f32", lambda: jacobian(lambda a: a.sin(), torch.ones(2)))
attempt("jac complex", lambda: jacobian(lambda a: a * a, torch.ones(2, dtype=torch.complex128)))
attempt("hes under no_grad", lambda: (torch.set_grad_enabled(False), hessian(s1, x), torch.set_grad_enabled(True))[1])
