"""A sequence classifier over variable-length sequences with pad_sequence and packing."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence, pack_sequence

seqs = [torch.sin(torch.arange(n * 3, dtype=torch.float64)).reshape(n, 3) for n in (5, 2, 4)]
lengths = torch.tensor([len(s) for s in seqs])
padded = pad_sequence(seqs, batch_first=True)
print(padded.shape, padded[1])
lstm = nn.LSTM(3, 4, batch_first=True).double()
with torch.no_grad():
    for i, p in enumerate(lstm.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float64) * (0.3 + i)).reshape(p.shape) * 0.3)
packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
print(packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
out, (h, c) = lstm(packed)
unpacked, out_lengths = pad_packed_sequence(out, batch_first=True)
print(unpacked.shape, out_lengths, h)
loss = h[-1].pow(2).sum()
loss.backward()
print(lstm.weight_ih_l0.grad.sum())
p2 = pack_sequence(seqs, enforce_sorted=False)
gru = nn.GRU(3, 2).double()
o2, h2 = gru(p2)
print(type(o2).__name__, pad_packed_sequence(o2)[0].shape, h2.shape)
print(pad_sequence(seqs, padding_value=-1.0)[:, 1])
for cls, kw in [(nn.LSTM, dict(num_layers=2, bidirectional=True)), (nn.GRU, dict(num_layers=2, bidirectional=True)),
                (nn.RNN, dict(nonlinearity="relu", bidirectional=True)), (nn.LSTM, dict(proj_size=2))]:
    net = cls(3, 4, **kw).double()
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float64) * (0.7 + i)).reshape(p.shape) * 0.4)
    dirs = 2 if net.bidirectional else 1
    hsize = net.proj_size or 4
    h0 = torch.cos(torch.arange(net.num_layers * dirs * 3 * hsize, dtype=torch.float64)).reshape(net.num_layers * dirs, 3, hsize)
    hx = (h0, torch.ones(net.num_layers * dirs, 3, 4, dtype=torch.float64) * 0.1) if cls is nn.LSTM else h0
    x = padded.clone().requires_grad_()
    out, hn = net(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False), hx)
    res, lens = pad_packed_sequence(out, batch_first=True, padding_value=-2.0)
    total = res.sum() + (hn[0].sum() + hn[1].sum() if cls is nn.LSTM else hn.sum())
    total.backward()
    print(cls.__name__, res.shape, round(res.sum().item(), 8), lens, round(total.item(), 8), x.grad.abs().sum())
    sorted_in = pack_sequence([seqs[0], seqs[2], seqs[1]])
    print(net(sorted_in)[0].data.shape)
