"""Saved-tensor hooks around a classifier's loss: what cross_entropy / nll_loss keep
for backward, offloading them in half precision, and save_on_cpu."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.linspace(-1, 1, 24).reshape(6, 4)
target = torch.tensor([0, 2, 1, 2, 0, 1])
class_weight = torch.tensor([1.0, 2.0, 0.5])
model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))


class Recorder:
    """Counts packs and unpacks and notes what each packed tensor looked like."""

    def __init__(self):
        self.packed, self.unpacked = [], 0

    def pack(self, t):
        self.packed.append((tuple(t.shape), str(t.dtype).split(".")[-1]))
        return t

    def unpack(self, t):
        self.unpacked += 1
        return t


def grads_of(loss):
    model.zero_grad()
    loss.backward()
    return [p.grad.clone() for p in model.parameters()]


def show(name, loss_fn):
    rec = Recorder()
    with torch.autograd.graph.saved_tensors_hooks(rec.pack, rec.unpack):
        loss = loss_fn(model(x))
    loss_tail = rec.packed[-4:]
    g = grads_of(loss)
    print(f"{name}: loss {loss.item():.6f} {loss.grad_fn.name()} packs {len(rec.packed)} "
          f"unpacks {rec.unpacked}")
    print("   last packs", loss_tail)
    print("   grad norms", [round(t.norm().item(), 6) for t in g])
    return g


plain = show("ce", lambda z: F.cross_entropy(z, target))
show("ce weight", lambda z: F.cross_entropy(z, target, weight=class_weight))
show("ce ignore", lambda z: F.cross_entropy(z, target, ignore_index=2))
show("ce sum", lambda z: F.cross_entropy(z, target, reduction="sum"))
show("nll none", lambda z: F.nll_loss(F.log_softmax(z, 1), target, weight=class_weight,
                                      reduction="none").sum())
show("NLLLoss module", lambda z: nn.NLLLoss(weight=class_weight)(F.log_softmax(z, dim=1), target))

# What the loss node kept, read back through its saved attributes.
loss = F.nll_loss(F.log_softmax(model(x), 1), target, weight=class_weight, ignore_index=1)
node = loss.grad_fn
print("saved target", node._saved_target.tolist())
print("saved weight", node._saved_weight.tolist())
print("saved total_weight", round(node._saved_total_weight.item(), 6))
print("saved self", tuple(node._saved_self.shape), node._saved_self.requires_grad)
print("saved self is the log_softmax output",
      torch.equal(node._saved_self, node.next_functions[0][0]._saved_result))
loss = F.nll_loss(F.log_softmax(model(x), 1), target)
print("no weight:", loss.grad_fn._saved_weight, round(loss.grad_fn._saved_total_weight.item(), 1))


# Offload: keep saved floating tensors in half precision, restore on unpack.
def to_half(t):
    return (t.dtype, t.half()) if t.is_floating_point() else (None, t)


def from_half(packed):
    dtype, t = packed
    return t if dtype is None else t.to(dtype)


with torch.autograd.graph.saved_tensors_hooks(to_half, from_half):
    loss = F.cross_entropy(model(x), target, weight=class_weight, label_smoothing=0.1)
half = grads_of(loss)
loss_ref = F.cross_entropy(model(x), target, weight=class_weight, label_smoothing=0.1)
ref = grads_of(loss_ref)
print("half-offload loss", round(loss.item(), 5), "grads within 2e-3:",
      all(torch.allclose(a, b, atol=2e-3) for a, b in zip(half, ref)))

with torch.autograd.graph.save_on_cpu():
    loss = F.cross_entropy(model(x), target)
cpu = grads_of(loss)
print("save_on_cpu grads equal", all(torch.equal(a, b) for a, b in zip(cpu, plain)))

# What gets packed, by dtype; a hook that refuses integer tensors.
seen = []
with torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t.dtype) or t, lambda t: t):
    loss = F.cross_entropy(model(x), target)
print("dtypes packed", [str(d).split(".")[-1] for d in seen])


def refuse_ints(t):
    if not t.is_floating_point():
        raise TypeError("integer tensors stay out of the offload buffer")
    return t


try:
    with torch.autograd.graph.saved_tensors_hooks(refuse_ints, lambda t: t):
        F.cross_entropy(model(x), target)
except TypeError as e:
    print("refused:", e)

# Retaining the graph: each backward unpacks again.
rec = Recorder()
with torch.autograd.graph.saved_tensors_hooks(rec.pack, rec.unpack):
    loss = F.nll_loss(F.log_softmax(model(x), 1), target, weight=class_weight)
loss.backward(retain_graph=True)
first = rec.unpacked
loss.backward()
print("unpacks per backward", first, rec.unpacked - first)
try:
    loss.backward()
except RuntimeError as e:
    print("third backward:", str(e)[:60])
