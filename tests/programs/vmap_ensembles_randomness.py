"""Model ensembles and random draws under vmap.

1. Model ensembling with torch.func.stack_module_state: vmap over models and data
(in_dims combinations), dropout under randomness="different"/"same"/"error",
training the ensemble with grad over the stacked params and a manual SGD step, and
per-model predictions agreeing with the models run one by one.

2. vmap with randomness="different" and "same": dropout and noise per entry, nested
vmaps, chunk_size, generators, in-place samplers, and the generator state afterwards;
the draws are the reference's (one draw for the whole batch).
"""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import stack_module_state, functional_call, vmap, grad, grad_and_value

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


class Net(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.drop = nn.Dropout(p)
        self.fc2 = nn.Linear(8, 3)
        self.register_buffer("scale", torch.ones(3))

    def forward(self, x):
        return self.fc2(self.drop(F.gelu(self.fc1(x)))) * self.scale


models = [Net() for _ in range(3)]
for i, m in enumerate(models):
    m.scale.fill_(1.0 + 0.5 * i)
params, buffers = stack_module_state(models)
print("stacked", {k: tuple(v.shape) for k, v in params.items()}, {k: tuple(v.shape) for k, v in buffers.items()})
print("requires grad", all(v.requires_grad for v in params.values()), params["fc1.weight"].is_leaf)
base = copy.deepcopy(models[0]).to("meta")


def fmodel(p, b, x):
    return functional_call(base, (p, b), (x,))


x_shared = torch.randn(5, 4)
x_each = torch.randn(3, 5, 4)
out_shared = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x_shared)
out_each = vmap(fmodel)(params, buffers, x_each)
print("shared", tuple(out_shared.shape), [round(v, 5) for v in out_shared[:, 0, 0].tolist()])
print("each", tuple(out_each.shape), [round(v, 5) for v in out_each[:, 1, 2].tolist()])
print("matches loop", all(torch.allclose(out_shared[i], models[i](x_shared), atol=1e-6) for i in range(3)),
      all(torch.allclose(out_each[i], models[i](x_each[i]), atol=1e-6) for i in range(3)))
# vmap over data inside vmap over models
nested = vmap(vmap(fmodel, in_dims=(None, None, 0)), in_dims=(0, 0, None))(params, buffers, x_shared)
print("nested", tuple(nested.shape), torch.allclose(nested, out_shared, atol=1e-6))
# out_dims
moved = vmap(fmodel, in_dims=(0, 0, None), out_dims=1)(params, buffers, x_shared)
print("out_dims=1", tuple(moved.shape), torch.equal(moved.transpose(0, 1), out_shared))

# dropout and randomness
drop_models = [Net(p=0.5) for _ in range(3)]
dp, db = stack_module_state(drop_models)
dbase = copy.deepcopy(drop_models[0]).to("meta")
def dmodel(p, b, x):
    return functional_call(dbase, (p, b), (x,))

try:
    vmap(dmodel, in_dims=(0, 0, None))(dp, db, x_shared)
except RuntimeError as e:
    print("error:", str(e)[:90])
torch.manual_seed(1)
diff = vmap(dmodel, in_dims=(0, 0, None), randomness="different")(dp, db, x_shared)
torch.manual_seed(1)
same = vmap(dmodel, in_dims=(0, 0, None), randomness="same")(dp, db, x_shared)
print("different shape", tuple(diff.shape), "same shape", tuple(same.shape))
print("different", [round(v, 4) for v in diff.sum((1, 2)).tolist()], "same", [round(v, 4) for v in same.sum((1, 2)).tolist()])
# randomness="same" on one shared input: dropout masks agree across the batch
torch.manual_seed(2)
xs = torch.ones(4, 6)
masks_same = vmap(lambda r: F.dropout(r, 0.5), randomness="same")(xs)
masks_diff = vmap(lambda r: F.dropout(r, 0.5), randomness="different")(xs)
print("mask rows", masks_same[0].tolist(), masks_diff[:, 0].tolist())
print("same rows equal", all(torch.equal(masks_same[0], masks_same[i]) for i in range(4)))
print("different rows differ", not all(torch.equal(masks_diff[0], masks_diff[i]) for i in range(4)))
print("values in {0,2}", sorted(set(masks_same.flatten().tolist()) | set(masks_diff.flatten().tolist())))
drop_models[0].eval()
print("eval dropout is identity", torch.equal(drop_models[0](x_shared), drop_models[0](x_shared)))

# train the ensemble: grad over stacked params, vmapped, a manual SGD step
y = torch.randint(0, 3, (5,))


def loss_fn(p, b, x, t):
    return F.cross_entropy(fmodel(p, b, x), t)


trainable = {k: v.detach().clone() for k, v in params.items()}
step = vmap(grad_and_value(loss_fn), in_dims=(0, 0, None, None))
for it in range(5):
    g, losses = step(trainable, buffers, x_shared, y)
    trainable = {k: trainable[k] - 0.5 * g[k] for k in trainable}
    print("ensemble step", it, [round(v, 6) for v in losses.tolist()])
print("grad shapes", {k: tuple(v.shape) for k, v in g.items()})
# a loop over the models gives the same gradients
m1 = copy.deepcopy(models[1])
l1 = F.cross_entropy(m1(x_shared), y)
l1.backward()
g1 = vmap(grad(loss_fn), in_dims=(0, 0, None, None))(params, buffers, x_shared, y)
print("grad matches module backward", torch.allclose(g1["fc2.weight"][1], m1.fc2.weight.grad, atol=1e-6))
# per-model predictions and a majority vote
pred = vmap(fmodel, in_dims=(0, 0, None))(trainable, buffers, x_shared).argmax(-1)
print("predictions", pred.tolist())
print("vote", torch.mode(pred, dim=0).values.tolist())


# --- 2 ----------------------------------------------------------------------
import torch
import torch.nn.functional as F
from torch.func import vmap
torch.manual_seed(0)
B = torch.randn(3, 5)
def f(x):
    m = F.dropout(torch.ones(4), 0.5)
    z = torch.randn(4) + x.sum()
    return m * z
print(vmap(f, randomness="different")(B))
print(vmap(f, randomness="different", chunk_size=2)(B))
print(vmap(vmap(lambda x: x + torch.randn(()), randomness="different"), randomness="different")(B[:, :2]))
print(vmap(lambda x: torch.normal(x, 0.5), randomness="different")(B))
print(vmap(lambda x: x.max(0).indices + torch.rand(2), randomness="different")(B))
g = torch.Generator().manual_seed(5)
print(vmap(lambda x: torch.randn(3, generator=g) + x[0], randomness="different")(B))
print(vmap(lambda x: torch.randn(17, dtype=torch.float32).sum() + x[0], randomness="different")(B))
print(vmap(lambda x: x.new_empty(20).normal_(2.0, 0.5)[:2], randomness="different")(B))
print(vmap(lambda x: torch.randint_like(x, 10), randomness="different")(B))
print(vmap(lambda x: torch.rand_like(x).exponential_()[:2], randomness="different")(B))
print(torch.rand(3))

torch.manual_seed(3)
x = torch.zeros(3, 4, 5)
print(vmap(lambda t: torch.randn_like(t), randomness="different")(x)[2, 3])
print(vmap(lambda t: torch.randn_like(t), randomness="same")(x)[2, 3])
print(vmap(lambda t: F.dropout(t + 1, 0.3) + torch.randn(()), randomness="different")(x)[:, 0, :3])
print(torch.randn(2))
