"""nn.functional vision/audio building blocks: conv1d/2d (stride, dilation, groups),
conv_transpose2d, pooling, padding modes, interpolate, unfold, pixel_shuffle."""
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
img = torch.sin(torch.arange(2 * 4 * 6 * 6) * 0.1).reshape(2, 4, 6, 6).requires_grad_()
w = torch.cos(torch.arange(6 * 2 * 3 * 3) * 0.2).reshape(6, 2, 3, 3).requires_grad_()
out = F.conv2d(img, w, bias=torch.tensor([0.1, -0.1, 0.2, 0.0, 0.3, -0.3]), stride=1, padding=2, dilation=2, groups=2)
print("grouped dilated conv", out.shape, out.sum().item())
wt = torch.linspace(-1, 1, 4 * 3 * 2 * 2).reshape(4, 3, 2, 2)
up = F.conv_transpose2d(img, wt, stride=2, padding=1, output_padding=1)
print("conv_transpose", up.shape, up.abs().sum().item())
sig = torch.linspace(-1, 1, 2 * 3 * 10).reshape(2, 3, 10).requires_grad_()
c1 = F.conv1d(sig, torch.ones(2, 3, 4) * 0.25, stride=2, padding="valid")
same = F.conv1d(sig, torch.ones(3, 3, 3) / 9, padding="same")
print("conv1d", c1.shape, c1[0], same.shape)
pools = [F.max_pool2d(img, 2), F.avg_pool2d(img, 3, stride=2, padding=1), F.adaptive_avg_pool2d(img, (2, 3)),
         F.adaptive_max_pool2d(img, 1), F.max_pool1d(sig, 3, stride=2), F.avg_pool1d(sig, 2),
         F.lp_pool2d(img, 2, 2)]
print("pools", [tuple(p.shape) for p in pools], [round(p.sum().item(), 8) for p in pools])
vals, idx = F.max_pool2d(img, 2, return_indices=True)
print("indices", idx[0, 0])
pads = [F.pad(sig, (1, 2), mode=m) for m in ("constant", "reflect", "replicate", "circular")]
print("pads", [p[0, 0].tolist() for p in pads])
ups = [F.interpolate(img, scale_factor=2, mode="nearest"), F.interpolate(img, size=(9, 9), mode="bilinear", align_corners=False),
       F.interpolate(img, size=(4, 5), mode="bilinear", align_corners=True), F.interpolate(sig, size=15, mode="linear")]
print("interp", [round(u.sum().item(), 8) for u in ups])
patches = F.unfold(img, kernel_size=2, stride=2)
print("unfold", patches.shape, F.fold(patches, (6, 6), kernel_size=2, stride=2).allclose(img))
ps = F.pixel_shuffle(img, 2)
print("pixel_shuffle", ps.shape, F.pixel_unshuffle(ps, 2).equal(img))
total = out.pow(2).mean() + up.mean() + c1.sum() + same.pow(2).sum() + sum(p.sum() for p in pools) + sum(u.mean() for u in ups) + ps.std()
total.backward()
print("img grad", img.grad.sum().item(), img.grad.abs().max().item(), img.grad[1, 2, 3])
print("w grad", w.grad[0, 0])
print("sig grad", sig.grad[1])
