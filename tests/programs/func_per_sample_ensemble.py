"""Per-sample gradients of a small CNN and an MLP with functional_call + vmap(grad),
and model ensembling with stack_module_state (in_dims tuples, dropout randomness)."""
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
