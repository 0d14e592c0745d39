"""Forward-mode AD through everyday layers: directional derivatives of an LSTM, a GRU
cell, conv1d + batch_norm + layer_norm, multi-head attention and losses with dual
numbers; in-place ops and views of duals; a custom Function with jvp and
save_for_forward; the jvp of a whole training loss against a finite difference; and
the errors people meet."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


def show(name, t, n=4):
    print(name, tuple(t.shape), [round(v, 6) for v in t.flatten()[:n].tolist()])


lstm = nn.LSTM(3, 5, num_layers=1, batch_first=True)
gru = nn.GRUCell(3, 4)
conv = nn.Conv1d(3, 4, 3, padding=1)
bn = nn.BatchNorm1d(4)
ln = nn.LayerNorm(4)
attn = nn.MultiheadAttention(4, 2, batch_first=True)
x = torch.randn(2, 6, 3)
tx = torch.randn(2, 6, 3)

with fwAD.dual_level():
    dx = fwAD.make_dual(x, tx)
    out, (h, c) = lstm(dx)
    show("lstm out tangent", fwAD.unpack_dual(out).tangent)
    show("lstm h tangent", fwAD.unpack_dual(h).tangent)
    hg = gru(dx[:, 0])
    show("gru tangent", fwAD.unpack_dual(hg).tangent)
    y = conv(dx.transpose(1, 2))
    y = bn(y)
    show("conv+bn tangent", fwAD.unpack_dual(y).tangent)
    z = ln(y.transpose(1, 2))
    a, w = attn(z, z, z)
    show("attention tangent", fwAD.unpack_dual(a).tangent)
    show("attn weights tangent", fwAD.unpack_dual(w).tangent)
    target = torch.tensor([1, 0])
    loss = F.cross_entropy(a.mean(1)[:, :3], target) + F.smooth_l1_loss(z, torch.zeros_like(z))
    print("loss and its directional derivative", round(fwAD.unpack_dual(loss).primal.item(), 8),
          round(fwAD.unpack_dual(loss).tangent.item(), 8))

# finite difference check of that directional derivative (double precision)
def whole(inp):
    out, _ = lstm(inp)
    y = bn(conv(inp.transpose(1, 2)))
    z = ln(y.transpose(1, 2))
    a, _ = attn(z, z, z)
    return F.cross_entropy(a.mean(1)[:, :3], torch.tensor([1, 0])) + F.smooth_l1_loss(z, torch.zeros_like(z))

eps = 1e-6
fd = (whole(x + eps * tx) - whole(x - eps * tx)) / (2 * eps)
print("finite difference", round(fd.item(), 5))
print("running stats moved", [round(v, 6) for v in bn.running_mean.tolist()])

# in-place ops and views on duals
with fwAD.dual_level():
    base = fwAD.make_dual(torch.zeros(2, 3), torch.zeros(2, 3))
    row = base[1]
    row.add_(fwAD.make_dual(torch.ones(3), torch.arange(3.0)))
    base.mul_(2)
    p, t = fwAD.unpack_dual(base)
    print("in-place through a view", p.tolist(), t.tolist())
    print("view tangent is a view", fwAD.unpack_dual(base[1]).tangent.tolist())
    plain = torch.ones(2, 3)
    plain.copy_(base)
    print("copy_ into a plain tensor carries the tangent", fwAD.unpack_dual(plain).tangent is not None)
    v = fwAD.make_dual(torch.tensor([1.0, 4.0]), torch.tensor([1.0, 1.0]))
    v.sqrt_().exp_()
    print("sqrt_ exp_", [round(q, 6) for q in fwAD.unpack_dual(v).tangent.tolist()])


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * t


with fwAD.dual_level():
    d = fwAD.make_dual(torch.tensor([1.0, 2.0, -1.0]), torch.tensor([1.0, 0.5, 2.0]))
    e = Cube.apply(d)
    print("custom jvp", fwAD.unpack_dual(e).tangent.tolist())
    unpacked = fwAD.unpack_dual(e)
    print("namedtuple", type(unpacked).__name__, unpacked._fields)
    print("no tangent", fwAD.unpack_dual(torch.ones(2)).tangent)

# reverse-over-forward: differentiate the tangent
w = torch.tensor([0.3, -0.2], requires_grad=True)
with fwAD.dual_level():
    d = fwAD.make_dual(w, torch.tensor([1.0, 0.0]))
    o = (torch.sin(d) * d).sum()
    tang = fwAD.unpack_dual(o).tangent
    g, = torch.autograd.grad(tang, w)
    print("grad of tangent", [round(q, 8) for q in g.tolist()])

# the errors
for name, fn in [
    ("make_dual outside a level", lambda: fwAD.make_dual(torch.ones(2), torch.ones(2))),
    ("tangent shape", lambda: _in_level(lambda: fwAD.make_dual(torch.ones(2), torch.ones(3)))),
    ("integer primal", lambda: _in_level(lambda: fwAD.make_dual(torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int64)))),
]:
    def _in_level(f):
        with fwAD.dual_level():
            return f()
    try:
        fn()
        print(name, "ok")
    except Exception as err:
        print(name, type(err).__name__, str(err).split("\n")[0][:100])
