"""MNIST-style training loop, 2017 vintage: nn.Module, optim.SGD, Variable inputs,
loss.data[0] logging, a manual weight decay through .data."""
import chainrule as torch
import chainrule.nn as nn
import chainrule.nn.functional as F
import chainrule.optim as optim
from chainrule.autograd import Variable

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


model = Net()
optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
inputs = torch.randn(32, 8)
targets = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0).long()

for epoch in range(5):
    data, target = Variable(inputs), Variable(targets)
    optimizer.zero_grad()
    output = model(data)
    loss = F.nll_loss(output, target)
    loss.backward()
    optimizer.step()
    for p in model.parameters():
        p.data.add_(-0.001, p.data)   # weight decay by hand
    print('Train Epoch: {} Loss: {:.6f}'.format(epoch, loss.data[0]))
