"""nn.TransformerEncoder sequence classifier with padding masks, warmup schedule, gradient accumulation."""
import math
import torch
import torch.nn as nn


def det(*shape, scale=1.0, phase=0.0, dtype=torch.float64):
    # deterministic "random" values: generators differ between libraries
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float64) * 0.7371 + phase) * scale).reshape(shape).to(dtype)


def init_(model, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(det(*p.shape, scale=scale, phase=float(i)).to(p.dtype))


torch.manual_seed(4)
vocab, d, L = 20, 16, 7
emb = nn.Embedding(vocab, d, padding_idx=0)
layer = nn.TransformerEncoderLayer(d_model=d, nhead=4, dim_feedforward=32, dropout=0.0,
                                   batch_first=True, norm_first=True)
enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
head = nn.Linear(d, 2)
model = nn.ModuleList([emb, enc, head]).double()
init_(model)
with torch.no_grad():
    emb.weight[0].zero_()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 5))
tokens = (torch.arange(12 * L).reshape(12, L) * 7 % (vocab - 1)) + 1
lengths = torch.arange(12) % (L - 2) + 3
pad = torch.arange(L)[None, :] >= lengths[:, None]
tokens[pad] = 0
labels = (tokens.sum(1) % 2)
pos = torch.zeros(L, d, dtype=torch.float64)
position = torch.arange(L, dtype=torch.float64).unsqueeze(1)
div = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
pos[:, 0::2] = torch.sin(position * div)
pos[:, 1::2] = torch.cos(position * div)
for step in range(8):
    opt.zero_grad()
    for half in (slice(0, 6), slice(6, 12)):
        x = emb(tokens[half]) * math.sqrt(d) + pos
        h = enc(x, src_key_padding_mask=pad[half])
        mask = (~pad[half]).unsqueeze(-1).double()
        pooled = (h * mask).sum(1) / mask.sum(1)
        loss = nn.functional.cross_entropy(head(pooled), labels[half]) / 2
        loss.backward()
    opt.step()
    sched.step()
    print(f"step {step} loss {loss.item() * 2:.6f}")
