"""MLP classifier: nn.Sequential (default init after manual_seed, Dropout), CrossEntropyLoss,
Adam, StepLR, shuffled batches (randperm), eval/no_grad accuracy."""
import torch
from torch import nn


torch.manual_seed(0)

t = torch.linspace(0, 1, 60)
X = torch.stack([torch.cos(6 * t) * t, torch.sin(6 * t) * t, t - 0.5], dim=1)
labels = (torch.arange(60) % 3)
X = X + 0.3 * labels.float().unsqueeze(1)

model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))
print(model)
opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(30):
    model.train()
    order = torch.randperm(60)
    for start in range(0, 60, 20):
        xb, yb = X[order[start:start + 20]], labels[order[start:start + 20]]
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
    sched.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.5f}")

model.eval()
with torch.no_grad():
    logits = model(X)
    pred = logits.argmax(dim=1)
    acc = (pred == labels).float().mean()
    probs = torch.softmax(logits[:4], dim=-1)
print("accuracy", acc.item())
print("probs", probs)
print("n params", sum(p.numel() for p in model.parameters() if p.requires_grad))
