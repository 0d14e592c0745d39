"""torch.func transforms as the tutorials use them: grad, vmap, jacrev, jacfwd, hessian,
per-sample gradients with functional_call, model ensembles, linearize."""
import torch
from torch.func import grad, grad_and_value, vmap, jacrev, jacfwd, hessian, jvp, vjp, functional_call

torch.manual_seed(0)
x = torch.sin(torch.arange(5, dtype=torch.float64) * 1.3)
A = torch.cos(torch.arange(20, dtype=torch.float64) * 0.7).reshape(4, 5)

def f(x):
    return torch.tanh(A @ x).pow(2).sum()

print("grad", grad(f)(x))
g, val = grad_and_value(f)(x)
print("grad_and_value", g, val)
print("jacrev", jacrev(lambda x: torch.tanh(A @ x))(x))
print("jacfwd", jacfwd(lambda x: torch.tanh(A @ x))(x))
print("hessian", hessian(f)(x))
print("jvp", jvp(f, (x,), (torch.ones(5, dtype=torch.float64),)))
out, fn = vjp(lambda x: x.sin() * 2, x)
print("vjp", out, fn(torch.ones(5, dtype=torch.float64)))

def g2(x, y):
    return (x * y.sin()).sum(), x.detach()

gr, aux = grad(g2, argnums=(0, 1), has_aux=True)(x, x + 1)
print("argnums", gr, aux)

batch = torch.sin(torch.arange(15, dtype=torch.float64) * 2.1).reshape(3, 5)
print("vmap", vmap(f)(batch))
print("vmap in_dims", vmap(lambda a, b: a * b, in_dims=(0, None))(batch, x))
print("vmap out_dims", vmap(lambda a: a.cos(), out_dims=1)(batch).shape)
print("vmap nested", vmap(vmap(lambda a: a.exp()))(batch.reshape(3, 5, 1)).shape)
print("per-sample", vmap(grad(f))(batch))
print("jacfwd(jacrev)", jacfwd(jacrev(f))(x))
print("vmap jvp", vmap(lambda p, t: jvp(torch.sin, (p,), (t,))[1])(batch, batch * 0 + 1))

model = torch.nn.Linear(5, 2).double()
with torch.no_grad():
    model.weight.copy_(torch.cos(torch.arange(10.)).reshape(2, 5))
    model.bias.fill_(0.3)
params = {k: v.detach() for k, v in model.named_parameters()}
def loss(p, xb, yb):
    out = functional_call(model, p, (xb.unsqueeze(0),))
    return ((out - yb) ** 2).mean()
yb = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(3, 2)
ps = vmap(grad(loss), in_dims=(None, 0, 0))(params, batch, yb)
for k in sorted(ps):
    print("per-sample", k, ps[k].shape, ps[k].sum())
print("jacrev argnums", jacrev(lambda a, b: a * b.sum(), argnums=1)(x, x))
print("vmap chunk", vmap(torch.sin, chunk_size=2)(batch))

from torch.func import stack_module_state, linearize, replace_all_batch_norm_modules_
models = [torch.nn.Linear(5, 2).double() for _ in range(3)]
for i, m in enumerate(models):
    with torch.no_grad():
        m.weight.copy_(torch.sin(torch.arange(10.) + i).reshape(2, 5)); m.bias.fill_(i)
sp, sb = stack_module_state(models)
def ens(p, b, xb):
    return functional_call(models[0], (p, b), (xb,))
print("ensemble", vmap(ens, in_dims=(0, 0, None))(sp, sb, batch))
out, fn = linearize(lambda t: t.sin() * A.sum(), x)
print("linearize", out, fn(torch.ones(5, dtype=torch.float64)))
net = replace_all_batch_norm_modules_(torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.BatchNorm1d(4))).double()
print("bn", net[1].running_mean, net[1].track_running_stats)
print("functional_call grad", grad(lambda p: functional_call(model, p, (batch,)).sum())(params))
print("strict ok", functional_call(model, params, batch, strict=True).shape)
try:
    functional_call(model, {"weight": params["weight"]}, batch, strict=True)
except RuntimeError as e:
    print("strict error", e)
print(model.weight.sum(), type(model.weight).__name__)
