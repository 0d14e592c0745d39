"""A small CNN with a float32 model and a float64 loss: dtype promotion in the loss,
the gradients' dtypes, a float64 copy of the model for evaluation."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, stride=2)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        x = F.relu(self.bn(self.conv1(x)))
        x = F.relu(self.conv2(x))
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


model = SmallNet()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.3, 0.3, p.numel()).reshape(p.shape).flip(0) * (1 + 0.2 * i))

images = torch.sin(torch.arange(2 * 3 * 7 * 7, dtype=torch.float32)).reshape(2, 3, 7, 7)
labels = torch.tensor([1, 2])
x = images

opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(4):
    opt.zero_grad()
    logits = model(x)
    # the loss in double precision: logits promoted, gradients come back float32
    loss = F.cross_entropy(logits.double(), labels) + 1e-3 * sum(
        p.double().pow(2).sum() for p in model.parameters())
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.8f} dtype {loss.dtype}")

print("logits dtype", logits.dtype, "grad dtypes",
      sorted({str(p.grad.dtype) for p in model.parameters()}))
print("running mean", [round(v, 5) for v in model.bn.running_mean.tolist()])

# promotion rules a mixed-precision loss relies on
a32 = torch.tensor([1.5, 2.5], requires_grad=True)
b64 = torch.tensor([0.25, 0.75], dtype=torch.float64, requires_grad=True)
mixed = (a32 * b64).sum()
mixed.backward()
print("mixed", mixed.dtype, a32.grad.dtype, b64.grad.dtype, a32.grad.tolist(), b64.grad.tolist())
print("scalar promotion", (a32 * 2.5).dtype, (a32 * torch.tensor(2.5, dtype=torch.float64)).dtype,
      (torch.tensor([1, 2]) * 0.5).dtype, (torch.tensor([1, 2]) / 2).dtype)
print("result_type", torch.result_type(a32, b64), torch.promote_types(torch.int32, torch.float16))

# a float64 target against float32 predictions
pred = torch.tensor([0.2, 0.7, 0.1], requires_grad=True)
target = torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64)
mse = F.mse_loss(pred.double(), target)
mse.backward()
print("mse", round(mse.item(), 10), pred.grad.dtype, [round(g, 6) for g in pred.grad.tolist()])

# a float64 copy of the model agrees in evaluation
model64 = SmallNet().double()
model64.load_state_dict({k: v.double() if v.is_floating_point() else v
                         for k, v in model.state_dict().items()})
model.eval()
model64.eval()
with torch.no_grad():
    out32 = model(x)
    out64 = model64(x.double())
print("eval max diff < 1e-5:", (out32.double() - out64).abs().max().item() < 1e-5,
      "out dtypes", out32.dtype, out64.dtype)
