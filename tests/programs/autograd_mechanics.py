"""The "Autograd mechanics" notes as a program: saved tensors (_saved_*, their raw
handles and register_hooks), in-place correctness checks and their errors, freezing a
pretrained part for finetuning, grad modes (no_grad / enable_grad / inference_mode /
set_grad_enabled, is_inference, eval is not no_grad), saved-tensor hooks (to a
temporary file and back, save_on_cpu), backward hooks on tensors, nodes and modules
and their firing order, register_multi_grad_hook, register_post_accumulate_grad_hook
(the optimizer in backward), complex gradients (the conjugate Wirtinger convention),
and threads each running backward on their own graph."""
import os
import tempfile
import threading
import uuid

import torch
import torch.nn as nn

torch.manual_seed(0)


def report(label, fn):
    try:
        out = fn()
        print(label, "ok", out)
    except Exception as e:
        print(label, type(e).__name__, str(e).splitlines()[0])


# --- saved tensors ----------------------------------------------------------------------
x = torch.randn(5, requires_grad=True)
y = x.pow(2)
print(y.grad_fn._saved_self is x, y.grad_fn._saved_exponent)
y = x.exp()
print(y.grad_fn._saved_result.equal(y), y.grad_fn._saved_result is y)
y.sum().backward()
report("saved after backward", lambda: y.grad_fn._saved_result)

# --- in-place correctness checks -----------------------------------------------------------
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sin()
c = b.exp()
b.add_(1)        # sin saved its input, not its output: fine
c.sum().backward()
print(a.grad)
d = a.exp()
e = d * 2
d.mul_(2)        # exp saved its output
report("modified output", lambda: e.sum().backward())
print(d._version, d.grad_fn)
w = torch.tensor([1.0, 2.0], requires_grad=True)
v = w.clone()
out = v * v
v[0] = 5
try:       # (the message's node is named torch::autograd::CopySlices, chainrule's CopySlices)
    out.sum().backward()
except RuntimeError as err:
    print("modified through index", str(err).split(", which")[0])

# --- freezing for finetuning ---------------------------------------------------------------
backbone = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
for param in backbone.parameters():
    param.requires_grad = False
head = nn.Linear(8, 3)
model = nn.Sequential(backbone, head)
optimizer = torch.optim.SGD(head.parameters(), lr=1e-2, momentum=0.9)
inputs = torch.randn(6, 4)
loss = model(inputs).pow(2).mean()
print(loss.grad_fn, [p.requires_grad for p in model.parameters()])
loss.backward()
optimizer.step()
print([p.grad is None for p in model.parameters()], head.bias)
backbone.requires_grad_(True)
print([p.requires_grad for p in backbone.parameters()])

# --- grad modes ------------------------------------------------------------------------------
x = torch.ones(2, requires_grad=True)
with torch.no_grad():
    print((x * 2).requires_grad, torch.is_grad_enabled())
    with torch.enable_grad():
        print((x * 2).requires_grad)
    with torch.set_grad_enabled(True):
        print((x * 2).requires_grad)
with torch.set_grad_enabled(False):
    print((x * 2).requires_grad)
print(torch.is_grad_enabled())
with torch.inference_mode():
    t = x * 2
    print(t.requires_grad, torch.is_inference(t), torch.is_inference_mode_enabled(),
          torch.is_grad_enabled())
    with torch.inference_mode(mode=False):
        u = x * 2
        print(u.requires_grad, torch.is_inference(u))
print(torch.is_inference(t), torch.is_inference(x), t.is_inference())
report("inference tensor saved", lambda: (x * t).sum().backward())
report("inference in-place outside", lambda: t.add_(1))
report("clone is normal", lambda: torch.is_inference(t.clone()))
with torch.inference_mode():        # views of normal tensors stay normal tensors
    front, rows = x[:2], x.unsqueeze(0).unbind(0)
print(front.is_inference(), front.requires_grad, front.is_leaf, front._base is x,
      rows[0].is_inference())
print((front * 3).sum().requires_grad)
report("inference-mode view written outside", lambda: front.mul_(2))
drop = nn.Dropout(0.5)
drop.eval()
print(drop(x).requires_grad, drop.training)


@torch.inference_mode()
def predict(m, z):
    return m(z)


print(predict(head, torch.ones(1, 8)).requires_grad)

# --- saved-tensor hooks --------------------------------------------------------------------
tmp_dir_obj = tempfile.TemporaryDirectory()
tmp_dir = tmp_dir_obj.name


class SelfDeletingTempFile():
    def __init__(self):
        self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

    def __del__(self):
        os.remove(self.name)


def pack_hook(tensor):
    temp_file = SelfDeletingTempFile()
    torch.save(tensor, temp_file.name)
    return temp_file


def unpack_hook(temp_file):
    return torch.load(temp_file.name)


