"""A tabular classifier as written for Kaggle-style data: categorical columns through
nn.Embedding, numeric columns through BatchNorm1d, weight-normed hidden layer,
AdamW with ReduceLROnPlateau, gradient value clipping, early stopping on validation
loss with the best state_dict restored, and parameters_to_vector snapshots."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.nn.utils.parametrizations import weight_norm
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
N = 600
cat_cards = [5, 8, 3]
cats = torch.stack([torch.randint(0, c, (N,)) for c in cat_cards], dim=1)
nums = torch.randn(N, 4) * torch.tensor([1.0, 10.0, 0.1, 3.0]) + torch.tensor([0.0, 50.0, 1.0, -2.0])
effect = torch.tensor([0.5, -1.0, 0.3, 0.8, -0.2])[cats[:, 0]] + 0.3 * (cats[:, 1] % 3 == 0).float()
logit = effect + 0.08 * (nums[:, 1] - 50) - 2.0 * (nums[:, 2] - 1) + 0.1 * torch.randn(N)
y = (logit > 0).long()
train, val = slice(0, 450), slice(450, N)


class TabularNet(nn.Module):
    def __init__(self, cards, n_num, emb_dim=3, hidden=16):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(c, min(emb_dim, (c + 1) // 2)) for c in cards])
        emb_total = sum(e.embedding_dim for e in self.embs)
        self.bn_num = nn.BatchNorm1d(n_num)
        self.hidden = weight_norm(nn.Linear(emb_total + n_num, hidden))
        self.bn_hidden = nn.BatchNorm1d(hidden)
        self.drop = nn.Dropout(0.1)
        self.out = nn.Linear(hidden, 2)

    def forward(self, cat, num):
        e = torch.cat([emb(cat[:, i]) for i, emb in enumerate(self.embs)], dim=1)
        h = torch.cat([e, self.bn_num(num)], dim=1)
        # BatchNorm after the activation: a bias right before BatchNorm gets a gradient
        # that is zero up to rounding, which Adam would blow up into noise-driven steps
        h = self.drop(self.bn_hidden(F.relu(self.hidden(h))))
        return self.out(h)


model = TabularNet(cat_cards, 4)
print(model)
print("parameters", sum(p.numel() for p in model.parameters()),
      [n for n, _ in model.named_parameters()][:6])
opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=1e-3)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2)
loader = DataLoader(TensorDataset(cats[train], nums[train], y[train]), batch_size=64, shuffle=True)

best_loss, best_state, bad_epochs, patience = float("inf"), None, 0, 4
start_vec = parameters_to_vector(model.parameters()).detach().clone()
for epoch in range(30):
    model.train()
    total = 0.0
    for c, x, t in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(c, x), t)
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)
        opt.step()
        total += loss.item() * len(t)
    model.eval()
    with torch.no_grad():
        logits = model(cats[val], nums[val])
        val_loss = F.cross_entropy(logits, y[val]).item()
        acc = (logits.argmax(1) == y[val]).float().mean().item()
    sched.step(val_loss)
    print(f"epoch {epoch:2d} train {total / 450:.4f} val {val_loss:.4f} acc {acc:.3f} "
          f"lr {opt.param_groups[0]['lr']:.4f}")
    if val_loss < best_loss - 1e-4:
        best_loss, best_state, bad_epochs = val_loss, copy.deepcopy(model.state_dict()), 0
    else:
        bad_epochs += 1
        if bad_epochs >= patience:
            print("early stop at epoch", epoch)
            break

model.load_state_dict(best_state)
model.eval()
with torch.no_grad():
    print("restored best val loss", round(F.cross_entropy(model(cats[val], nums[val]), y[val]).item(), 4),
          "best", round(best_loss, 4))
vec = parameters_to_vector(model.parameters())
print("distance travelled", round((vec - start_vec).norm().item(), 4), "numel", vec.numel())
print("bn running mean", model.bn_num.running_mean, "batches", model.bn_num.num_batches_tracked.item())
print("embedding 0", model.embs[0].weight)
print("weight_norm g", model.hidden.parametrizations.weight.original0.flatten()[:4])

# round-trip through a flat vector: zero everything, then restore
vector_to_parameters(torch.zeros_like(vec), model.parameters())
print("zeroed sum", sum(p.abs().sum().item() for p in model.parameters()))
vector_to_parameters(vec, model.parameters())
with torch.no_grad():
    probs = F.softmax(model(cats[val][:5], nums[val][:5]), dim=1)
print("first val probabilities", probs)
