"""EmbeddingBag as the text-classification tutorial uses it, and embedding_bag's modes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

w = torch.arange(12, dtype=torch.float64).reshape(6, 2).requires_grad_()
inp = torch.tensor([1, 2, 4, 5, 4, 3, 2, 0]); off = torch.tensor([0, 4, 4])
for mode in ["sum", "mean", "max"]:
    out = F.embedding_bag(inp, w, off, mode=mode)
    out.pow(2).sum().backward()
    print(mode, out.detach(), w.grad)
    w.grad = None
print(F.embedding_bag(torch.tensor([[1, 2], [3, 0]]), w, mode="mean", padding_idx=0).detach())
print(F.embedding_bag(inp, w, torch.tensor([0, 4, 8]), include_last_offset=True).detach())
psw = torch.arange(8, dtype=torch.float64, requires_grad=True)
o = F.embedding_bag(inp, w, off, mode="sum", per_sample_weights=psw)
o.sum().backward()
print(o.detach(), psw.grad)
print(nn.EmbeddingBag(6, 2, mode="sum"), nn.EmbeddingBag.from_pretrained(w.detach(), mode="max"), nn.EmbeddingBag(6, 2, padding_idx=0, max_norm=1.0))
for bad in [lambda: F.embedding_bag(inp, w, off, mode="mean", per_sample_weights=torch.ones(8, dtype=torch.float64)),
            lambda: F.embedding_bag(inp, w)]:
    try:
        bad()
    except (ValueError, NotImplementedError) as e:
        print(type(e).__name__, e)

class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        with torch.no_grad():
            self.embedding.weight.copy_(torch.sin(torch.arange(vocab_size * embed_dim, dtype=torch.float32)).reshape(vocab_size, embed_dim))
            self.fc.weight.copy_(torch.cos(torch.arange(num_class * embed_dim, dtype=torch.float32)).reshape(num_class, embed_dim))
            self.fc.bias.zero_()
    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))

model = TextClassificationModel(20, 8, 4)
opt = torch.optim.SGD(model.parameters(), lr=5.0)
text = torch.tensor([3, 7, 1, 9, 12, 4, 4, 19, 2, 0, 5])
offsets = torch.tensor([0, 3, 7])
labels = torch.tensor([1, 3, 0])
for step in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(model(text, offsets), labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    opt.step()
    print(step, round(loss.item(), 6))
