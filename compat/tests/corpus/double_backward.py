"""retain_variables: two backward passes through one graph, a gradient penalty
through create_graph, and grad_variables for a non-scalar output."""
import chainrule as torch
from chainrule.autograd import Variable

torch.manual_seed(3)
w = Variable(torch.randn(4), requires_grad=True)
x = Variable(torch.randn(4))

loss = (w * x).sum() ** 2
loss.backward(retain_variables=True)
first = w.grad.data.clone()
loss.backward(retain_variables=True)
print('grad twice / once: %.4f' % (w.grad.data.sum() / first.sum()))

w.grad.data.zero_()
g, = torch.autograd.grad(loss, w, create_graph=True)
penalty = (g ** 2).sum()
penalty.backward()
print('penalty %.4f grad %.4f' % (penalty.data[0], w.grad.data.sum()))

w.grad.data.zero_()
out = w * 3
torch.autograd.backward([out], grad_variables=[torch.ones(4)])
print('grad of 3w: %s' % w.grad.data.tolist())
