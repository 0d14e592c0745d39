"""Custom autograd Functions using the less common ctx features: mark_dirty for an
in-place op, set_materialize_grads(False) with outputs left unused, several outputs
with mark_non_differentiable, once_differentiable's double-backward error, and
gradcheck/gradgradcheck on them, including the report of a wrong backward."""
import torch
from torch.autograd import Function, gradcheck, gradgradcheck
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


class ScaleInPlace(Function):
    """x.mul_(s) that autograd knows about."""

    @staticmethod
    def forward(ctx, x, s):
        x.mul_(s)
        ctx.mark_dirty(x)
        ctx.s = s
        return x

    @staticmethod
    def backward(ctx, g):
        return g * ctx.s, None


class SplitHalves(Function):
    """Returns (first half * 2, second half ** 2); a branch may go unused."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        n = x.shape[0] // 2
        ctx.save_for_backward(x)
        ctx.n = n
        return x[:n] * 2, x[n:] ** 2

    @staticmethod
    def backward(ctx, g_lo, g_hi):
        (x,) = ctx.saved_tensors
        print("  SplitHalves.backward got", "None" if g_lo is None else "g_lo",
              "None" if g_hi is None else "g_hi")
        out = torch.zeros_like(x)
        if g_lo is not None:
            out[:ctx.n] = g_lo * 2
        if g_hi is not None:
            out[ctx.n:] = g_hi * 2 * x[ctx.n:]
        return out


class ArgTopK(Function):
    @staticmethod
    def forward(ctx, x, k):
        vals, idx = x.topk(k)
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        ctx.shape = x.shape
        return vals, idx

    @staticmethod
    @once_differentiable
    def backward(ctx, g, g_idx):
        (idx,) = ctx.saved_tensors
        print("  ArgTopK g_idx is", "None" if g_idx is None else "zeros %s" % (g_idx.abs().sum().item(),))
        return torch.zeros(ctx.shape, dtype=g.dtype).scatter(0, idx, g), None


class GoodCube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class BadCube(GoodCube):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x  # should be 3 * x ** 2


print("== mark_dirty")
a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
b = a.clone()
v0 = b._version
out = ScaleInPlace.apply(b, 2.5)
print("same object", out is b, "version bumped", b._version > v0)
print("grad_fn", type(out.grad_fn).__name__)
(out * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print("a.grad", a.grad)
try:
    ScaleInPlace.apply(torch.ones(2, requires_grad=True), 3.0)
except RuntimeError as e:
    print("leaf:", str(e).split("\n")[0])

print("== set_materialize_grads(False)")
x = torch.linspace(-1, 1, 6, requires_grad=True)
lo, hi = SplitHalves.apply(x)
lo.sum().backward()
print("x.grad", x.grad)
x.grad = None
lo, hi = SplitHalves.apply(x)
(lo.sum() + hi.sum()).backward()
print("x.grad", x.grad)

print("== mark_non_differentiable")
w = torch.tensor([0.3, -1.2, 2.2, 0.7, 1.9], dtype=torch.float64, requires_grad=True)
vals, idx = ArgTopK.apply(w * 2, 3)
print("vals", vals, "idx", idx, "idx.requires_grad", idx.requires_grad)
(vals ** 2).sum().backward(create_graph=True)
print("w.grad", w.grad)
try:
    w.grad.sum().backward()
except RuntimeError as e:
    print("double backward:", e)

print("== gradcheck")
xc = torch.randn(4, dtype=torch.float64, requires_grad=True)
print("GoodCube gradcheck", gradcheck(GoodCube.apply, (xc,)))
print("GoodCube gradgradcheck", gradgradcheck(GoodCube.apply, (xc,)))
print("BadCube quiet", gradcheck(BadCube.apply, (xc,), raise_exception=False))
try:
    gradcheck(BadCube.apply, (xc,))
except Exception as e:
    print(type(e).__name__, str(e).split("\n")[0])
xs = torch.randn(3, dtype=torch.float64, requires_grad=True)
print("SplitHalves gradcheck", gradcheck(SplitHalves.apply, (torch.randn(4, dtype=torch.float64, requires_grad=True),)))
print("ArgTopK gradcheck", gradcheck(lambda t: ArgTopK.apply(t, 2)[0], (xs,)))
try:
    gradgradcheck(lambda t: ArgTopK.apply(t, 2)[0], (xs,))
except RuntimeError as e:
    print("gradgradcheck once_differentiable:", str(e).split("\n")[0])
