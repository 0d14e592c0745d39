"""LSTM and GRU: a sequence model step with packed-free batch_first input."""
import torch
from torch import nn


def fill_(module, scale):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float64) * 0.7 + i).reshape(p.shape) * scale)


torch.set_default_dtype(torch.float64)
seq = torch.linspace(-1, 1, 2 * 5 * 3).reshape(2, 5, 3)

lstm = nn.LSTM(input_size=3, hidden_size=4, num_layers=2, batch_first=True)
fill_(lstm, 0.3)
head = nn.Linear(4, 1)
fill_(head, 0.5)
print([name for name, _ in lstm.named_parameters()])
out, (h, c) = lstm(seq)
print("lstm out", out.shape, h.shape, c.shape)
pred = head(out[:, -1])
target = torch.tensor([[0.5], [-0.5]])
loss = nn.functional.mse_loss(pred, target)
loss.backward()
print("lstm loss", loss.item())
print("h", h)
print("grad weight_ih_l0", lstm.weight_ih_l0.grad.sum().item(), lstm.weight_hh_l1.grad.abs().max().item())

gru = nn.GRU(3, 4, batch_first=True)
fill_(gru, 0.4)
opt = torch.optim.RMSprop(gru.parameters(), lr=0.01)
h0 = torch.zeros(1, 2, 4)
for step in range(3):
    opt.zero_grad()
    o, hn = gru(seq, h0)
    loss = (o ** 2).mean() + hn.sum()
    loss.backward()
    opt.step()
    print(f"gru step {step} loss {loss.item():.8f}")

cell = nn.LSTMCell(3, 4)
fill_(cell, 0.2)
hx, cx = torch.zeros(2, 4), torch.zeros(2, 4)
for t in range(seq.shape[1]):
    hx, cx = cell(seq[:, t], (hx, cx))
print("cell", hx)
