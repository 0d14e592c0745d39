"""What the autograd profiler records for a small training step, without times:
the events' names, how many of each, their parents (cpu_parent), the shapes that
reach each backward node, the sequence numbers that pair forward ops with their
backward nodes, and the scope of each kind of event.

Printed are the events a user's code and the autograd engine make: the ops called
directly inside the record_function blocks, the backward nodes and the engine's
``autograd::engine::evaluate_function`` ranges around them, the user's ranges and a
custom Function. The ops that run inside another op, a backward node or the engine
are library internals (which kernels an op calls, how the engine sums a broadcast
gradient) and are left out; so are factory functions (``torch.ones``), which
chainrule does not record."""
import torch
from torch.autograd import profiler

torch.manual_seed(0)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


w1 = torch.randn(4, 8, requires_grad=True)
b1 = torch.zeros(8, requires_grad=True)
w2 = torch.randn(8, 3, requires_grad=True)
x = torch.randn(5, 4)
target = torch.randn(5, 3)
seed = torch.ones(())          # the loss's gradient, made outside the profile


def step():
    with profiler.record_function("forward"):
        hidden = torch.tanh(torch.mm(x, w1) + b1)
        out = torch.mm(Square.apply(hidden), w2)
        loss = ((out - target) ** 2).mean()
    with profiler.record_function("backward"):
        loss.backward(seed)
    return loss


with profiler.profile(record_shapes=True) as prof:
    for _ in range(2):
        loss = step()
        with torch.no_grad():
            for p in (w1, b1, w2):
                p.grad = None


def is_internal(event):
    """An op run inside another op, a backward node or the engine's range (scope 7 is
    a user's range, 1 a backward node)."""
    parent = event.cpu_parent
    return parent is not None and parent.scope != 7 and event.scope != 1


def parent_name(event):
    return event.cpu_parent.name if event.cpu_parent is not None else "-"


events = [e for e in prof.function_events if not is_internal(e)]
rows = {}
for e in events:
    shapes = e.input_shapes if e.scope == 1 else None     # a node's: its gradients
    key = (e.name, parent_name(e), e.scope, str(shapes))
    rows[key] = rows.get(key, 0) + 1
print("name | parent | scope | node input shapes | count")
for (name, parent, scope, shapes), count in sorted(rows.items()):
    print(f"{name} | {parent} | {scope} | {shapes} | {count}")

# Each node pairs with the forward op (or custom Function) that made it, and its
# evaluate_function range carries the same number.
forward = {}
for e in events:
    if e.scope == 0 and e.sequence_nr >= 0 and not e.name.startswith("autograd::"):
        forward.setdefault(e.sequence_nr, e.name)
pairs = {}
for e in events:
    if e.scope == 1:
        made_by = forward.get(e.sequence_nr, "-") if e.sequence_nr >= 0 else "-"
        same = e.cpu_parent.sequence_nr == e.sequence_nr
        pairs[(e.name, made_by, same)] = pairs.get((e.name, made_by, same), 0) + 1
print("node | made by | evaluate_function has its number | count")
for (name, made_by, same), count in sorted(pairs.items()):
    print(f"{name} | {made_by} | {same} | {count}")

print("top level:", sorted({e.name for e in events if e.cpu_parent is None}))
print("threads:", sorted({e.thread for e in events}))
print("loss", round(loss.item(), 4))
