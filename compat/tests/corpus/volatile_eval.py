"""Training, then a volatile evaluation loop summing the loss with
size_average=False and counting correct predictions."""
import chainrule as torch
import chainrule.nn as nn
import chainrule.nn.functional as F
import chainrule.optim as optim
from chainrule.autograd import Variable

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(4, 10), nn.Tanh(), nn.Linear(10, 2))
optimizer = optim.Adam(model.parameters(), lr=0.05)
batches = []
for _ in range(4):
    x = torch.randn(16, 4)
    batches.append((x, (x.sum(1) > 0).long()))


def train():
    for data, target in batches:
        data, target = Variable(data), Variable(target)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        torch.nn.utils.clip_grad_norm(model.parameters(), 1.0)
        optimizer.step()


def test():
    test_loss = 0
    correct = 0
    for data, target in batches:
        data, target = Variable(data, volatile=True), Variable(target)
        output = model(data)
        test_loss += F.cross_entropy(output, target, size_average=False).data[0]
        pred = output.data.max(1)[1]
        correct += pred.eq(target.data).sum().item()
    test_loss /= 64
    print('Test set: Average loss: {:.4f}, Accuracy: {}/64'.format(test_loss, correct))


for epoch in range(3):
    train()
    test()
