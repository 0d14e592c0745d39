"""A 1-D/3-D and transposed-convolution model with upsampling and reflect/replicate
padding, trained for a few steps: losses, gradient norms, a double-backward penalty and
the grad_fn names of every layer's output, which must be the reference's nodes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1d = nn.Conv1d(2, 4, 3, padding="same", padding_mode="reflect")
        self.up1d = nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1)
        self.conv3d = nn.Conv3d(2, 3, 2, padding=1, groups=1, dilation=(1, 2, 1))
        self.up3d = nn.ConvTranspose3d(3, 2, 2, stride=2, groups=1)
        self.conv2d = nn.Conv2d(2, 4, 3, padding=1, padding_mode="replicate")
        self.up2d = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.head = nn.Linear(6, 3)

    def forward(self, seq, vol, img, trace=None):
        steps = []
        a = F.pad(seq, (2, 1), mode="reflect"); steps.append(("reflect1d", a))
        a = self.conv1d(a); steps.append(("conv1d", a))
        a = self.up1d(torch.tanh(a)); steps.append(("conv_transpose1d", a))
        a = F.interpolate(a, scale_factor=1.5, mode="linear"); steps.append(("linear", a))
        a = F.interpolate(a, size=7, mode="nearest-exact"); steps.append(("nearest-exact", a))
        b = self.conv3d(F.pad(vol, (1, 0, 0, 1, 1, 1), mode="replicate")); steps.append(("conv3d", b))
        b = self.up3d(F.relu(b)); steps.append(("conv_transpose3d", b))
        b = F.interpolate(b, scale_factor=(0.5, 1, 0.7), mode="trilinear"); steps.append(("trilinear", b))
        b = F.interpolate(b, size=(3, 2, 2)); steps.append(("nearest3d", b))
        c = self.conv2d(img); steps.append(("conv2d", c))
        c = F.pad(c, (1, 1, 0, 2), mode="reflect"); steps.append(("reflect2d", c))
        c = self.up2d(F.silu(c)); steps.append(("conv_transpose2d", c))
        c = F.interpolate(c, size=(5, 6), mode="bicubic", align_corners=True); steps.append(("bicubic", c))
        c = nn.UpsamplingBilinear2d(scale_factor=2)(c); steps.append(("upsampling_bilinear", c))
        c = nn.Upsample(scale_factor=0.5, mode="nearest")(c); steps.append(("upsample_nearest", c))
        if trace is not None:
            trace.extend((name, type(t.grad_fn).__name__) for name, t in steps)
        feats = torch.stack([a.mean((1, 2)), a.std((1, 2)), b.mean((1, 2, 3, 4)),
                             b.amax((1, 2, 3, 4)), c.mean((1, 2, 3)), c.std((1, 2, 3))], 1)
        return self.head(feats)


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.5, momentum=0.9)
seq, vol, img = torch.randn(3, 2, 6, requires_grad=True), torch.randn(3, 2, 3, 2, 3), torch.randn(3, 2, 4, 5)
target = torch.tensor([0, 2, 1])
for step in range(3):
    trace = []
    img_in = img.clone().requires_grad_()
    loss = F.cross_entropy(net(seq, vol, img_in, trace if step == 0 else None), target)
    # a gradient penalty: double backward through every conv, upsample and pad node
    g, = torch.autograd.grad(loss, img_in, create_graph=True)
    total = loss + 0.1 * g.pow(2).sum()
    opt.zero_grad()
    total.backward()
    grads = [f"{p.grad.norm().item():.3g}" for p in net.parameters()]
    opt.step()
    if step == 0:
        for name, node in trace:
            print(name, node)
    print(f"step {step} loss {loss.item():.5f} penalty {g.pow(2).sum().item():.5g} grads {grads}")
with torch.no_grad():
    print("eval", [f"{v:.3g}" for v in net(seq, vol, img)[0].tolist()])
