"""Custom autograd Functions as in the extending-autograd docs."""
import torch


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class SplitHalves(torch.autograd.Function):
    """Two outputs, one of them marked non-differentiable."""
    @staticmethod
    def forward(ctx, x):
        a, b = x[: x.shape[0] // 2].clone(), x[x.shape[0] // 2:].clone()
        idx = torch.arange(b.shape[0])
        ctx.mark_non_differentiable(idx)
        return a * 2, b, idx

    @staticmethod
    def backward(ctx, ga, gb, gidx):
        return torch.cat([ga * 2, gb])


x = torch.linspace(0.0, 1.0, 4, dtype=torch.float64, requires_grad=True)
y = Exp.apply(x)
y.sum().backward()
print("exp grad", x.grad)

inp = torch.arange(6, dtype=torch.float64).reshape(2, 3).requires_grad_()
weight = torch.tensor([[0.1, 0.2, 0.3], [-0.4, 0.5, -0.6]], dtype=torch.float64, requires_grad=True)
bias = torch.tensor([1.0, -1.0], dtype=torch.float64, requires_grad=True)
out = LinearFunction.apply(inp, weight, bias)
print("linear out", out)
(out ** 2).sum().backward()
print("grads", inp.grad, weight.grad, bias.grad, sep="\n")
print("gradcheck", torch.autograd.gradcheck(LinearFunction.apply, (inp, weight, bias)))

m = MulConstant.apply(x, 3.5)
m.backward(torch.ones(4, dtype=torch.float64))
print("mulconst", x.grad)

a, b, idx = SplitHalves.apply(x)
print("nondiff", idx.requires_grad, a.requires_grad)
x.grad = None
(a.sum() + (b * b).sum()).backward()
print("split grad", x.grad)
print("gradgradcheck", torch.autograd.gradgradcheck(lambda t: Exp.apply(t) * t, (x,)))
