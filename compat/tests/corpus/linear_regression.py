"""Polynomial regression with hand-made parameters (Variable(..., requires_grad=True)),
updated through .data, old add_ argument order, and .grad.data.zero_()."""
import chainrule as torch
from chainrule.autograd import Variable

torch.manual_seed(4)
W_target = torch.randn(3, 1) * 5
b_target = torch.randn(1) * 5


def get_batch(batch_size=32):
    x = torch.randn(batch_size, 1)
    features = torch.cat([x ** i for i in range(1, 4)], 1)
    return Variable(features), Variable(features.mm(W_target) + b_target[0])


W = Variable(torch.zeros(3, 1), requires_grad=True)
b = Variable(torch.zeros(1), requires_grad=True)
for batch_idx in range(1, 41):
    batch_x, batch_y = get_batch()
    output_loss = ((batch_x.mm(W) + b - batch_y) ** 2).mean()
    output_loss.backward()
    for param in (W, b):
        param.data.add_(-0.01, param.grad.data)
        param.grad.data.zero_()
    if batch_idx % 10 == 0:
        print('Batch {} loss {:.4f}'.format(batch_idx, output_loss.data[0]))
print('W ' + ' '.join('%.3f' % v for v in W.data.view(-1).tolist()))
