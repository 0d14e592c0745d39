"""Hand-unrolled recurrent cells (RNNCell, GRUCell, LSTMCell with teacher forcing and
truncated backprop) and image patches with nn.Unfold / nn.Fold and PixelUnshuffle."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fill_(module, scale, shift=0.0):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.9 + i + shift)
                    .reshape(p.shape) * scale)


# --- a character-level predictor unrolled by hand ---------------------------------
vocab, hidden = 5, 6
text = torch.tensor([0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3])
embed = nn.Embedding(vocab, 4)
cells = {"rnn": nn.RNNCell(4, hidden, nonlinearity="tanh"), "gru": nn.GRUCell(4, hidden),
         "lstm": nn.LSTMCell(4, hidden)}
head = nn.Linear(hidden, vocab)
for k, m in enumerate([embed, head, *cells.values()]):
    fill_(m, 0.4, shift=k)

for name, cell in cells.items():
    params = list(embed.parameters()) + list(cell.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=0.3)
    for epoch in range(3):
        state = None
        total = 0.0
        for start in range(0, len(text) - 1, 4):           # truncated BPTT windows of 4
            opt.zero_grad()
            chunk_in, chunk_out = text[start:start + 4], text[start + 1:start + 5]
            if state is not None:                          # carry the state, not its graph
                state = tuple(s.detach() for s in state) if isinstance(state, tuple) \
                    else state.detach()
            loss = 0.0
            for t in range(len(chunk_out)):
                x = embed(chunk_in[t:t + 1])
                state = cell(x, state)
                h = state[0] if isinstance(state, tuple) else state
                loss = loss + F.cross_entropy(head(h), chunk_out[t:t + 1])
            loss = loss / len(chunk_out)
            loss.backward()
            nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            total += loss.item()
        print(f"{name} epoch {epoch} loss {total:.6f}")
    h = state[0] if isinstance(state, tuple) else state
    print(f"{name} final state", tuple(h.shape), [round(v, 5) for v in h[0, :3].tolist()])

# unbatched input: a 1-d input gives a 1-d state
cell = cells["gru"]
h1 = cell(torch.ones(4))
print("unbatched", tuple(h1.shape), h1.grad_fn is not None)
hx, cx = cells["lstm"](torch.ones(2, 4))
print("lstm default state", tuple(hx.shape), tuple(cx.shape))

# --- patches --------------------------------------------------------------------------
image = torch.cos(torch.arange(1 * 2 * 6 * 6, dtype=torch.float32) * 0.3).reshape(1, 2, 6, 6)
image.requires_grad_()
unfold = nn.Unfold(kernel_size=2, stride=2)
patches = unfold(image)
print("patches", tuple(patches.shape), patches.grad_fn.name())
fold = nn.Fold(output_size=(6, 6), kernel_size=2, stride=2)
print("round trip", torch.equal(fold(patches), image))

# overlapping patches: fold sums overlaps, divide by the count to average
unfold3 = nn.Unfold(kernel_size=3, padding=1)
fold3 = nn.Fold(output_size=(6, 6), kernel_size=3, padding=1)
cols = unfold3(image)
counts = fold3(unfold3(torch.ones_like(image)))
print("overlap counts", counts[0, 0, :2, :3].tolist())
averaged = fold3(cols) / counts
print("average recovers", torch.allclose(averaged, image))

# a patch-wise linear layer (convolution written with unfold)
weight = torch.linspace(-0.5, 0.5, 3 * 2 * 9).reshape(3, 2 * 9).requires_grad_()
out = (weight @ unfold3(image)).reshape(1, 3, 6, 6)
ref = F.conv2d(image, weight.reshape(3, 2, 3, 3), padding=1)
print("unfold conv matches", torch.allclose(out, ref, atol=1e-6))
(out.square().mean() + patches.abs().sum() * 1e-3).backward()
print("image grad", f"{image.grad.norm().item():.6f}", "weight grad", f"{weight.grad.norm().item():.6f}")

# space-to-depth and back
shuffled = F.pixel_unshuffle(image, 2)
print("unshuffle", tuple(shuffled.shape), shuffled.grad_fn.name())
print("shuffle back", torch.equal(F.pixel_shuffle(shuffled, 2), image))
print("layers", nn.PixelUnshuffle(3)(image).shape, nn.PixelShuffle(2)(torch.zeros(1, 8, 2, 2)).shape)
try:
    F.pixel_unshuffle(image, 4)
except RuntimeError as e:
    print("RuntimeError:", e)
