"""Inspecting and instrumenting the autograd graph the way debugging code does it:
walk grad_fn.next_functions breadth-first, print node names and saved tensors, tag
nodes through metadata, register Node pre-hooks/post-hooks that rescale gradients,
register_multi_grad_hook in "all" and "any" modes, and get_gradient_edge with grad()."""
from collections import deque

import torch
import torch.nn as nn
from torch.autograd.graph import get_gradient_edge, register_multi_grad_hook

torch.manual_seed(0)


def walk(root):
    """Breadth-first list of (depth, node) reachable from root, each node once."""
    seen, order, queue = {root}, [], deque([(0, root)])
    while queue:
        depth, node = queue.popleft()
        order.append((depth, node))
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                queue.append((depth + 1, nxt))
    return order


x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
w = torch.tensor([1.5, -0.5], requires_grad=True)
h = torch.tanh(x @ w)
y = (h * h.exp()).sum() + x.pow(2).mean()
print("graph of y:")
for depth, node in walk(y.grad_fn):
    print("  " * depth + node.name(), len(node.next_functions))

print("saved by PowBackward0:", x.pow(2).grad_fn._saved_exponent, x.pow(2).grad_fn._saved_self.shape)
print("saved by TanhBackward0:", h.grad_fn._saved_result)
print("MvBackward0 saved:", (x @ w).grad_fn._saved_self.shape, (x @ w).grad_fn._saved_vec)

# metadata survives on the node and can be read back during backward
for depth, node in walk(y.grad_fn):
    node.metadata["depth"] = depth
visits = []
for depth, node in walk(y.grad_fn):
    if "AccumulateGrad" not in node.name():
        node.register_prehook(lambda g, node=node: visits.append((node.name(), node.metadata["depth"])))
y.backward(retain_graph=True)
print("execution order:", visits)
print("x.grad", x.grad)
print("w.grad", w.grad)

# a post-hook that halves TanhBackward0's input gradient, and a pre-hook doubling
# the gradient arriving at the exp node
x.grad = None
w.grad = None
handle_post = h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 0.5,))
exp_node = next(n for _, n in walk(y.grad_fn) if n.name() == "ExpBackward0")
handle_pre = exp_node.register_prehook(lambda grad_outputs: (grad_outputs[0] * 2,))
y.backward(retain_graph=True)
print("with node hooks x.grad", x.grad)
print("with node hooks w.grad", w.grad)
handle_post.remove()
handle_pre.remove()
x.grad = None
w.grad = None
y.backward()
print("hooks removed w.grad", w.grad)

# multi-grad hooks over the parameters of a small model
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
inp = torch.randn(5, 3)
params = list(model.parameters())
calls = []


def all_hook(grads):
    calls.append(("all", [None if g is None else round(g.norm().item(), 4) for g in grads]))


register_multi_grad_hook(params, all_hook)
register_multi_grad_hook(params[2:], lambda g: calls.append(("any", round(g.abs().sum().item(), 4))), mode="any")
model(inp).pow(2).sum().backward()
frozen = model(inp)[:, 0].sum()
frozen.backward(inputs=params[:2])
for c in calls:
    print(c)

# gradient edges: grad() with respect to an intermediate node
a = torch.linspace(-1, 1, 4, requires_grad=True)
b = a.sin() * 3
edge = get_gradient_edge(b)
print("edge", edge.node.name(), edge.output_nr)
out = (b ** 2).sum()
(gb,) = torch.autograd.grad(out, edge, retain_graph=True)
print("d out / d b", gb)
(ga,) = torch.autograd.grad(out, get_gradient_edge(a))
print("d out / d a", ga)
print("leaf edge", get_gradient_edge(a).node.name(), get_gradient_edge(a).node.variable is a)
