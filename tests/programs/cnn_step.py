"""A small CNN: Conv2d, BatchNorm2d, MaxPool2d, Dropout (eval), Flatten, one SGD step."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, stride=2, padding=1)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(6 * 4 * 4, 5)

    def forward(self, x):
        x = F.relu(self.bn(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.conv2(F.pad(x, (0, 1, 0, 1), value=0.5)))
        x = self.drop(torch.flatten(x, 1))
        return F.log_softmax(self.fc(x), dim=1)


net = Net()
with torch.no_grad():
    for i, (name, p) in enumerate(sorted(net.named_parameters())):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.11 + i).reshape(p.shape) * 0.2)
images = torch.sin(torch.arange(2 * 1 * 12 * 12, dtype=torch.float32) * 0.05).reshape(2, 1, 12, 12)
target = torch.tensor([1, 3])
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.5)
for step in range(3):
    net.train()
    net.drop.eval()  # keep dropout off so both libraries agree
    opt.zero_grad()
    out = net(images)
    loss = F.nll_loss(out, target)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")
print("running_mean", net.bn.running_mean)
print("running_var", net.bn.running_var)
print("conv1 grad norm", round(net.conv1.weight.grad.norm().item(), 5))
net.eval()
with torch.no_grad():
    print("eval out", net(images).exp().sum(1))
print([k for k in net.state_dict().keys()])
