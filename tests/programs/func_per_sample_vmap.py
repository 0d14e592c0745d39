"""Per-sample gradients of a small CNN and an MLP with functional_call + vmap(grad),
and model ensembling with stack_module_state (in_dims tuples, dropout randomness).
Then: torch.func.grad_and_value with has_aux and argnums tuples over pytrees; vmap with
chunk_size, out_dims tuples, nested vmaps, None in_dims, kwargs; and the errors users
meet when they misuse them."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, vmap, grad, grad_and_value, stack_module_state

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 3 * 3, 5)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        return self.fc(torch.flatten(x, 1))


def fill_(model, k):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.sin(torch.arange(n, dtype=p.dtype) * (k + 0.37 * i)).reshape(p.shape) * 0.4)
    return model


cnn = fill_(SmallCNN().double(), 0.9)
images = torch.cos(torch.arange(6 * 36, dtype=torch.float64) * 0.31).reshape(6, 1, 6, 6)
labels = torch.tensor([0, 4, 2, 1, 3, 2])
params = {k: v.detach() for k, v in cnn.named_parameters()}
buffers = {k: v.detach() for k, v in cnn.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
    predictions = functional_call(cnn, (params, buffers), (batch,))
    return F.cross_entropy(predictions, targets)


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
per_sample = ft_compute_sample_grad(params, buffers, images, labels)
for name, g in per_sample.items():
    print("cnn per-sample", name, tuple(g.shape), round(g.sum().item(), 10), round(g.norm().item(), 10))

# the loop they replace
for i in (0, 3):
    cnn.zero_grad()
    F.cross_entropy(cnn(images[i:i + 1]), labels[i:i + 1]).backward()
    print("loop equal", i, all(torch.allclose(per_sample[n][i], p.grad) for n, p in cnn.named_parameters()))

# grad_and_value with has_aux: loss and predictions per sample
def loss_and_logits(params, sample, target):
    out = functional_call(cnn, params, (sample.unsqueeze(0),))
    return F.cross_entropy(out, target.unsqueeze(0)), out.squeeze(0)


(g, (loss, logits)) = vmap(grad_and_value(loss_and_logits, has_aux=True), in_dims=(None, 0, 0))(params, images, labels)
print("grad_and_value", loss, logits.shape, g["fc.bias"].sum(1))
print("argnums tuple", [t.shape for t in vmap(grad(lambda w, b, x: (x @ w.T + b).tanh().sum(), argnums=(0, 1)),
                                              in_dims=(None, None, 0))(params["fc.weight"], params["fc.bias"],
                                                                         torch.ones(3, 36, dtype=torch.float64))])

# per-sample gradient norms for clipping (DP-SGD style)
norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).norm(dim=0)
factor = (1.0 / (norms + 1e-6)).clamp(max=1.0)
clipped = {n: (g * factor.view(-1, *([1] * (g.dim() - 1)))).sum(0) for n, g in per_sample.items()}
print("clip norms", norms)
print("clipped", {n: round(c.abs().sum().item(), 10) for n, c in clipped.items()})


# model ensembling
class DropMLP(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.drop = nn.Dropout(p)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


models = [fill_(DropMLP().double(), 0.5 + i) for i in range(3)]
ens_params, ens_buffers = stack_module_state(models)
print("stacked", {k: tuple(v.shape) for k, v in ens_params.items()}, ens_params["fc1.weight"].requires_grad)
base = copy.deepcopy(models[0]).to("meta")


def fmodel(params, buffers, x):
    return functional_call(base, (params, buffers), (x,))


data = torch.sin(torch.arange(20, dtype=torch.float64)).reshape(5, 4)
for m in models:
    m.eval()
base.eval()
same_batch = vmap(fmodel, in_dims=(0, 0, None))(ens_params, ens_buffers, data)
print("ensemble eval", same_batch)
print("matches loop", torch.allclose(same_batch, torch.stack([m(data) for m in models])))
minibatches = data.expand(3, 5, 4) * torch.tensor([1.0, -1.0, 0.5], dtype=torch.float64).view(3, 1, 1)
print("ensemble per-model batches", vmap(fmodel)(ens_params, ens_buffers, minibatches).sum((1, 2)))

base.train()
different = vmap(fmodel, in_dims=(0, 0, None), randomness="different")(ens_params, ens_buffers, data)
same = vmap(fmodel, in_dims=(0, 0, None), randomness="same")(ens_params, ens_buffers, data)
print("train shapes", different.shape, same.shape)
# identical models: 'same' draws one dropout mask for all of them, 'different' one each
clones = [copy.deepcopy(models[0]) for _ in range(3)]
cp, cb = stack_module_state(clones)
same = vmap(fmodel, in_dims=(0, 0, None), randomness="same")(cp, cb, data)
different = vmap(fmodel, in_dims=(0, 0, None), randomness="different")(cp, cb, data)
print("same masks", torch.equal(same[0], same[1]) and torch.equal(same[1], same[2]))
print("different masks", not (torch.equal(different[0], different[1]) and torch.equal(different[1], different[2])))
try:
    vmap(fmodel, in_dims=(0, 0, None))(ens_params, ens_buffers, data)
except RuntimeError as e:
    print("randomness error:", str(e)[:80])
# dropout with p=0 is deterministic in training: the gradient of the ensemble's loss
zero = [fill_(DropMLP(0.0).double(), 1.5 + i) for i in range(3)]
zp, zb = stack_module_state(zero)
zbase = copy.deepcopy(zero[0]).to("meta")
def ens_loss(p, b, x):
    return functional_call(zbase, (p, b), (x,)).pow(2).mean()
gz = vmap(grad(ens_loss), in_dims=(0, 0, None), randomness="different")(zp, zb, data)
print("ensemble grads", {k: round(v.sum().item(), 10) for k, v in gz.items()})


# --- grad_and_value, vmap arguments, misuse ---------------------------------------
import torch
from torch.func import grad, grad_and_value, vmap, jacrev, jacfwd, hessian, vjp, jvp

x = torch.linspace(-1.0, 1.0, 4, dtype=torch.float64)
w = torch.tensor([[0.5, -0.2, 0.1, 0.3], [0.0, 0.4, -0.6, 0.2]], dtype=torch.float64)
b = torch.tensor([0.1, -0.1], dtype=torch.float64)


def loss(w, b, x, scale=1.0):
    logits = w @ x + b
    value = scale * torch.logsumexp(logits, 0) - logits[0]
    return value, {"logits": logits, "prob": logits.softmax(0)}


(gw, gb), (value, aux) = grad_and_value(loss, argnums=(0, 1), has_aux=True)(w, b, x)
print("grad_and_value", gw, gb, value, aux["prob"])
g_params, aux = grad(lambda p, x: loss(p["w"], p["b"], x), has_aux=True)({"w": w, "b": b}, x)
print("pytree argnum", sorted(g_params), g_params["b"], aux["logits"])
print("negative argnum", grad(lambda a, c: (a * c).sum(), argnums=-1)(x, x * 2))
print("kwargs pass through", grad(lambda w, b, x, scale: loss(w, b, x, scale)[0], argnums=1)(w, b, x, scale=2.0))
print("nested grads", grad(grad(lambda t: t.sin()))(torch.tensor(0.3, dtype=torch.float64)))
g, (v, n) = grad_and_value(lambda t: (t ** 3, t.exp()), has_aux=True)(torch.tensor(2.0, dtype=torch.float64))
print("aux tensor", g, v, n)

# vmap: per-example losses with kwargs, None in_dims, out_dims tuples, chunks
xs = torch.sin(torch.arange(24, dtype=torch.float64)).reshape(6, 4)
per = vmap(grad_and_value(loss, argnums=(0, 1), has_aux=True), in_dims=(None, None, 0))(w, b, xs, scale=0.5)
(gws, gbs), (values, auxes) = per
print("per-example", gws.shape, gbs, values, auxes["prob"].shape)
chunked = vmap(grad(lambda w, x: loss(w, b, x)[0]), in_dims=(None, 0), chunk_size=4)(w, xs)
print("chunk_size equal", torch.allclose(chunked, gws * 0 + vmap(grad(lambda w, x: loss(w, b, x)[0]), in_dims=(None, 0))(w, xs)))
stats = vmap(lambda r: (r.mean(), r - r.mean(), r.max()), out_dims=(0, 1, 0))(xs)
print("out_dims tuple", [s.shape for s in stats], stats[1][:, 0])
print("out_dims None entry", vmap(lambda r: (r.sum(), w), out_dims=(0, None))(xs)[1].shape)
outer = vmap(vmap(lambda a, c: (a * c).sum(), in_dims=(0, None)), in_dims=(None, 0))(xs, xs[:3])
print("nested vmap", outer.shape, outer)
print("in_dims=1", vmap(torch.sum, in_dims=1)(xs))
print("in_dims dict", vmap(lambda d: d["a"] @ d["b"], in_dims=({"a": 0, "b": None},))({"a": xs, "b": x}))
print("kwargs unbatched", vmap(lambda r, power: r.abs() ** power)(xs[:2], power=2.0))
print("jacrev in vmap", vmap(jacrev(lambda r: r.tanh() * r.sum()))(xs[:2]).shape)
print("hessian in vmap", vmap(hessian(lambda r: (r ** 3).sum()))(xs[:2]).diagonal(dim1=1, dim2=2))
print("jacfwd chunked vmap", vmap(jacfwd(torch.sin), chunk_size=1)(xs[:3]).sum())


def attempt(label, fn):
    try:
        out = fn()
        print(label, "no error", out.shape if isinstance(out, torch.Tensor) else type(out).__name__)
    except Exception as e:
        print(label, type(e).__name__, str(e).splitlines()[0][:160])


attempt("batch sizes", lambda: vmap(torch.add)(xs, xs[:3]))
attempt("non-scalar grad", lambda: grad(lambda t: t * 2)(x))
attempt("non-tensor output", lambda: grad(lambda t: 3.0)(x))
attempt("has_aux not tuple", lambda: grad(lambda t: t.sum(), has_aux=True)(x))
attempt("argnums out of range", lambda: grad(lambda a: a.sum(), argnums=2)(x))
attempt("argnums duplicate", lambda: grad(lambda a, c: a.sum(), argnums=(0, 0))(x, x))
attempt("argnums float", lambda: grad(lambda a: a.sum(), argnums=0.5)(x))
attempt("integer input", lambda: grad(lambda a: a.sum())(torch.arange(3)))
attempt("in_dims too long", lambda: vmap(torch.sin, in_dims=(0, 0))(xs))
attempt("in_dims out of range", lambda: vmap(torch.sin, in_dims=3)(xs))
attempt("no batched inputs", lambda: vmap(torch.sin, in_dims=None)(xs))
attempt("out_dims too long", lambda: vmap(torch.sin, out_dims=(0, 1))(xs))
attempt("in_dims list", lambda: vmap(torch.sin, in_dims=[0])(xs))
attempt("zero inputs", lambda: vmap(lambda: torch.ones(1))())
attempt("non-tensor return", lambda: vmap(lambda r: "s")(xs))
attempt("chunk_size negative", lambda: vmap(torch.sin, chunk_size=-1)(xs))
attempt("jacrev chunk 0", lambda: jacrev(torch.sin, chunk_size=0)(x))
attempt("vjp non-tensor", lambda: vjp(torch.sin, 1.0))
attempt("jvp not tuple", lambda: jvp(torch.sin, x, (x,)))
attempt("jvp dtype", lambda: jvp(torch.sin, (x,), (x.float(),)))
attempt("grad complex", lambda: grad(lambda z: z.abs().sum())(torch.ones(2, dtype=torch.complex128)))
attempt("aux None", lambda: grad(lambda t: (t.sum(), None), has_aux=True)(x))
attempt("aux float", lambda: grad(lambda t: (t.sum(), {"n": 1.5}), has_aux=True)(x))
attempt("vmap item", lambda: vmap(lambda r: torch.tensor(r.sum().item()))(xs))
