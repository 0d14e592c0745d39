"""A sequence model written against torch's top-level ATen kernels, as traced or exported
code calls them: torch.lstm over a flat parameter list, torch.native_layer_norm, the
int-enum losses (kl_div, binary_cross_entropy_with_logits, margin_ranking_loss), conv_tbc
and constant_pad_nd, segment_reduce pooling, cond/while_loop, and svd_lowrank for a
low-rank look at the trained weights."""
import torch

torch.manual_seed(0)
T, N, H_IN, H = 6, 4, 3, 5
x = torch.randn(T, N, H_IN)
target = torch.rand(N, 2)
lstm = torch.nn.LSTM(H_IN, H, num_layers=2)
head_w = torch.randn(2, H, requires_grad=True)
conv_w = torch.randn(3, H_IN, H_IN, requires_grad=True)
conv_b = torch.zeros(H_IN, requires_grad=True)
params = list(lstm.parameters()) + [head_w, conv_w, conv_b]
opt = torch.optim.SGD(params, lr=0.05)

for step in range(5):
    smoothed = torch.conv_tbc(x, conv_w, conv_b, 1)                  # (T, N, H_IN)
    h0 = torch.zeros(2, N, H)
    out, h_n, c_n = torch.lstm(smoothed, [h0, h0], list(lstm.parameters()), True, 2, 0.0,
                               True, False, False)
    normed, mean, rstd = torch.native_layer_norm(out, [H], None, None, 1e-5)
    pooled = torch.segment_reduce(normed, "mean", lengths=torch.tensor([2, 4]), axis=0)
    logits = pooled[-1] @ head_w.t()
    bce = torch.binary_cross_entropy_with_logits(logits, target, None, None, 1)
    kl = torch.kl_div(logits.log_softmax(-1), target.softmax(-1), 2)
    rank = torch.margin_ranking_loss(logits[:, 0], logits[:, 1], torch.ones(N), 0.1, 1)
    loss = torch.cond(step < 3, lambda a, b, c: a + b + c, lambda a, b, c: a + 0.5 * (b + c),
                      (bce, kl, rank))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.6f} bce {bce.item():.6f} kl {kl.item():.6f} "
          f"rank {rank.item():.6f} rstd[0] {rstd[0, 0, 0].item():.5f}")

padded = torch.constant_pad_nd(h_n[-1].detach(), [1, 1], -1.0)
print("padded state", padded.shape, padded[0].tolist()[:3])
steps, total = torch.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 0.5 + 1.0),
                                (0, torch.zeros(2)))
print("while_loop", steps, total)
with torch.no_grad():
    weight = lstm.weight_hh_l0
    U, S, V = torch.svd_lowrank(weight, q=3)
    print("top singular values", [round(s, 5) for s in S.tolist()])
    print("rank-3 residual", round(((U * S) @ V.t() - weight).norm().item() / weight.norm().item(), 5))
    cell_h, cell_c = torch.lstm_cell(x[0], [h0[0], h0[0]], lstm.weight_ih_l0, lstm.weight_hh_l0,
                                     lstm.bias_ih_l0, lstm.bias_hh_l0)
    print("one cell step", cell_h.shape, round(cell_c.abs().sum().item(), 5))
