"""Skip-gram with negative sampling on a toy corpus: sparse embedding gradients
(nn.Embedding(sparse=True), EmbeddingBag), SparseAdam and SGD on them, padding_idx and
max_norm; prints losses, the sparse gradients' structure and some rows."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
corpus = ("the cat sat on the mat the dog sat on the log the cat saw the dog "
          "a cat and a dog met on a mat").split()
vocab = ["<pad>"] + sorted(set(corpus))
index = {w: i for i, w in enumerate(vocab)}
ids = torch.tensor([index[w] for w in corpus])
V, D, WINDOW, NEG = len(vocab), 8, 2, 3
pairs = torch.tensor([(ids[i].item(), ids[j].item()) for i in range(len(ids))
                      for j in range(max(0, i - WINDOW), min(len(ids), i + WINDOW + 1)) if i != j])
print("vocab", V, "pairs", tuple(pairs.shape))


class SkipGram(nn.Module):
    def __init__(self):
        super().__init__()
        self.center = nn.Embedding(V, D, sparse=True, padding_idx=0)
        self.context = nn.Embedding(V, D, sparse=True)

    def forward(self, center, context, negatives):
        c = self.center(center)                                   # (B, D)
        pos = (c * self.context(context)).sum(-1)
        neg = torch.bmm(self.context(negatives), c.unsqueeze(2)).squeeze(2)
        return -(F.logsigmoid(pos).mean() + F.logsigmoid(-neg).sum(1).mean())


model = SkipGram()
print(model)
opt = torch.optim.SparseAdam(list(model.parameters()), lr=0.05)
for step in range(12):
    batch = pairs[(torch.arange(16) * 7 + step * 5) % len(pairs)]
    negatives = torch.randint(1, V, (16, NEG))
    loss = model(batch[:, 0], batch[:, 1], negatives)
    opt.zero_grad()
    loss.backward()
    if step == 0:
        g = model.center.weight.grad
        print("grad is_sparse:", g.is_sparse, g.layout, tuple(g.shape), g.dtype)
        gc = g.coalesce()
        print("coalesced:", gc.is_coalesced(), "nnz rows:", gc._indices().shape[1],
              "values", tuple(gc._values().shape))
        print("rows touched:", gc.indices()[0].tolist())
        dense = g.to_dense()
        print("dense grad row sums:", [f"{v:.5f}" for v in dense.sum(1)[:6].tolist()])
        print("padding row grad zero:", bool((dense[0] == 0).all()))
    opt.step()
    if step % 3 == 0 or step == 11:
        print(f"step {step:2d} loss {loss.item():.6f}")
print("adam state:", sorted(opt.state[model.center.weight].keys()),
      opt.state[model.center.weight]["step"])
print("row 'cat':", [f"{v:.5f}" for v in model.center.weight[index["cat"]].tolist()])

# plain SGD on sparse gradients, weight rows untouched elsewhere
sgd_model = SkipGram()
before = sgd_model.context.weight.detach().clone()
sgd = torch.optim.SGD(sgd_model.parameters(), lr=0.5)
loss = sgd_model(pairs[:8, 0], pairs[:8, 1], torch.randint(1, V, (8, NEG)))
loss.backward()
sgd.step()
changed = (sgd_model.context.weight.detach() != before).any(1)
print("SGD loss %.6f rows changed %d" % (loss.item(), int(changed.sum())))

# EmbeddingBag with sparse gradients and per-sample weights, offsets form
bag = nn.EmbeddingBag(V, 4, mode="sum", sparse=True)
offsets = torch.tensor([0, 3, 5])
flat = ids[:9]
weights = torch.linspace(0.5, 1.5, 9)
out = bag(flat, offsets, per_sample_weights=weights)
out.pow(2).sum().backward()
print("bag out", tuple(out.shape), [f"{v:.5f}" for v in out[0].tolist()])
bg = bag.weight.grad
print("bag grad sparse:", bg.is_sparse, "nnz", bg.coalesce()._nnz(),
      "sum %.5f" % bg.to_dense().sum().item())

# max_norm renormalises looked-up rows in place
emb = nn.Embedding(V, D, max_norm=1.0)
with torch.no_grad():
    emb.weight.mul_(3.0)
looked = emb(torch.tensor([1, 2, 2]))
print("norms after lookup:", [f"{v:.4f}" for v in looked.norm(dim=1).tolist()])
print("stored rows renormalised:", [f"{v:.4f}" for v in emb.weight[:4].norm(dim=1).tolist()])
F.embedding(torch.tensor([3]), emb.weight, max_norm=0.5, norm_type=1.0)
print("row 3 L1 norm: %.4f" % emb.weight[3].abs().sum().item())
try:
    torch.optim.Adam(model.parameters()).step()
    model.center.weight.grad = model.center.weight.grad  # keep sparse
    adam = torch.optim.Adam(model.parameters())
    adam.step()
except RuntimeError as e:
    print("RuntimeError:", e)
