"""A word-level LSTM language model: variable-length sentences padded with pad_sequence,
packed with pack_padded_sequence(enforce_sorted=False), unpacked with pad_packed_sequence,
tied input/output embeddings, dropout between layers, gradient clipping, perplexity,
truncated BPTT with detached hidden state, and sampling with a temperature."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import (pack_padded_sequence, pad_packed_sequence, pad_sequence,
                                pack_sequence, unpad_sequence, unpack_sequence)

torch.manual_seed(0)
text = ("the cat sat on the mat . the dog sat on the log . a cat saw a dog . "
        "the dog saw the cat on the mat .")
words = sorted(set(text.split()))
vocab = {w: i + 1 for i, w in enumerate(words)}   # 0 is padding
V = len(vocab) + 1
sentences = [s.split() + ["."] for s in text.split(" . ") if s.strip(" .")]
ids = [torch.tensor([vocab[w] for w in s]) for s in sentences]
print("vocab", V, "sentences", [len(s) for s in ids])


class LM(nn.Module):
    def __init__(self, d=12, layers=2):
        super().__init__()
        self.emb = nn.Embedding(V, d, padding_idx=0)
        self.rnn = nn.LSTM(d, d, num_layers=layers, dropout=0.1, batch_first=True)
        self.drop = nn.Dropout(0.1)
        self.out = nn.Linear(d, V)
        self.out.weight = self.emb.weight                 # tied embeddings

    def forward(self, tokens, lengths, state=None):
        packed = pack_padded_sequence(self.drop(self.emb(tokens)), lengths, batch_first=True,
                                      enforce_sorted=False)
        out, state = self.rnn(packed, state)
        out, out_lengths = pad_packed_sequence(out, batch_first=True, padding_value=0.0,
                                               total_length=tokens.size(1))
        return self.out(self.drop(out)), state, out_lengths


model = LM()
print("tied", model.out.weight is model.emb.weight, "params", sum(p.numel() for p in model.parameters()))
inputs = pad_sequence([s[:-1] for s in ids], batch_first=True)
targets = pad_sequence([s[1:] for s in ids], batch_first=True, padding_value=-100)
lengths = torch.tensor([len(s) - 1 for s in ids])
print("padded", inputs.shape, targets[1].tolist())
opt = torch.optim.Adam(model.parameters(), lr=0.03)
for epoch in range(15):
    model.train()
    logits, (h, c), out_len = model(inputs, lengths)
    loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=-100)
    opt.zero_grad()
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    opt.step()
    if epoch % 5 == 0 or epoch == 14:
        print(f"epoch {epoch} loss {loss.item():.5f} ppl {math.exp(loss.item()):.4f} "
              f"grad {gnorm.item():.4f} h {tuple(h.shape)} lengths {out_len.tolist()}")

model.eval()
with torch.no_grad():
    logits, _, _ = model(inputs, lengths)
    nll = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction="sum", ignore_index=-100)
    count = (targets != -100).sum()
    print("eval ppl", round(math.exp(nll.item() / count.item()), 4), "tokens", count.item())
    token_ll = -F.cross_entropy(logits.transpose(1, 2), targets.clamp(min=0), reduction="none")
    print("per-sentence nll", [round(v, 4) for v in (-(token_ll * (targets != -100))).sum(1).tolist()])

# packed sequence structure
packed = pack_sequence([s.float() for s in ids], enforce_sorted=False)
print("packed", packed.data.shape, packed.batch_sizes.tolist(), packed.sorted_indices.tolist(),
      packed.unsorted_indices.tolist())
print("unpacked", [t.shape[0] for t in unpack_sequence(packed)])
print("unpadded", [t.tolist()[:3] for t in unpad_sequence(inputs, lengths, batch_first=True)][:2])

# truncated BPTT over one long stream with a detached carried state
stream = torch.cat(ids)
bptt, state, losses = 6, None, []
lstm = nn.LSTM(8, 16, batch_first=True)
emb = nn.Embedding(V, 8)
head = nn.Linear(16, V)
params = list(lstm.parameters()) + list(emb.parameters()) + list(head.parameters())
opt = torch.optim.SGD(params, lr=0.5)
for i in range(0, stream.numel() - 1, bptt):
    x = stream[i:i + bptt].unsqueeze(0)
    y = stream[i + 1:i + 1 + bptt].unsqueeze(0)
    x = x[:, : y.size(1)]
    if state is not None:
        state = tuple(s.detach() for s in state)
    out, state = lstm(emb(x), state)
    loss = F.cross_entropy(head(out).flatten(0, 1), y.flatten())
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(params, 1.0)
    opt.step()
    losses.append(round(loss.item(), 4))
print("tbptt", losses)

# sampling with temperature (seeded generator)
gen = torch.Generator().manual_seed(7)
inv = {i: w for w, i in vocab.items()}
tok, state, words_out = torch.tensor([[vocab["the"]]]), None, []
with torch.no_grad():
    for _ in range(8):
        out, state = model.rnn(model.emb(tok), state)
        probs = F.softmax(model.out(out[:, -1]) / 0.7, dim=-1)
        probs[:, 0] = 0
        tok = torch.multinomial(probs, 1, generator=gen)
        words_out.append(inv[tok.item()])
print("sample", " ".join(words_out))
