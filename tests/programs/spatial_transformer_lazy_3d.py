"""A spatial-transformer training step (affine_grid + grid_sample), a 3-D conv
autoencoder (Conv3d, ConvTranspose3d, MaxPool3d/MaxUnpool3d) built from lazy modules,
and an adaptive-softmax head, trained a few steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def fill(module, scale=0.2):
    with torch.no_grad():
        for i, (name, p) in enumerate(sorted(module.named_parameters())):
            p.copy_(torch.cos(torch.arange(p.numel(), dtype=p.dtype) * 0.37 + i).reshape(p.shape) * scale)


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(1, 4, 3), nn.MaxPool2d(2), nn.ReLU(), nn.Flatten(),
                                 nn.LazyLinear(6))
        self.head = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.Flatten(),
                                  nn.Linear(3 * 10 * 10, 4))

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3) + torch.tensor([[1., 0, 0], [0, 1., 0]])
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        warped = F.grid_sample(x, grid, padding_mode="border", align_corners=False)
        return self.head(warped), warped


images = torch.sin(torch.arange(3 * 1 * 10 * 10, dtype=torch.float64) * 0.07).reshape(3, 1, 10, 10)
labels = torch.tensor([0, 3, 1])
stn = STN().double()
stn(images)                                   # materializes the LazyLinear
print(stn.loc[4], stn.loc[4].weight.shape)
fill(stn)
opt = torch.optim.Adam(stn.parameters(), lr=0.01)
for step in range(3):
    opt.zero_grad()
    logits, warped = stn(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    opt.step()
    print("stn", step, round(loss.item(), 5), round(warped.sum().item(), 4),
          round(stn.loc[4].weight.grad.norm().item(), 5))
for mode in ["bilinear", "nearest", "bicubic"]:
    for pad in ["zeros", "reflection"]:
        grid = torch.tanh(torch.arange(2 * 4 * 5 * 2, dtype=torch.float64) * 0.3).reshape(2, 4, 5, 2) * 1.3
        out = F.grid_sample(images[:2], grid, mode=mode, padding_mode=pad, align_corners=True)
        print(mode, pad, out.shape, round(out.sum().item(), 4))


class AutoEncoder3d(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.LazyConv3d(4, 3, padding=1)
        self.bn = nn.LazyBatchNorm3d()
        self.pool = nn.MaxPool3d(2, return_indices=True)
        self.unpool = nn.MaxUnpool3d(2)
        self.dec = nn.LazyConvTranspose3d(2, 3, padding=1)
        self.up = nn.ConvTranspose3d(2, 1, 2, stride=2)

    def forward(self, x):
        h = F.relu(self.bn(self.enc(x)))
        p, idx = self.pool(h)
        h = self.unpool(p, idx)
        return self.up(F.avg_pool3d(torch.tanh(self.dec(h)), 2))


volume = torch.cos(torch.arange(2 * 1 * 4 * 4 * 4, dtype=torch.float64) * 0.13).reshape(2, 1, 4, 4, 4)
ae = AutoEncoder3d().double()
print(ae.enc, type(ae.dec).__name__)
ae(volume)
print(ae.enc, ae.bn, ae.dec)
fill(ae, 0.3)
ae.bn.reset_running_stats()
sgd = torch.optim.SGD(ae.parameters(), lr=0.05, momentum=0.9)
for step in range(3):
    sgd.zero_grad()
    loss = F.mse_loss(ae(volume), volume)
    loss.backward()
    sgd.step()
    print("ae", step, round(loss.item(), 6), round(ae.up.weight.grad.sum().item(), 6))
print(ae.bn.running_mean, ae.bn.num_batches_tracked)
print(list(ae.state_dict())[:4])

asm = nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 6], div_value=2.0)
fill(asm, 0.5)
features = torch.sin(torch.arange(5 * 8, dtype=torch.float32) * 0.21).reshape(5, 8)
out = asm(features, torch.tensor([0, 2, 4, 7, 9]))
out.loss.backward()
print(out.output, out.loss, asm.head.weight.grad.abs().sum())
print(asm.predict(features), asm.log_prob(features).exp().sum(1))
