"""3-D pooling modules, max unpooling, get_total_norm / clip_grads_with_norm_."""
import torch
import torch.nn as nn

x = torch.sin(torch.arange(2 * 2 * 4 * 4 * 4, dtype=torch.float64)).reshape(2, 2, 4, 4, 4)
for m in [nn.MaxPool3d(2), nn.AvgPool3d(2, stride=1), nn.AdaptiveAvgPool3d((1, 2, 2)), nn.AdaptiveMaxPool3d(1), nn.MaxPool3d(3, stride=2, padding=1)]:
    out = m(x)
    print(m, out.shape, out.sum())
pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
y = torch.cos(torch.arange(32, dtype=torch.float64)).reshape(1, 2, 4, 4)
o, idx = pool(y)
print(unpool, unpool(o, idx), unpool(o, idx, output_size=(5, 5)).shape)
p1, u1 = nn.MaxPool1d(2, return_indices=True), nn.MaxUnpool1d(2)
o1, i1 = p1(y.reshape(1, 2, 16))
print(u1, u1(o1, i1).sum())
net = nn.Linear(4, 3).double()
with torch.no_grad():
    net.weight.copy_(torch.arange(12, dtype=torch.float64).reshape(3, 4) / 10)
    net.bias.fill_(0.1)
net(torch.ones(2, 4, dtype=torch.float64)).pow(2).sum().backward()
grads = [p.grad for p in net.parameters()]
total = nn.utils.get_total_norm(grads)
print(total, nn.utils.get_total_norm(grads, norm_type="inf"), nn.utils.get_total_norm([]))
nn.utils.clip_grads_with_norm_(net.parameters(), 1.0, total)
print(net.weight.grad, nn.utils.get_total_norm([p.grad for p in net.parameters()]))
