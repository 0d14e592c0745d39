"""forward-mode AD as the docs show it: dual numbers, custom Function jvp, views."""
import torch
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)
primal = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3)
tangent = torch.arange(6, dtype=torch.float64).reshape(2, 3) / 10

def fn(x, y):
    return x ** 2 + y.exp() * x.sin()

with fwAD.dual_level():
    dual = fwAD.make_dual(primal, tangent)
    out = fn(dual, primal.T.contiguous().T)
    p, t = fwAD.unpack_dual(out)
    print("primal", p)
    print("tangent", t)
    print("unpacked names", fwAD.unpack_dual(out)._fields)
    v = dual[0]
    print("view tangent", fwAD.unpack_dual(v).tangent)
    w = dual.clone()
    w.mul_(2)
    print("inplace tangent", fwAD.unpack_dual(w).tangent)
    s = dual.sum(dim=1, keepdim=True)
    print("sum tangent", fwAD.unpack_dual(s).tangent)
    m = dual @ dual.T
    print("matmul tangent", fwAD.unpack_dual(m).tangent)
    sm = torch.softmax(dual, dim=-1)
    print("softmax tangent", fwAD.unpack_dual(sm).tangent)
    print("no tangent", fwAD.unpack_dual(primal).tangent)

class MySin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x.cos()

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return t * x.cos()

with fwAD.dual_level():
    d = fwAD.make_dual(primal, tangent)
    out = MySin.apply(d)
    print("custom jvp", fwAD.unpack_dual(out).tangent)

# forward-over-reverse hvp
x = primal.clone().requires_grad_()
with fwAD.dual_level():
    xd = fwAD.make_dual(x, tangent)
    y = (xd.tanh() ** 2).sum()
    g, = torch.autograd.grad(y, xd, create_graph=True)
    print("hvp fwd-over-rev", fwAD.unpack_dual(g).tangent)

try:
    fwAD.make_dual(primal, tangent)
except RuntimeError as e:
    print("error:", str(e)[:60])
with fwAD.dual_level():
    try:
        fwAD.make_dual(primal, tangent[:1])
    except RuntimeError as e:
        print("shape error:", str(e)[:50])