x = torch.linspace(-1, 1, 4, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = x.pow(2) * x.sin()
print(len(os.listdir(tmp_dir)))
y.sum().backward()
print(x.grad)
del y
print(len(os.listdir(tmp_dir)))

x.grad = None
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
y.sum().backward()
print(x.grad)
report("register twice", lambda: (lambda z: (z.grad_fn._raw_saved_self.register_hooks(
    pack_hook, unpack_hook), z.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)))(x.pow(2)))
report("pack returns None", lambda: x.pow(2).grad_fn._raw_saved_self.register_hooks(
    lambda t: None, lambda t: t))
report("hook type", lambda: x.pow(2).grad_fn._raw_saved_self.register_hooks(1, 2))

x.grad = None
with torch.autograd.graph.save_on_cpu(pin_memory=False):
    y = (x * x.exp()).sum()
y.backward()
print(x.grad)
tmp_dir_obj.cleanup()

# --- backward hooks: what fires, and in which order ---------------------------------------
order = []
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a * 3
b.retain_grad()
b.register_hook(lambda g: order.append(("tensor hook", g.tolist())) or g * 2)
b.grad_fn.register_prehook(lambda gout: order.append(("node prehook", gout[0].tolist())))
b.grad_fn.register_hook(lambda gin, gout: order.append(("node hook", gin[0].tolist(),
                                                         gout[0].tolist())))
a.register_hook(lambda g: order.append(("leaf hook", g.tolist())))
a.register_post_accumulate_grad_hook(lambda p: order.append(("post accumulate",
                                                             p.grad.tolist())))
(b * b).sum().backward()
for entry in order:
    print(*entry)
print(b.grad, a.grad)

order = []
m = nn.Linear(2, 2)
m.register_forward_pre_hook(lambda mod, args: order.append("forward pre"))
m.register_forward_hook(lambda mod, args, out: order.append("forward"))
m.register_full_backward_pre_hook(lambda mod, gout: order.append("backward pre"))
m.register_full_backward_hook(lambda mod, gin, gout: order.append(
    ("backward", gin[0] is None, tuple(gout[0].shape))))
m(torch.ones(3, 2)).sum().backward()
print(order)

# --- register_multi_grad_hook ------------------------------------------------------------------
p, q = torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)
seen = []
handle = torch.autograd.graph.register_multi_grad_hook(
    (p, q), lambda grads: seen.append([None if g is None else g.tolist() for g in grads]))
(p * 2).sum().backward()
(p.sum() * q).sum().backward()
handle.remove()
(q * 5).sum().backward()
torch.autograd.graph.register_multi_grad_hook(
    (p, q), lambda g: seen.append(("any", g.tolist())), mode="any")
(q * 7).sum().backward()
print(seen)

# --- the optimizer in backward ---------------------------------------------------------------
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer_dict = {p: torch.optim.SGD([p], lr=0.1) for p in model.parameters()}


def optimizer_hook(parameter):
    optimizer_dict[parameter].step()
    optimizer_dict[parameter].zero_grad()


for p in model.parameters():
    p.register_post_accumulate_grad_hook(optimizer_hook)
data, target = torch.randn(8, 3), torch.randn(8, 1)
for step in range(3):
    loss = nn.functional.mse_loss(model(data), target)
    loss.backward()
    print(step, loss.item(), [p.grad for p in model.parameters()][0])
print(model[2].weight)

# --- complex autograd ------------------------------------------------------------------------
z = torch.tensor([1 + 2j, -0.5 + 1j], requires_grad=True)
(z.abs() ** 2).sum().backward()
print(z.grad)              # the conjugate Wirtinger derivative, times 2: 2 * z
z.grad = None
(z * z.conj()).real.sum().backward()
print(z.grad)
z.grad = None
w = torch.tensor([0.5 - 1j, 2 + 0j])
(w * z).real.sum().backward()
print(z.grad)              # d/dz* of Re(w z) is conj(w) / 2, times 2
out = z * z
(g,) = torch.autograd.grad(out, z, grad_outputs=torch.ones_like(out))
print(g, out.grad_fn)
report("complex backward", lambda: (z * z).sum().backward())


# --- threads, each running backward on its own graph ----------------------------------------
results = [None] * 4


def train_fn(i):
    x = torch.full((3,), float(i + 1), requires_grad=True)
    y = (x ** 2 + x.sin()).sum()
    y.backward()
    results[i] = x.grad


threads = [threading.Thread(target=train_fn, args=(i,)) for i in range(4)]
for th in threads:
    th.start()
for th in threads:
    th.join()
for i, r in enumerate(results):
    print(i, r)
shared = torch.ones(2, requires_grad=True)
shared_out = (shared * 3).sum()


def shared_backward():
    (shared * 2).sum().backward()


threads = [threading.Thread(target=shared_backward) for _ in range(3)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print(shared.grad)
