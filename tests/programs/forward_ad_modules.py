"""Forward-mode AD as the torch tutorial teaches it: dual numbers through a module's
parameters (functional_call), custom Functions with jvp and setup_context,
torch.func.jvp with has_aux, linearize, and forward-mode jacobians."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.autograd.forward_ad as fwAD
from torch.func import functional_call, jvp, linearize, jacfwd, vmap

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
