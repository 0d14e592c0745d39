"""A seeded training script that relies on torch's random streams: manual_seed, default
nn initialization, randn/randint data, Dropout, a shuffling DataLoader, random_split,
get/set_rng_state, fork_rng, a Generator, and sampling from the trained model."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(1234)
print("initial seed", torch.initial_seed())

# data: two noisy clusters per class
centers = torch.randn(3, 8) * 2
labels = torch.randint(0, 3, (240,))
inputs = centers[labels] + 0.5 * torch.randn(240, 8)
train_set, val_set = random_split(TensorDataset(inputs, labels), [200, 40])
print("first val indices", val_set.indices[:5])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(32, 32)
        self.out = nn.Linear(32, 3)

    def forward(self, x):
        x = self.drop(F.relu(self.fc1(x)))
        x = self.drop(F.gelu(self.fc2(x)))
        return self.out(x)


model = Net()
print("fc1 weight", model.fc1.weight[0, :4])
print("out bias", model.out.bias)
nn.init.xavier_normal_(model.fc2.weight)
nn.init.normal_(model.fc2.bias, std=0.01)
print("fc2 weight after xavier_normal_", model.fc2.weight[0, :4])

opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = DataLoader(train_set, batch_size=50, shuffle=True)
for epoch in range(6):
    model.train()
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
    if epoch % 2 == 1:
        print(f"epoch {epoch} mean loss {total / len(loader):.5f}")

model.eval()
with torch.no_grad():
    xv = torch.stack([x for x, _ in val_set])
    yv = torch.stack([y for _, y in val_set])
    probs = F.softmax(model(xv), dim=1)
print("val accuracy", (probs.argmax(1) == yv).float().mean().item())

# the stream can be saved, forked and replayed
state = torch.get_rng_state()
a = torch.rand(3)
with torch.random.fork_rng():
    torch.randn(100)
b = torch.rand(2)
torch.set_rng_state(state)
print("replayed", torch.equal(torch.rand(3), a), torch.equal(torch.rand(2), b))

# sampling from the model's predictive distribution, and a private generator
print("samples", torch.multinomial(probs[:4], 5, replacement=True))
print("without replacement", torch.multinomial(probs[0], 3))
g = torch.Generator().manual_seed(7)
print("generator draws", torch.randn(4, generator=g), torch.randperm(6, generator=g))
print("bernoulli", torch.bernoulli(probs[:2]))
print("mask", (torch.rand(10) > 0.5).int())
