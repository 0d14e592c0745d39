"""Custom autograd Functions (save_for_backward, needs_input_grad, mark_non_differentiable,
once_differentiable, setup_context), module and tensor hooks, retain_grad."""
import torch
import torch.nn as nn
from torch.autograd.function import once_differentiable


class ClampedExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = torch.exp(x.clamp(max=limit))
        ctx.save_for_backward(y, x)
        ctx.limit = limit
        return y

    @staticmethod
    def backward(ctx, grad):
        y, x = ctx.saved_tensors
        gx = grad * y * (x <= ctx.limit).to(grad.dtype) if ctx.needs_input_grad[0] else None
        return gx, None


class SortWithIndex(torch.autograd.Function):
    @staticmethod
    def forward(x):
        values, idx = x.sort()
        return values, idx

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_non_differentiable(output[1])
        ctx.save_for_backward(output[1])

    @staticmethod
    @once_differentiable
    def backward(ctx, g, _):
        (idx,) = ctx.saved_tensors
        out = torch.zeros_like(g)
        out[idx] = g
        return out


x = torch.tensor([0.5, 2.5, -1.0, 1.5], dtype=torch.float64, requires_grad=True)
y = ClampedExp.apply(x, 2.0)
v, i = SortWithIndex.apply(y * torch.tensor([1.0, -1.0, 2.0, 0.5], dtype=torch.float64))
v.retain_grad()
seen = []
v.register_hook(lambda g: seen.append(g.clone()) or g * 2)
(v * torch.arange(4, dtype=torch.float64)).sum().backward()
print("x.grad", x.grad)
print("v.grad", v.grad, "hook saw", seen[0])
print("index requires grad", i.requires_grad, i)

model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float64) + k).reshape(p.shape))
log = []
model[0].register_forward_pre_hook(lambda m, inp: log.append(("pre", inp[0].shape)))
model[0].register_forward_hook(lambda m, inp, out: log.append(("fwd", out.sum().item())))
model[1].register_full_backward_hook(lambda m, gin, gout: log.append(("bwd", gout[0].abs().sum().item(), gin[0].abs().sum().item())))
model[2].register_full_backward_pre_hook(lambda m, gout: log.append(("bwd-pre", gout[0].sum().item())))
inp = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3).requires_grad_()
model(inp).pow(2).sum().backward()
for entry in log:
    print(entry)
print("inp.grad", inp.grad)
print("grad_fn chain", type(model(inp).grad_fn).__name__, model(inp).grad_fn.next_functions[0][0].name())
