"""float32 attention written with einsum, masked_fill, softmax, layer norm; SGD with nesterov."""
import math
import torch
import torch.nn.functional as F

B, T, D, H = 2, 5, 8, 2
x = torch.sin(torch.arange(B * T * D, dtype=torch.float32) * 0.37).reshape(B, T, D)
Wq = (torch.cos(torch.arange(D * D, dtype=torch.float32) * 0.11) * 0.3).reshape(D, D).requires_grad_()
Wk = (torch.sin(torch.arange(D * D, dtype=torch.float32) * 0.13) * 0.3).reshape(D, D).requires_grad_()
Wv = (torch.cos(torch.arange(D * D, dtype=torch.float32) * 0.17) * 0.3).reshape(D, D).requires_grad_()
gamma = torch.ones(D, requires_grad=True)
opt = torch.optim.SGD([Wq, Wk, Wv, gamma], lr=0.1, momentum=0.9, nesterov=True)
causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
for step in range(10):
    q = torch.einsum("btd,de->bte", x, Wq).reshape(B, T, H, D // H)
    k = torch.einsum("btd,de->bte", x, Wk).reshape(B, T, H, D // H)
    v = torch.einsum("btd,de->bte", x, Wv).reshape(B, T, H, D // H)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(D // H)
    scores = scores.masked_fill(causal, float("-inf"))
    attn = scores.softmax(dim=-1)
    out = torch.einsum("bhqk,bkhd->bqhd", attn, v).reshape(B, T, D)
    out = F.layer_norm(out + x, (D,), weight=gamma)
    loss = (out[:, -1] - 0.5).pow(2).mean() + attn.diagonal(dim1=-2, dim2=-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.6f}")
print("attn row", attn[0, 0, 2])
print("gamma", gamma.detach())
