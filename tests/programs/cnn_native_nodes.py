"""A small CNN (conv, batch norm, max/avg/adaptive pooling, instance norm, upsampling)
trained for a few steps: losses, gradient norms, running statistics and the grad_fn
names of every layer's output, which must be the reference's nodes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8, momentum=None)
        self.inorm = nn.InstanceNorm2d(8, affine=True)
        self.bn1d = nn.BatchNorm1d(8, affine=False)
        self.head = nn.Linear(8, 4)

    def forward(self, x, trace=None):
        steps = []
        y = self.bn1(self.conv1(x)); steps.append(("bn1", y))
        y = F.max_pool2d(F.relu(y), 2); steps.append(("max_pool2d", y))
        y = self.bn2(self.conv2(y)); steps.append(("bn2", y))
        y = F.avg_pool2d(y, 3, stride=1, padding=1, count_include_pad=False); steps.append(("avg_pool2d", y))
        up = F.interpolate(y, scale_factor=2, mode="area"); steps.append(("area", up))
        up = self.inorm(up); steps.append(("instance_norm", up))
        y = y + F.adaptive_max_pool2d(up, y.shape[-2:]); steps.append(("adaptive_max", y))
        y = F.adaptive_avg_pool2d(F.relu(y), 1).flatten(1); steps.append(("adaptive_avg", y))
        y = self.bn1d(y); steps.append(("bn1d", y))
        if trace is not None:
            trace.extend((name, type(t.grad_fn).__name__) for name, t in steps)
        return self.head(y)


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(4, 3, 8, 8)
target = torch.tensor([0, 1, 2, 3])
for step in range(3):
    trace = []
    loss = F.cross_entropy(net(x, trace if step == 0 else None), target)
    opt.zero_grad()
    loss.backward()
    grads = [f"{p.grad.norm().item():.3g}" for p in net.parameters()]
    opt.step()
    if step == 0:
        for name, node in trace:
            print(name, node)
    print(f"step {step} loss {loss.item():.4f} grads {grads}")
print("bn1 running", [f"{v:.3g}" for v in net.bn1.running_mean.tolist()],
      [f"{v:.3g}" for v in net.bn1.running_var.tolist()])
print("bn2 cumulative", [f"{v:.3g}" for v in net.bn2.running_var.tolist()],
      net.bn2.num_batches_tracked.item())
net.eval()
with torch.no_grad():
    print("eval", [f"{v:.3g}" for v in net(x)[0].tolist()])
xi = torch.randn(1, 2, 5, 5, requires_grad=True)
values, indices = F.max_pool2d(xi, 3, stride=2, padding=1, return_indices=True)
values.sum().backward()
print("indices", indices.flatten().tolist(), round(xi.grad.sum().item(), 4))
ties = torch.tensor([[[[1., 1., 0.], [1., 1., 0.], [0., 0., 0.]]]], requires_grad=True)
F.max_pool2d(ties, 2, stride=1).sum().backward()
print("ties", ties.grad.flatten().tolist())
