"""A custom nn.Module with buffers, ParameterList/ModuleDict, activation checkpointing,
train/eval switches, named_modules and parameter freezing."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.set_default_dtype(torch.float64)


class Residual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.scales = nn.ParameterList([nn.Parameter(torch.full((dim,), 0.5)) for _ in range(2)])
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls += 1
        return x + self.scales[0] * torch.tanh(self.lin(x)) * self.scales[1]


class Net(nn.Module):
    def __init__(self, dim, depth, use_checkpoint):
        super().__init__()
        self.blocks = nn.ModuleList([Residual(dim) for _ in range(depth)])
        self.heads = nn.ModuleDict({"a": nn.Linear(dim, 1), "b": nn.Linear(dim, 2)})
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if self.use_checkpoint else block(x)
        return self.heads["a"](x).sum() + self.heads["b"](x).pow(2).sum()


def build(use_checkpoint):
    net = Net(4, 3, use_checkpoint)
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * 0.3 + 0.01 * i)
    return net


x = torch.linspace(-1, 1, 8).reshape(2, 4)
plain, ckpt = build(False), build(True)
for net in (plain, ckpt):
    loss = net(x)
    loss.backward()
    print("loss", loss.item(), "calls", [b.calls.item() for b in net.blocks])
grads_equal = all(torch.allclose(p.grad, q.grad) for p, q in zip(plain.parameters(), ckpt.parameters()))
print("checkpoint grads equal", grads_equal)
print("lin grad", ckpt.blocks[0].lin.weight.grad)
print([name for name, _ in plain.named_modules()])
print([name for name, _ in plain.named_buffers()])
print(len(list(plain.parameters())), sum(p.numel() for p in plain.parameters()))

# freeze the blocks, fine-tune the heads
for p in plain.blocks.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD([p for p in plain.parameters() if p.requires_grad], lr=0.01)
plain.zero_grad()
before = plain.blocks[0].lin.weight.clone()
loss = plain(x)
loss.backward()
opt.step()
print("frozen untouched", torch.equal(before, plain.blocks[0].lin.weight), plain.blocks[0].lin.weight.grad)
print("head grad", plain.heads["b"].bias.grad)
plain.eval()
print("training flags", plain.training, plain.blocks[1].training)
plain.apply(lambda m: m.train() if isinstance(m, Residual) else None)
print("after apply", plain.training, plain.blocks[1].training)
print(plain.blocks[0])
