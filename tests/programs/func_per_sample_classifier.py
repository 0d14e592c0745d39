"""Per-sample gradients of an MLP classifier with integer labels (cross_entropy and
nll_loss: class weights, ignore_index, each reduction; labels mapped or shared), and
what vmap does with the ops that pick elements by index: topk, kthvalue, median,
cummax, sort, take, index_fill with a per-sample value, max pooling's indices,
ctc_loss. Then the calls torch.func refuses under vmap, and their errors."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 4)).double()
params = {k: v.detach() for k, v in model.named_parameters()}
x = torch.randn(5, 6, dtype=torch.float64)
y = torch.tensor([0, 3, 1, 3, 2])
weight = torch.tensor([1.0, 0.5, 2.0, 1.5], dtype=torch.float64)


def loss_of(p, xi, yi, **kwargs):
    logits = functional_call(model, p, (xi.unsqueeze(0),))
    return F.cross_entropy(logits, yi.unsqueeze(0), **kwargs)


for kwargs in ({}, {"weight": weight}, {"ignore_index": 3}, {"reduction": "sum"}):
    per_sample = vmap(grad(lambda p, a, b: loss_of(p, a, b, **kwargs)),
                      in_dims=(None, 0, 0))(params, x, y)
    print("cross_entropy", kwargs.keys(), {k: round(g.sum().item(), 10) for k, g in per_sample.items()})
    model.zero_grad()
    loss_of({k: v for k, v in model.named_parameters()}, x[1], y[1], **kwargs).backward()
    print("  equals the loop's", all(torch.allclose(per_sample[k][1], p.grad) for k, p in model.named_parameters()))


# log-probabilities of one sample's sequence of 3 positions, labels shared by the batch
def sequence_nll(p, xi, labels, reduction):
    logp = functional_call(model, p, (xi.reshape(3, 6),)).log_softmax(1)
    return F.nll_loss(logp, labels, weight=weight, reduction=reduction).sum()


shared = torch.tensor([2, 0, 3])
seqs = torch.randn(4, 18, dtype=torch.float64)
for reduction in ("none", "sum", "mean"):
    g = vmap(grad(sequence_nll), in_dims=(None, 0, None, None))(params, seqs, shared, reduction)
    print("nll_loss shared labels", reduction, round(g["2.weight"].sum().item(), 10),
          g["0.bias"].norm(dim=1))

# batched backward through the loss: each row of the Jacobian in one pass
logits = model(x)
losses = F.cross_entropy(logits, y, reduction="none", weight=weight)
(rows,) = torch.autograd.grad(losses, logits, torch.eye(5, dtype=torch.float64), is_grads_batched=True)
print("jacobian rows", rows.shape, round(rows.abs().sum().item(), 10))

# ops that pick elements by index, per sample
scores = torch.randn(4, 7, dtype=torch.float64)
top = vmap(lambda s: torch.topk(s, 3))(scores)
print("topk", top.values, top.indices)
print("kthvalue", vmap(lambda s: torch.kthvalue(s, 2))(scores))
print("median dim", vmap(lambda s: s.reshape(7, 1).median(0))(scores))
print("median", vmap(torch.median)(scores), vmap(torch.nanmedian)(scores))
print("cummax", vmap(lambda s: torch.cummax(s, 0))(scores).indices)
print("sort", vmap(lambda s: torch.sort(s, descending=True))(scores).indices)
print("take", vmap(lambda s: torch.take(s, torch.tensor([[0, -1], [3, 2]])))(scores))
fills = torch.tensor([10.0, 20.0, 30.0, 40.0], dtype=torch.float64)
print("index_fill", vmap(lambda s, v: s.reshape(7, 1).index_fill(0, torch.tensor([1, 5]), v))(scores, fills)[:, :, 0])
img = torch.randn(3, 2, 4, 4, dtype=torch.float64, requires_grad=True)
pooled, where = vmap(lambda a: F.max_pool2d(a, 2, return_indices=True))(img)
print("max_pool2d", pooled.shape, where[1])
(pool_grad,) = torch.autograd.grad(pooled.sum(), img)
print("max_pool2d grad", pool_grad.sum((1, 2, 3)))
print("adaptive_max_pool2d", vmap(lambda a: F.adaptive_max_pool2d(a, 2, return_indices=True))(img)[1][2])
frames = torch.randn(3, 5, 1, 4, dtype=torch.float64).log_softmax(-1)
print("ctc_loss", vmap(lambda lp: F.ctc_loss(lp, torch.tensor([[1, 2]]), (5,), (2,)))(frames))

# what vmap refuses
mask = scores > 0
try:
    vmap(torch.masked_select)(scores, mask)
except RuntimeError as e:
    print("masked_select:", e)
print("masked_select with a shared mask", vmap(lambda s: torch.masked_select(s, mask[0]))(scores))
try:
    vmap(F.gaussian_nll_loss)(scores, scores, scores.exp())
except RuntimeError as e:
    print("gaussian_nll_loss:", e)
try:
    vmap(lambda s: s.max().item())(scores)
except RuntimeError as e:
    print("item:", e)
