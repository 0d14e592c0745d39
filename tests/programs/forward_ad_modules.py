"""Forward-mode AD as the torch tutorial teaches it: dual numbers through a module's
parameters (functional_call), custom Functions with jvp and setup_context,
torch.func.jvp with has_aux, linearize, forward-mode jacobians, gradcheck of a jvp,
and the extending-torch.func tutorial (NumpySort: setup_context, jvp and vmap rules)."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.autograd.forward_ad as fwAD
from torch.func import functional_call, jvp, linearize, jacfwd, jacrev, vmap, grad, hessian

torch.manual_seed(0)


def det(*shape, k=1.0):
    n = 1
    for s in shape:
        n *= s
    return torch.sin(torch.arange(n, dtype=torch.float64) * k).reshape(*shape)


model = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3)).double()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(det(*p.shape, k=0.4 + i))
inp = det(2, 5, k=0.9)

# forward AD with modules: swap parameters for duals with functional_call
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.cos(torch.arange(p.numel(), dtype=torch.float64)).reshape(p.shape) for name, p in params.items()}
with fwAD.dual_level():
    dual_params = {}
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, inp)
    jvp_out = fwAD.unpack_dual(out).tangent
print("module jvp", jvp_out)

# the same with torch.func.jvp, and a check by finite differences
def f_params(ps):
    return functional_call(model, ps, (inp,))

primal_out, tangent_out = jvp(f_params, (params,), (tangents,))
print("func.jvp agrees", torch.allclose(tangent_out, jvp_out))
eps = 1e-6
with torch.no_grad():
    plus = f_params({k: v + eps * tangents[k] for k, v in params.items()})
    minus = f_params({k: v - eps * tangents[k] for k, v in params.items()})
print("finite differences", torch.allclose((plus - minus) / (2 * eps), jvp_out, atol=1e-7))

# tangents through the inputs of a module, and unpack_dual's fields
with fwAD.dual_level():
    x = fwAD.make_dual(inp, torch.ones_like(inp))
    y = model(x)
    unpacked = fwAD.unpack_dual(y)
    print("input jvp", unpacked.tangent, unpacked.primal.shape, type(unpacked).__name__)
    z = F.softplus(y).sum(dim=1)
    print("loss jvp", fwAD.unpack_dual(z).tangent)
    print("is dual", fwAD.unpack_dual(inp).tangent is None, fwAD.unpack_dual(x).tangent is not None)


# custom Function with setup_context and jvp
class ScaledExp(torch.autograd.Function):
    @staticmethod
    def forward(x, scale):
        return torch.exp(x) * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.scale = scale
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad_out):
        out, = ctx.saved_tensors
        return grad_out * out, None

    @staticmethod
    def jvp(ctx, x_t, scale_t):
        out, = ctx.saved_tensors
        return x_t * out


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return x * x

    @staticmethod
    def jvp(ctx, x_t):
        x, = ctx.saved_tensors
        return 2 * x * x_t

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("not used")


v = det(4, k=0.5)
t = torch.tensor([1.0, 0.0, -1.0, 2.0], dtype=torch.float64)
with fwAD.dual_level():
    d = fwAD.make_dual(v, t)
    out = ScaledExp.apply(d, 3.0)
    print("setup_context jvp", fwAD.unpack_dual(out).tangent)
    print("ctx jvp", fwAD.unpack_dual(Square.apply(d)).tangent)
    print("composed", fwAD.unpack_dual(Square.apply(ScaledExp.apply(d, 0.5)).sum()).tangent)
print("func.jvp of Function", jvp(lambda a: ScaledExp.apply(a, 2.0), (v,), (t,))[1])
print("backward through it", torch.autograd.grad(ScaledExp.apply(v.requires_grad_(), 2.0).sum(), v)[0])
v.requires_grad_(False)


# torch.func.jvp with has_aux, linearize, jacfwd
def f_aux(x):
    y = x.sin() * x
    return y, {"norm": y.norm(), "mean": y.mean()}


out, tangent, aux = jvp(f_aux, (v,), (t,), has_aux=True)
print("jvp has_aux", tangent, sorted(aux), aux["norm"])
out, jvp_fn = linearize(lambda x: (x.sin() * x).cumsum(0), v)
print("linearize", out, jvp_fn(t), jvp_fn(torch.ones_like(t)))
print("linearize = jvp", torch.allclose(jvp_fn(t), jvp(lambda x: (x.sin() * x).cumsum(0), (v,), (t,))[1]))
print("jacfwd module", jacfwd(lambda x: model(x))(inp[0]))
print("jacfwd has_aux", jacfwd(f_aux, has_aux=True)(v)[1]["mean"])
print("batched jvp", vmap(lambda tt: jvp(model, (inp[0],), (tt,))[1])(torch.eye(5, dtype=torch.float64)).T)

# nested levels, and the errors users hit
with fwAD.dual_level():
    d = fwAD.make_dual(v, t)
    try:
        with fwAD.dual_level():
            pass
    except RuntimeError as e:
        print("nested level:", e)
    try:
        fwAD.make_dual(v, t.float())
    except Exception as e:
        print("dtype:", type(e).__name__, e)
print("tangent dropped", fwAD.unpack_dual(d).tangent)
for bad in [lambda: jvp(lambda x: x, (v,), t), lambda: jvp(lambda x: x, (v,), (t, t)),
            lambda: jvp(lambda x: x, (v,), (t[:2],)), lambda: jvp(lambda x: 3, (v,), (t,))]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)

# checking a custom jvp as the tutorial does
xg = det(3, k=0.7).requires_grad_()
print("gradcheck forward", torch.autograd.gradcheck(lambda a: ScaledExp.apply(a, 2.0), (xg,), check_forward_ad=True,
                                                    check_backward_ad=False, check_undefined_grad=False,
                                                    check_batched_grad=False))
print("gradcheck both", torch.autograd.gradcheck(lambda a: ScaledExp.apply(a, 2.0), (xg,), check_forward_ad=True))
print("gradgradcheck fwd-over-rev", torch.autograd.gradgradcheck(lambda a: a.sin() * a, (xg,), check_fwd_over_rev=True))


class WrongJvp(Square):
    @staticmethod
    def jvp(ctx, x_t):
        x, = ctx.saved_tensors
        return x * x_t


try:
    torch.autograd.gradcheck(WrongJvp.apply, (xg,), check_forward_ad=True, check_backward_ad=False)
except RuntimeError as e:
    print("caught:", str(e).splitlines()[0])


# --- extending torch.func with autograd.Function (the tutorial's NumpySort) ----------
def to_numpy(tensor):
    return tensor.cpu().numpy()

class NumpySort(torch.autograd.Function):
    @staticmethod
    def forward(x, dim):
        device = x.device
        x = to_numpy(x)
        ind = np.argsort(x, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(x, ind, axis=dim)
        return (torch.tensor(result, device=device), torch.tensor(ind, device=device), torch.tensor(ind_inv, device=device))

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        ctx.save_for_backward(ind, ind_inv)
        ctx.save_for_forward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

    @staticmethod
    def jvp(ctx, x_tangent, _):
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(x_tangent, ind, ind_inv, ctx.dim), None, None

    @staticmethod
    def vmap(info, in_dims, x, dim):
        x_bdim, _ = in_dims
        logical_dim = dim if dim >= 0 else dim + x.dim() - 1
        dim = logical_dim + 1
        x = x.movedim(x_bdim, 0)
        result = NumpySort.apply(x, dim)
        return NumpySort.apply(x, dim), (0, 0, 0)


class NumpyTake(torch.autograd.Function):
    @staticmethod
    def forward(x, ind, ind_inv, dim):
        device = x.device
        x = to_numpy(x)
        ind = to_numpy(ind)
        return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.save_for_forward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
        return result, None, None, None

    @staticmethod
    def jvp(ctx, x_tangent, ind_tangent, ind_inv_tangent, _):
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(x_tangent, ind, ind_inv, ctx.dim)

    @staticmethod
    def vmap(info, in_dims, x, ind, ind_inv, dim):
        x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims
        logical_dim = dim if dim >= 0 else dim + x.dim() - 1
        dim = logical_dim + 1
        def maybe_expand_bdim_at_front(x, x_bdim):
            if x_bdim is None:
                return x.expand(info.batch_size, *x.shape)
            return x.movedim(x_bdim, 0)
        x = maybe_expand_bdim_at_front(x, x_bdim)
        ind = maybe_expand_bdim_at_front(ind, ind_bdim)
        ind_inv = maybe_expand_bdim_at_front(ind_inv, ind_inv_bdim)
        return NumpyTake.apply(x, ind, ind_inv, dim), 0

def numpy_sort(x, dim=-1):
    result, _, _ = NumpySort.apply(x, dim)
    return result

x = torch.tensor([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]], dtype=torch.float64, requires_grad=True)
print(numpy_sort(x))
print(grad(lambda x: numpy_sort(x).mul(torch.arange(3.0, dtype=torch.float64)).sum())(x))
print(vmap(numpy_sort)(x))
print(jacrev(numpy_sort)(x[0]))
print(jacfwd(numpy_sort)(x[0]))
print(vmap(jacrev(numpy_sort))(x))
print(jvp(numpy_sort, (x[0],), (torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64),)))
print(hessian(lambda x: numpy_sort(x).pow(3).sum())(x[1]))
print(torch.autograd.gradcheck(numpy_sort, (x,), check_forward_ad=True))

class MyExp(torch.autograd.Function):
    generate_vmap_rule = True
    @staticmethod
    def forward(x):
        return x.exp()
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)
    @staticmethod
    def backward(ctx, g):
        r, = ctx.saved_tensors
        return g * r
    @staticmethod
    def jvp(ctx, t):
        r, = ctx.saved_tensors
        return t * r
print(vmap(jacfwd(MyExp.apply))(x.detach()))
print(jacrev(jacfwd(lambda a: MyExp.apply(a).sum()))(x.detach()[0]))
print(vmap(grad(lambda a: MyExp.apply(a).sum()))(x.detach()))
class NoVmap(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2
    @staticmethod
    def setup_context(ctx, inputs, output):
        pass
    @staticmethod
    def backward(ctx, g):
        return g * 2
try:
    vmap(NoVmap.apply)(x.detach())
except RuntimeError as e:
    print("no vmap:", e)
class OldStyle(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 2
try:
    vmap(OldStyle.apply)(x.detach())
except RuntimeError as e:
    print("old style:", str(e)[:200])
