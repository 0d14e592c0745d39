"""Toy speech recogniser: Conv1d + GRU acoustic model trained with CTC on synthetic
feature sequences, then greedy (best-path) decoding."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, FEATS, T, N = 5, 8, 20, 4          # class 0 is the blank


def synth_batch():
    # each symbol becomes a few frames of a noisy prototype vector
    protos = torch.randn(VOCAB, FEATS)
    targets = torch.randint(1, VOCAB, (N, 6))
    target_lengths = torch.tensor([6, 5, 4, 3])
    x = 0.3 * torch.randn(N, FEATS, T)
    input_lengths = torch.tensor([20, 18, 16, 12])
    for n in range(N):
        for j in range(int(target_lengths[n])):
            x[n, :, 3 * j + 1: 3 * j + 3] += protos[targets[n, j]].unsqueeze(1)
    return x, targets, input_lengths, target_lengths


class Acoustic(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(FEATS, 16, kernel_size=3, padding=1)
        self.gru = nn.GRU(16, 12, batch_first=True, bidirectional=True)
        self.out = nn.Linear(24, VOCAB)

    def forward(self, x):
        h = F.relu(self.conv(x)).transpose(1, 2)          # (N, T, C)
        h, _ = self.gru(h)
        return self.out(h).log_softmax(-1).transpose(0, 1)  # (T, N, C) as CTC wants


def greedy_decode(log_probs, lengths):
    best = log_probs.argmax(-1).transpose(0, 1)
    words = []
    for n in range(best.size(0)):
        seq, prev = [], 0
        for s in best[n, : int(lengths[n])].tolist():
            if s != prev and s != 0:
                seq.append(s)
            prev = s
        words.append(seq)
    return words


x, targets, in_len, tgt_len = synth_batch()
model = Acoustic()
ctc = nn.CTCLoss(blank=0, reduction="mean", zero_infinity=True)
print(ctc)
opt = torch.optim.Adam(model.parameters(), lr=0.04)
for step in range(28):
    lp = model(x)
    loss = ctc(lp, targets, in_len, tgt_len)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 7 == 0 or step == 27:
        print(f"step {step:2d} loss {loss.item():.5f}")

print("grad norms:", [f"{p.grad.norm().item():.4f}" for p in model.out.parameters()])
lp = model(x).detach()
print("log_probs", tuple(lp.shape), lp.dtype)
print("decoded:", greedy_decode(lp, in_len))
print("targets:", [targets[n, : int(tgt_len[n])].tolist() for n in range(N)])

# functional variants: reductions, tuple lengths, concatenated targets, float64
lp64 = lp.double().requires_grad_()
flat = torch.cat([targets[n, : int(tgt_len[n])] for n in range(N)])
for red in ("none", "sum", "mean"):
    l = F.ctc_loss(lp64, flat, tuple(in_len.tolist()), tuple(tgt_len.tolist()), reduction=red)
    print(red, l.dtype, [round(v, 4) for v in l.reshape(-1).tolist()])
l = F.ctc_loss(lp64, targets, in_len, tgt_len, reduction="sum")
l.backward()
print("grad_fn:", type(l.grad_fn).__name__, type(l.grad_fn.next_functions[0][0]).__name__)
print("dlp[0,0]:", [f"{v:.5f}" for v in lp64.grad[0, 0].tolist()])
print("dlp beyond length is zero:", bool((lp64.grad[12:, 3] == 0).all()))

# impossible alignment: target longer than input -> inf, or 0 with zero_infinity
short = torch.tensor([3, 3, 3, 3])
print("inf loss:", [round(v, 4) for v in F.ctc_loss(lp64, targets, short, tgt_len,
                                                   reduction="none").tolist()])
z = F.ctc_loss(lp64, targets, short, tgt_len, reduction="none", zero_infinity=True)
print("zero_infinity:", [round(v, 4) for v in z.tolist()], type(z.grad_fn).__name__)
gz, = torch.autograd.grad(z.sum(), lp64)
print("zeroed samples get no gradient:", bool((gz[:, :3] == 0).all()), f"{gz[:, 3].abs().sum().item():.4f}")
# other blank index
lp_b = torch.roll(lp64.detach(), shifts=-1, dims=2)
print("blank=4:", round(F.ctc_loss(lp_b, targets - 1, in_len, tgt_len, blank=VOCAB - 1).item(), 5))
# unbatched input (T, C) with a 1-D target
print("unbatched:", round(F.ctc_loss(lp64[:, 0].detach(), targets[0], in_len[:1], tgt_len[:1]).item(), 5))
