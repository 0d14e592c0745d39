"""A small nn.Transformer (encoder-decoder) trained to reverse sequences: causal masks from
generate_square_subsequent_mask, key padding masks, then greedy decoding and a beam search
with topk / gather / index_select / masked_fill; plus a decoder-only nn.TransformerDecoder."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
V, D, PAD, BOS, EOS = 9, 16, 0, 1, 2


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(12, D) * 0.1)
        self.core = nn.Transformer(d_model=D, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                                   dim_feedforward=32, dropout=0.0, batch_first=True)
        self.head = nn.Linear(D, V)

    def embed(self, tokens):
        return self.emb(tokens) * math.sqrt(D) + self.pos[: tokens.size(1)]

    def encode(self, src, src_pad):
        return self.core.encoder(self.embed(src), src_key_padding_mask=src_pad)

    def decode(self, tgt, memory, src_pad):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        out = self.core.decoder(self.embed(tgt), memory, tgt_mask=mask, tgt_is_causal=True,
                                memory_key_padding_mask=src_pad)
        return self.head(out)

    def forward(self, src, tgt, src_pad, tgt_pad):
        mask = self.core.generate_square_subsequent_mask(tgt.size(1))
        out = self.core(self.embed(src), self.embed(tgt), tgt_mask=mask,
                        src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                        memory_key_padding_mask=src_pad)
        return self.head(out)


def batch():
    seqs = [[3, 4, 5, 6], [7, 8, 3], [5, 5, 6, 7], [8, 4]]
    L = 4
    src = torch.full((len(seqs), L), PAD)
    tgt_in = torch.full((len(seqs), L + 1), PAD)
    tgt_out = torch.full((len(seqs), L + 1), PAD)
    for i, s in enumerate(seqs):
        src[i, : len(s)] = torch.tensor(s)
        rev = list(reversed(s))
        tgt_in[i, : len(s) + 1] = torch.tensor([BOS] + rev)
        tgt_out[i, : len(s) + 1] = torch.tensor(rev + [EOS])
    return src, tgt_in, tgt_out


mask4 = nn.Transformer.generate_square_subsequent_mask(4)
print("causal mask", mask4.dtype, mask4.tolist())
src, tgt_in, tgt_out = batch()
src_pad, tgt_pad = src == PAD, tgt_in == PAD
model = Seq2Seq()
print("params", sum(p.numel() for p in model.parameters()))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(30):
    logits = model(src, tgt_in, src_pad, tgt_pad)
    loss = F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 10 == 0 or step == 29:
        print(f"step {step} loss {loss.item():.5f}")

model.eval()


@torch.no_grad()
def greedy(src, max_len=6):
    pad = src == PAD
    memory = model.encode(src, pad)
    ys = torch.full((src.size(0), 1), BOS)
    done = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_len):
        nxt = model.decode(ys, memory, pad)[:, -1].argmax(-1)
        nxt = nxt.masked_fill(done, PAD)
        ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
        done |= nxt == EOS
        if bool(done.all()):
            break
    return ys


@torch.no_grad()
def beam_search(src_row, k=3, max_len=6):
    pad = (src_row == PAD).unsqueeze(0)
    memory = model.encode(src_row.unsqueeze(0), pad)
    beams = torch.full((1, 1), BOS)
    scores = torch.zeros(1)
    finished = torch.zeros(1, dtype=torch.bool)
    for _ in range(max_len):
        n = beams.size(0)
        logp = F.log_softmax(model.decode(beams, memory.expand(n, -1, -1), pad.expand(n, -1))[:, -1], -1)
        # finished beams only extend with PAD at no cost
        logp = logp.masked_fill(finished.unsqueeze(1), float("-inf"))
        logp[:, PAD] = torch.where(finished, torch.zeros(n), torch.full((n,), float("-inf")))
        total = (scores.unsqueeze(1) + logp).reshape(-1)
        top, flat = total.topk(min(k, total.numel()))
        origin = torch.div(flat, V, rounding_mode="floor")
        token = flat % V
        beams = torch.cat([beams.index_select(0, origin), token.unsqueeze(1)], dim=1)
        finished = finished.gather(0, origin) | (token == EOS)
        scores = top
        if bool(finished.all()):
            break
    lengths = (beams != PAD).sum(1).float()
    best = (scores / lengths).argmax()
    return beams, scores, beams[best]


print("greedy", greedy(src).tolist())
beams, scores, best = beam_search(src[0])
print("beams", beams.tolist())
print("beam scores", [round(s, 4) for s in scores.tolist()])
print("best", best.tolist())

# decoder-only language model with nn.TransformerDecoder used as a stack of masked blocks
layer = nn.TransformerDecoderLayer(D, 2, 32, dropout=0.0, batch_first=True, norm_first=True,
                                   activation="gelu")
stack = nn.TransformerDecoder(layer, num_layers=2, norm=nn.LayerNorm(D))
x = torch.randn(2, 5, D, requires_grad=True)
mem = torch.randn(2, 3, D)
causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float32)
bool_causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
y1 = stack(x, mem, tgt_mask=causal)
y2 = stack(x, mem, tgt_mask=bool_causal, memory_key_padding_mask=torch.tensor([[False, False, True]] * 2))
print("decoder out", y1.shape, type(y1.grad_fn).__name__, round(y1.abs().sum().item(), 4),
      round(y2.norm().item(), 4))
probe = torch.linspace(-1, 1, D)
((y1 * probe).sum() + (y2[:, -1] * probe).square().sum()).backward()
print("input grad norm", round(x.grad.norm().item(), 5))
print("layers", len(stack.layers), [type(m).__name__ for m in stack.layers[0].children()][:4])
