"""A logging Tensor subclass (the "Extending torch.Tensor" docs pattern): every call
on it is logged through __torch_function__, results stay of the subclass, and autograd
runs through it (gradients, grad_fn, custom Functions, autograd.grad)."""
import torch
import torch.nn.functional as F

LOG = []


class LoggingTensor(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is not torch.Tensor.__repr__:
            LOG.append(func.__name__)
        if kwargs is None:
            kwargs = {}
        return super().__torch_function__(func, types, args, kwargs)


def flush(label):
    print(label, " ".join(LOG))
    LOG.clear()


torch.manual_seed(0)
x = torch.randn(2, 3).as_subclass(LoggingTensor)
flush("as_subclass:")
y = (x * 2 + 1).sin()
flush("ops:")
print(type(y).__name__, type(x.sum()).__name__, type(x[0]).__name__, type(x.T).__name__)
flush("types:")
values, indices = x.max(dim=1)
print(type(values).__name__, type(indices).__name__, indices.tolist())
flush("max:")
parts = x.split(1, dim=1)
print(type(parts).__name__, [type(p).__name__ for p in parts])
flush("split:")
print(x.shape, x.dtype, x.dim(), len(x))
flush("metadata:")
print(y)
flush("repr:")
z = torch.matmul(x, torch.ones(3, 2))
w = F.relu(z - 1)
print(type(z).__name__, type(w).__name__, w.shape)
flush("mixed:")

# autograd with subclass leaves
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.as_subclass(LoggingTensor)
print(b.requires_grad, b.is_leaf)
flush("alias:")
loss = (b * b).sum()
print(type(loss).__name__)
loss.backward()
flush("backward:")
print(type(a.grad).__name__, a.grad)

leaf = LoggingTensor(torch.tensor([0.5, -1.0])).requires_grad_()
print(type(leaf).__name__, leaf.is_leaf, leaf.requires_grad)
out = (leaf.exp() * 3).sum()
(g,) = torch.autograd.grad(out, leaf, create_graph=True)
print(type(g).__name__, g)
flush("grad:")
g.sum().backward()
print(type(leaf.grad).__name__, leaf.grad)
LOG.clear()


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        ctx.save_for_backward(inp)
        return inp * inp

    @staticmethod
    def backward(ctx, grad):
        (inp,) = ctx.saved_tensors
        return 2 * inp * grad


p = torch.tensor([1.5, -2.0], requires_grad=True)
q = Square.apply(p.as_subclass(LoggingTensor))
print(type(q).__name__, q)
q.sum().backward()
print(p.grad)
flush("function:")

param = torch.nn.Parameter(torch.ones(2))
print(type(param * 2).__name__, type(param.detach()).__name__)
with torch._C.DisableTorchFunctionSubclass():
    print(type(x + 1).__name__)
print(LOG)
print(type(x.as_subclass(torch.Tensor)).__name__, type(torch.Tensor._make_subclass(LoggingTensor, torch.ones(1))).__name__)
