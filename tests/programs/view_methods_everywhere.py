"""Views in every spelling a model writes: t, transpose, view/reshape (ints, tuples,
-1), permute, unsqueeze, integer indexing, through a linear layer, in-place writes
through views, a subclass and version counters; gradients and error messages."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
w = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
b = torch.randn(2, dtype=torch.float64, requires_grad=True)

views = [x.t(), x.transpose(0, 1), x.transpose(-1, 0), x.view(12), x.view(-1, 6),
         x.view((2, -1)), x.reshape(6, 2), x.reshape([4, 3]), x.permute(1, 0),
         x.permute((-1, 0)), x.unsqueeze(0), x.unsqueeze(-1), x[1], x[-1], x[2][3]]
for v in views:
    print(tuple(v.shape), type(v.grad_fn).__name__, v.is_contiguous(), v._base is x)

out = F.linear(x, w, b) + x @ w.t() + torch.reshape(x, (4, 3)).t() @ w.t()
loss = (out ** 2).sum() + sum((v * v).sum() for v in views)
loss.backward()
print("x.grad", x.grad)
print("w.grad", w.grad, "b.grad", b.grad)

y = x.detach().clone().requires_grad_()
z = y * 2.0
row = z[1]
row.mul_(3.0)                     # in place through a view: the base's history changes
col = z.t()[2]
col.add_(1.0)
print("versions", z._version, row._version, type(z.grad_fn).__name__)
z.view(-1).sum().backward()
print("y.grad", y.grad)

for bad in (lambda: x.view(5), lambda: x.t().view(12), lambda: x[3], lambda: x.transpose(0, 2),
            lambda: x.permute(0, 0), lambda: torch.ones(2, 2, 2).t(), lambda: x.unsqueeze(3)):
    try:
        bad()
    except (RuntimeError, IndexError) as e:
        print(type(e).__name__, str(e).split("\n")[0])

with torch.no_grad():
    v = x.t()
    print("no_grad view", v.grad_fn, tuple(v.shape))
leaf_view = x.unsqueeze(0)
try:
    leaf_view.add_(1.0)
except RuntimeError as e:
    print("RuntimeError", str(e).split("\n")[0][:80])


class Tagged(torch.Tensor):
    pass


t = torch.ones(2, 3).as_subclass(Tagged)
print(type(t.t()).__name__, type(t[0]).__name__, type(t.view(-1)).__name__, tuple(t.t().shape))
print("plain after subclass", type(x.t()).__name__, type(x[0]).__name__)
