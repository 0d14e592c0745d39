"""Embedding + self-attention block: MultiheadAttention, LayerNorm, residuals, masks."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def fill_(module):
    with torch.no_grad():
        for i, (name, p) in enumerate(sorted(module.named_parameters())):
            p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float64) * 0.29 + i).reshape(p.shape) * 0.25)


class Block(nn.Module):
    def __init__(self, vocab, dim, heads):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.ln2 = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.emb(tokens)
        T = tokens.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        a, w = self.attn(x, x, x, attn_mask=causal, key_padding_mask=tokens == 0)
        x = self.ln1(x + a)
        x = self.ln2(x + self.ff(x))
        return self.out(x), w


def manual_attention(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(mask, float("-inf"))
    return F.softmax(scores, dim=-1) @ v


block = Block(vocab=7, dim=8, heads=2)
fill_(block)
tokens = torch.tensor([[3, 1, 4, 1, 5], [2, 6, 5, 3, 0]])
logits, weights = block(tokens)
print("attn weights", weights[0])
loss = F.cross_entropy(logits[:, :-1].reshape(-1, 7), tokens[:, 1:].reshape(-1), ignore_index=0)
loss.backward()
print("loss", loss.item())
print("emb grad row 0", block.emb.weight.grad[0])
print("emb grad norm", block.emb.weight.grad.norm().item())
print("ln1 grad", block.ln1.weight.grad)

q = torch.linspace(-1, 1, 2 * 4 * 3).reshape(2, 4, 3).requires_grad_()
mask = torch.triu(torch.ones(4, 4, dtype=torch.bool), 1)
o1 = manual_attention(q, q * 0.5, q + 1, mask)
o2 = F.scaled_dot_product_attention(q, q * 0.5, q + 1, is_causal=True)
print("sdpa matches", torch.allclose(o1, o2))
o1.sum().backward()
print("q grad", q.grad[1])
