"""Tensor hooks, module hooks, saved-tensor hooks, grad modes."""
import torch

x = torch.arange(1.0, 5.0, requires_grad=True)
seen = []
x.register_hook(lambda g: seen.append(g.clone()))
h = x * 2
h.register_hook(lambda g: g * 10)
(h ** 2).sum().backward()
print("leaf grad", x.grad)
print("seen", seen)

# hook that clips the gradient, then removed
x.grad = None
handle = x.register_hook(lambda g: g.clamp(max=5.0))
(x ** 2).sum().backward()
print("clipped", x.grad)
handle.remove()
x.grad = None
(x ** 2).sum().backward()
print("unclipped", x.grad)

# saved tensor hooks
packed = []
def pack(t):
    packed.append(tuple(t.shape))
    return t * 1
def unpack(t):
    return t
a = torch.linspace(0.1, 0.9, 3, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    b = a.exp() * a.sin()
b.sum().backward()
print("packed shapes", packed)
print("a.grad", a.grad)

# inference mode and enable_grad
with torch.inference_mode():
    c = a * 2
print("inference", c.requires_grad, torch.is_inference_mode_enabled())
with torch.no_grad():
    with torch.enable_grad():
        d = a * 2
    e = a * 2
print("enable_grad inside no_grad", d.requires_grad, e.requires_grad)

@torch.no_grad()
def update(p):
    p -= 0.1 * p.grad
    return p

p = torch.tensor([1.0, 2.0], requires_grad=True)
(p * p).sum().backward()
update(p)
print("sgd by hand", p, p.requires_grad)

torch.set_grad_enabled(False)
print("set_grad_enabled", (p * 2).requires_grad)
torch.set_grad_enabled(True)

# module hooks
lin = torch.nn.Linear(3, 2)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]))
    lin.bias.fill_(0.5)
outs = []
lin.register_forward_hook(lambda m, i, o: outs.append(o.detach().clone()))
lin.register_forward_pre_hook(lambda m, i: (i[0] * 2,))
grads = []
lin.register_full_backward_hook(lambda m, gi, go: grads.append(go[0].clone()))
r = lin(torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True))
r.sum().backward()
print("forward hook", outs)
print("backward hook", grads)
print("weight grad", lin.weight.grad)
