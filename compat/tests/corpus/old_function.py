"""An old-style Function (instance forward/backward, save_for_backward,
saved_tensors) inside a model trained with optim."""
import chainrule as torch
import chainrule.nn as nn
import chainrule.optim as optim
from chainrule.autograd import Function, Variable

torch.manual_seed(2)


class ScaledTanh(Function):
    def forward(self, x):
        y = x.tanh()
        self.save_for_backward(y)
        return y * 2

    def backward(self, grad_output):
        y, = self.saved_tensors
        return grad_output * 2 * (1 - y * y)


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        return ScaledTanh()(self.lin(x))


model = Model()
optimizer = optim.SGD(model.parameters(), lr=0.05)
x = Variable(torch.randn(20, 3))
y = Variable(torch.randn(20, 1))
for step in range(6):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    print('step %d loss %.5f' % (step, loss.data[0]))
