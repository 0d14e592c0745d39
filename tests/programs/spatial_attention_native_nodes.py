"""A spatial transformer feeding an attention head, trained a few steps: grid_sample
records GridSampler2DBackward0 / GridSampler3DBackward0 (every mode and padding),
scaled_dot_product_attention the fused CPU node on 4-D inputs of one head size (causal,
boolean and float masks, grouped-query heads) and the math path elsewhere; a query
that may attend to nothing reads 0. Prints losses, gradient norms and node names."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def fill(module, scale=0.2):
    with torch.no_grad():
        for i, (name, p) in enumerate(sorted(module.named_parameters())):
            p.copy_(torch.cos(torch.arange(p.numel(), dtype=p.dtype) * 0.37 + i).reshape(p.shape) * scale)


def node(t):
    return type(t.grad_fn).__name__


class WarpAttend(nn.Module):
    """Warp the image (affine grid + a learned offset field), cut it into patch tokens,
    run multi-head self-attention over them with sdpa, classify."""

    def __init__(self, heads=2, dim=8, classes=3):
        super().__init__()
        self.loc = nn.Linear(64, 6)
        self.offset = nn.Parameter(torch.zeros(1, 8, 8, 2))
        self.embed = nn.Linear(4, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, classes)
        self.heads = heads

    def forward(self, x, mode, pad, mask=None, causal=False):
        theta = self.loc(x.flatten(1)).view(-1, 2, 3) + torch.tensor([[1., 0, 0], [0, 1., 0]])
        grid = F.affine_grid(theta, x.size(), align_corners=False) + 0.1 * torch.tanh(self.offset)
        warped = F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=False)
        tokens = F.unfold(warped, 2, stride=2).transpose(1, 2)           # (N, 16, 4)
        h = self.embed(tokens)
        n, length, dim = h.shape
        q, k, v = self.qkv(h).view(n, length, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        pooled = a.transpose(1, 2).reshape(n, length, dim).mean(1)
        return self.out(pooled), warped, a


images = torch.sin(torch.arange(4 * 1 * 8 * 8, dtype=torch.float64) * 0.11).reshape(4, 1, 8, 8)
labels = torch.tensor([0, 2, 1, 2])
keep = torch.cos(torch.arange(16 * 16, dtype=torch.float64)).reshape(16, 16) > -0.5
keep[3] = False                                   # token 3 may attend to nothing
model = WarpAttend()
fill(model)
opt = torch.optim.Adam(model.parameters(), lr=0.02)
settings = [("bilinear", "zeros", None, False), ("bicubic", "reflection", keep, False),
            ("nearest", "border", None, True), ("bilinear", "reflection", keep, False)]
for step, (mode, pad, mask, causal) in enumerate(settings * 2):
    opt.zero_grad()
    logits, warped, a = model(images, mode, pad, mask, causal)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    opt.step()
    print(step, mode, pad, node(warped), node(a), round(loss.item(), 8),
          round(model.offset.grad.norm().item(), 8), round(model.loc.weight.grad.norm().item(), 8),
          round(model.qkv.weight.grad.norm().item(), 8))
    if mask is not None:
        print("  token 3 reads", a[:, :, 3].abs().max().item())

# grouped-query heads and a float mask on the fused node; the math path elsewhere
q = torch.sin(torch.arange(2 * 4 * 5 * 3, dtype=torch.float64)).reshape(2, 4, 5, 3).requires_grad_()
kv = torch.cos(torch.arange(2 * 2 * 6 * 3, dtype=torch.float64)).reshape(2, 2, 6, 3).requires_grad_()
bias = torch.sin(torch.arange(30, dtype=torch.float64)).reshape(5, 6)
for kwargs in [dict(enable_gqa=True), dict(attn_mask=bias, scale=0.5)]:
    y = F.scaled_dot_product_attention(q if "enable_gqa" in kwargs else q[:, :2], kv, kv, **kwargs)
    gq, gkv = torch.autograd.grad((y * y).sum(), (q, kv))
    print(node(y), [type(f).__name__ for f, _ in y.grad_fn.next_functions],
          round(y.sum().item(), 8), round(gq.norm().item(), 8), round(gkv.norm().item(), 8))
y3 = F.scaled_dot_product_attention(q[0], kv[0, 0], kv[0, 0], attn_mask=keep[:5, :6])
print("3-D inputs: math path", round(y3.sum().item(), 8),
      round(torch.autograd.grad(y3.sum(), q)[0].norm().item(), 8))

# a volume warped by a 3-D grid, every padding, and the nearest mode's zero grid gradient
volume = torch.cos(torch.arange(2 * 2 * 3 * 4 * 5, dtype=torch.float64) * 0.3).reshape(2, 2, 3, 4, 5)
grid3 = (torch.sin(torch.arange(2 * 2 * 3 * 2 * 3, dtype=torch.float64)) * 1.2).reshape(2, 2, 3, 2, 3)
grid3.requires_grad_()
for mode in ["bilinear", "nearest"]:
    for pad in ["zeros", "border", "reflection"]:
        out = F.grid_sample(volume, grid3, mode=mode, padding_mode=pad, align_corners=True)
        (g,) = torch.autograd.grad((out * out).sum(), grid3)
        print(node(out), mode, pad, round(out.sum().item(), 8), round(g.abs().sum().item(), 8))
