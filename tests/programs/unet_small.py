"""A tiny U-Net: conv/pool down, interpolate + conv_transpose2d up, skip connections,
BCEWithLogits with pos_weight, Dice term, Adam with amsgrad, ReduceLROnPlateau."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def det(*shape, scale=1.0, phase=0.0):
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float64) * 0.7371 + phase) * scale).reshape(shape)


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.d1 = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.GroupNorm(2, 4), nn.SiLU())
        self.d2 = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.InstanceNorm2d(8, affine=True), nn.GELU())
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.mid = nn.Conv2d(8, 4, 3, padding=1, padding_mode="reflect")
        self.out = nn.Conv2d(4, 1, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        u = self.up(b) + F.interpolate(b[:, :4], scale_factor=2, mode="bilinear", align_corners=False)
        return self.out(self.mid(torch.cat([a, u], dim=1)))


net = UNet().double()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(det(*p.shape, scale=0.3, phase=float(i)))
opt = torch.optim.Adam(net.parameters(), lr=5e-3, amsgrad=True)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
x = det(4, 1, 8, 8, phase=0.3)
mask = (det(4, 1, 8, 8, phase=1.7) > 0.3).double()
bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0], dtype=torch.float64))
for epoch in range(12):
    logits = net(x)
    prob = torch.sigmoid(logits)
    dice = 1 - (2 * (prob * mask).sum() + 1) / (prob.sum() + mask.sum() + 1)
    loss = bce(logits, mask) + dice
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step(loss.item() if epoch < 6 else 10.0)
    print(f"epoch {epoch} loss {loss.item():.8f} lr {opt.param_groups[0]['lr']:.5f}")
print("iou", ((prob > 0.5).double() * mask).sum().item() / (((prob > 0.5).double() + mask) > 0).sum().item())
