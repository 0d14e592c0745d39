"""Memory-saving patterns with saved-tensor hooks: pack activations to float16 and
count what is saved, an offload-to-"disk" dict keyed by id, save_on_cpu around a small
MLP, disable_saved_tensors_hooks' error, hooks combined with checkpoint, and anomaly
mode naming the backward node that produced NaN."""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))
x = torch.randn(10, 8)
target = torch.randint(0, 3, (10,))


def reference_grads():
    model.zero_grad()
    F.cross_entropy(model(x), target).backward()
    return [p.grad.clone() for p in model.parameters()]


ref = reference_grads()

# 1. compress saved activations to float16
stats = {"packed": 0, "unpacked": 0, "bytes": 0}


def pack_half(t):
    stats["packed"] += 1
    stats["bytes"] += t.numel() * 2
    return (t.dtype, t.to(torch.float16))


def unpack_half(packed):
    stats["unpacked"] += 1
    dtype, t = packed
    return t.to(dtype)


model.zero_grad()
with saved_tensors_hooks(pack_half, unpack_half):
    logits = model(x)
F.cross_entropy(logits, target).backward()
half = [p.grad for p in model.parameters()]
print("packed", stats["packed"], "unpacked", stats["unpacked"], "bytes", stats["bytes"])
print("max abs diff vs float32 grads", max((a - b).abs().max().item() for a, b in zip(half, ref)) < 1e-2)

# 2. offload to a store, keyed by a counter
store = {}


def offload(t):
    key = len(store)
    store[key] = t.detach().clone()
    return key


def reload(key):
    return store.pop(key)


model.zero_grad()
with saved_tensors_hooks(offload, reload):
    logits = model(x)
print("offloaded", len(store))
F.cross_entropy(logits, target).backward()
print("left in store", len(store))
print("same grads", all(torch.allclose(p.grad, r) for p, r in zip(model.parameters(), ref)))

# 3. save_on_cpu (pin_memory is a no-op on CPU-only machines)
model.zero_grad()
with save_on_cpu(pin_memory=False):
    loss = F.cross_entropy(model(x), target)
loss.backward()
print("save_on_cpu loss", round(loss.item(), 6),
      "same grads", all(torch.allclose(p.grad, r) for p, r in zip(model.parameters(), ref)))

# 4. hooks can be forbidden in a region
try:
    with disable_saved_tensors_hooks("saved tensor hooks are off in this block"):
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
except RuntimeError as e:
    print("RuntimeError:", e)

# 5. checkpoint + pack hooks: only the checkpoint's inputs get packed
seen_shapes = []
model.zero_grad()
with saved_tensors_hooks(lambda t: seen_shapes.append(tuple(t.shape)) or t, lambda t: t):
    hidden = checkpoint(model[:4], x, use_reentrant=False)
    logits = model[4](hidden / 2 * 2)
F.cross_entropy(logits, target).backward()
print("packed under checkpoint", seen_shapes)
print("same grads", all(torch.allclose(p.grad, r, atol=1e-6) for p, r in zip(model.parameters(), ref)))

# 6. saved tensor accessed after being freed
a = torch.randn(3, requires_grad=True)
b = a.exp()
b.sum().backward()
try:
    b.grad_fn._saved_result
except RuntimeError as e:
    print("RuntimeError:", str(e).split(".")[0])

# 7. anomaly mode points to the node that made NaN
w = torch.tensor([1.0, 0.0, 2.0], requires_grad=True)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with torch.autograd.detect_anomaly():
        out = (w.sqrt() * 0).sum()
        try:
            out.backward()
        except RuntimeError as e:
            print("anomaly:", e)
print("w.grad after failed backward", w.grad)
with torch.autograd.set_detect_anomaly(True, check_nan=False):
    (w.sqrt() * 0).sum().backward()
print("check_nan=False w.grad", w.grad)
print("anomaly enabled now", torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
