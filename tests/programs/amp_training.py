"""Mixed precision on the CPU: an MLP and a small CNN (with BatchNorm) trained under
torch.autocast("cpu", dtype=torch.bfloat16) with a GradScaler. A corrupted batch (a NaN)
makes the scaler skip that step and back off; clean steps grow the scale again.
Weights and inputs are multiples of 1/16 so that bfloat16 products are exact."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def fill_(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((((k * 7 + i * 3) % 9) - 4).reshape(p.shape) / 16)


mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
fill_(mlp)
x = ((torch.arange(64, dtype=torch.float32) * 5 % 11) - 5).reshape(8, 8) / 8
y = torch.tensor([0, 1, 2, 3, 3, 2, 1, 0])
opt = torch.optim.SGD(mlp.parameters(), lr=0.125)
scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
for step in range(8):
    batch = x.clone()
    if step == 3:
        batch[0, 0] = float("nan")                 # a corrupted batch
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = mlp(batch)
        loss = F.cross_entropy(logits, y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print(f"mlp step {step} loss {loss.item():.6f} logits {logits.dtype} loss {loss.dtype} "
          f"scale {scaler.get_scale()} grad {mlp[0].weight.grad.dtype}")
print("mlp weight sum", round(mlp[0].weight.sum().item(), 6), mlp[0].weight.dtype)
print("scaler state", scaler.state_dict())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 3 * 3, 3)

    def forward(self, img):
        h = F.max_pool2d(F.relu(self.bn(self.conv(img))), 2)
        return self.fc(torch.flatten(h, 1))


net = Net()
fill_(net)
images = ((torch.arange(2 * 36, dtype=torch.float32) * 3 % 7) - 3).reshape(2, 1, 6, 6) / 4
labels = torch.tensor([2, 0])
opt = torch.optim.SGD(net.parameters(), lr=0.0625, momentum=0.5)
scaler = torch.amp.GradScaler("cpu", init_scale=256.0, growth_factor=4.0, growth_interval=1)


@torch.autocast("cpu")
def train_step(img):
    return F.cross_entropy(net(img), labels)


for step in range(4):
    opt.zero_grad()
    loss = train_step(images)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    norm = torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=10.0)
    scaler.step(opt)
    scaler.update()
    print(f"cnn step {step} loss {loss.item():.6f} grad norm {norm.item():.6f} "
          f"scale {scaler.get_scale()}")
with torch.autocast("cpu"):
    out = net(images)
    with torch.autocast("cpu", enabled=False):
        full = net(images)
print("eval", out.dtype, full.dtype, torch.is_autocast_enabled("cpu"))
print("bn running mean", [round(v, 4) for v in net.bn.running_mean.tolist()], net.bn.running_mean.dtype)
print("cnn out", [round(v, 4) for v in out.float().flatten().tolist()])
