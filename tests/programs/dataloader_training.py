"""A training loop over DataLoader(TensorDataset) with an nn model and an optimizer
(shuffle=False: the two libraries' random streams differ), random_split with fixed
fractions (sizes and order-independent sums), and the loaders' lengths and errors."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

X = torch.linspace(-1.0, 1.0, 60).reshape(30, 2)
y = (X[:, :1] * 1.5 - X[:, 1:] * 0.5 + 0.25).reshape(30, 1)
dataset = TensorDataset(X, y)
print("len", len(dataset), "sample", dataset[3])

model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
opt = torch.optim.Adam(model.parameters(), lr=0.02)
loader = DataLoader(dataset, batch_size=8)
print("batches", len(loader), len(DataLoader(dataset, batch_size=8, drop_last=True)))
for epoch in range(5):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * len(xb)
    print(f"epoch {epoch} loss {total / len(dataset):.8f}")
print("last batch shapes", xb.shape, yb.shape, xb.dtype)

torch.manual_seed(0)
train, val, test = random_split(dataset, [0.5, 0.3, 0.2])
print("split sizes", len(train), len(val), len(test))
print("disjoint cover", sorted(train.indices + val.indices + test.indices) == list(range(30)))
print("sum of squares", round(sum(float((val[i][0] ** 2).sum()) for i in range(len(val)))
                              + sum(float((t[0] ** 2).sum()) for t in train)
                              + sum(float((t[0] ** 2).sum()) for t in test), 5))
parts = random_split(range(10), [0.33, 0.33, 0.34], generator=torch.Generator().manual_seed(1))
print("uneven fractions", [len(p) for p in parts])
print("counts", [len(p) for p in random_split(range(7), [3, 4])])
for lengths in ([3, 3], [0.5, -0.5, 1.0]):
    try:
        random_split(range(7), lengths)
    except ValueError as e:
        print("ValueError:", e)
try:
    TensorDataset(torch.zeros(3), torch.zeros(4))
except AssertionError as e:
    print("AssertionError:", e)

shuffled = DataLoader(dataset, batch_size=7, shuffle=True, generator=torch.Generator().manual_seed(3))
seen = torch.cat([yb for _, yb in shuffled])
print("shuffled covers", seen.shape, round(float(seen.sum()), 6), round(float(y.sum()), 6))
with torch.no_grad():
    full = DataLoader(dataset, batch_size=None)
    print("unbatched", len(full), next(iter(full)))
