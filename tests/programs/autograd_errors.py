"""The errors users meet (and search for): in-place on leaves and saved tensors,
backward twice, non-scalar backward, grad of a non-requiring tensor."""
import torch


def report(label, fn):
    try:
        fn()
        print(label, "no error")
    except Exception as e:
        print(label, type(e).__name__, str(e).splitlines()[0])


leaf = torch.ones(3, requires_grad=True)
report("inplace leaf", lambda: leaf.add_(1))


def saved_modified():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.exp()
    c = b * 2
    b.add_(1)  # exp saved its output
    c.sum().backward()
    b.sum().backward()
report("saved modified", saved_modified)


def twice():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (a * a).sum()
    y.backward()
    y.backward()
report("backward twice", twice)
report("non-scalar", lambda: (torch.ones(2, requires_grad=True) * 2).backward())
report("no grad_fn", lambda: torch.ones(2).sum().backward())
report("grad unused", lambda: torch.autograd.grad(torch.ones(2, requires_grad=True).sum(), torch.ones(1, requires_grad=True)))
report("numpy of requires_grad", lambda: torch.ones(2, requires_grad=True).numpy())
report("int requires_grad", lambda: torch.arange(3).requires_grad_())
report("shape mismatch", lambda: torch.ones(2, 3) @ torch.ones(2, 3))
report("broadcast", lambda: torch.ones(2, 3) + torch.ones(4))
report("view on non-contiguous", lambda: torch.ones(2, 3).t().view(6))
report("item of many", lambda: torch.ones(2).item())

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
print("version", x._version, y._version)
with torch.no_grad():
    x.mul_(2)
print("version after", x._version, x)
z = x.detach()
z.zero_()
print("detach shares storage", x)
a = torch.tensor([2.0], requires_grad=True)
y = a ** 2
y.backward(retain_graph=True)
y.backward()
print("retain_graph accumulates", a.grad)
print("grad allow_unused", torch.autograd.grad((a * 3).sum(), [a, torch.ones(1, requires_grad=True)], allow_unused=True))
print("materialize", torch.autograd.grad((a * 3).sum(), [a, torch.ones(1, requires_grad=True)], allow_unused=True, materialize_grads=True))
