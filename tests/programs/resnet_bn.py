"""A small ResNet with BatchNorm, Dropout, AdamW, cosine annealing with warm restarts, grad clipping."""
import torch
import torch.nn as nn
import torch.nn.functional as F


torch.manual_seed(3)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.blocks = nn.Sequential(Block(8), Block(8))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(self.drop(torch.flatten(self.pool(x), 1)))


net = Net().double()              # torch's default initialization, seeded
opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-2)
sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2)
xs = torch.randn(24, 1, 8, 8, dtype=torch.float64)
ys = torch.arange(24) % 3
for epoch in range(12):
    net.train()
    for i in range(0, 24, 8):
        opt.zero_grad()
        loss = F.cross_entropy(net(xs[i:i + 8]), ys[i:i + 8], label_smoothing=0.1)
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
    sched.step()
    if epoch % 4 == 0:
        print(f"epoch {epoch} loss {loss.item():.6f} lr {sched.get_last_lr()[0]:.6f}")
net.eval()
with torch.no_grad():
    acc = (net(xs).argmax(1) == ys).double().mean()
print("train acc", acc.item())
print("running mean", net.stem[1].running_mean[:3])
print("num batches tracked", net.stem[1].num_batches_tracked.item())
