"""A GRU encoder-decoder (float32) with teacher forcing, Embedding, LogSoftmax + NLLLoss,
clip_grad_value_, Adagrad."""
import torch
import torch.nn as nn

V, H, T = 7, 12, 6
enc_emb, dec_emb = nn.Embedding(V, H), nn.Embedding(V, H)
encoder = nn.GRU(H, H, batch_first=True)
decoder = nn.GRUCell(H, H)
proj = nn.Linear(H, V)
mods = nn.ModuleList([enc_emb, dec_emb, encoder, decoder, proj])
with torch.no_grad():
    for i, p in enumerate(mods.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.61 + i).reshape(p.shape) * 0.35)
opt = torch.optim.Adagrad(mods.parameters(), lr=0.1, lr_decay=0.01)
src = (torch.arange(4 * T).reshape(4, T) * 3) % (V - 1) + 1
tgt = torch.flip(src, dims=[1])
logsm, nll = nn.LogSoftmax(dim=-1), nn.NLLLoss()
for epoch in range(15):
    _, h = encoder(enc_emb(src))
    h = h[0]
    inp = torch.zeros(4, dtype=torch.long)
    loss = 0
    for t in range(T):
        h = decoder(dec_emb(inp), h)
        loss = loss + nll(logsm(proj(h)), tgt[:, t])
        inp = tgt[:, t]
    opt.zero_grad()
    (loss / T).backward()
    nn.utils.clip_grad_value_(mods.parameters(), 0.5)
    opt.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch} loss {loss.item() / T:.5f}")
with torch.no_grad():
    _, h = encoder(enc_emb(src[:1]))
    h, inp, out = h[0], torch.zeros(1, dtype=torch.long), []
    for t in range(T):
        h = decoder(dec_emb(inp), h)
        inp = proj(h).argmax(-1)
        out.append(inp.item())
print("greedy", out, "target", tgt[0].tolist())
