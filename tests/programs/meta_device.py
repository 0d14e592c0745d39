"""The meta device: tensors with shapes and no data, for building models without
memory and checking shapes; modules built on meta then given memory or state."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F


def show(label, fn):
    try:
        print(label, fn())
    except Exception as e:
        print(label, type(e).__name__, e)


x = torch.empty(2, 3, device="meta")
print(x, x.shape, x.dtype, x.device, x.is_meta, x.stride(), x.get_device())
print(torch.zeros(4, dtype=torch.float64, device="meta"))
print(torch.ones(3, dtype=torch.int64, device=torch.device("meta")))
print(torch.full((2, 2), 7, device="meta"), torch.empty(10**6, 10**6, device="meta").shape)
print(torch.rand(2, 5, device="meta"), torch.randn(3, device="meta"))
print(torch.randint(0, 4, (3,), device="meta"), torch.arange(6, device="meta"))
print(torch.eye(3, device="meta"), torch.tensor([[1, 2], [3, 4]], device="meta"))
print(torch.zeros_like(x), torch.ones_like(x, device="cpu"))
print(torch.ones(2, 3).to("meta"), torch.ones(2, 3).t().to("meta").stride())
print(torch.ones(2, 3, requires_grad=True).to("meta"))
with torch.device("meta"):
    print(torch.ones(2))

# operations: shapes, dtypes and strides, no values
y = (x * 2 + 1).exp().sum(dim=1, keepdim=True)
print(y, y.stride())
print((x.t() + 1).stride(), x.t().contiguous().stride(), x.t().is_contiguous())
print(x[1:, ::2].storage_offset(), x[1:, ::2].stride(), x.view(3, 2).stride())
print(x @ torch.empty(3, 5, device="meta"), torch.cat([x, x]).shape)
print(torch.stack([x, x], 1).shape, x.unsqueeze(0).expand(4, 2, 3).stride())
print(x.max(dim=1))
print(x.softmax(-1), F.layer_norm(x, (3,)), x.to(torch.float16))
print(x.sum(dtype=torch.float64), (x > 0).dtype, x.mean(0), x[torch.tensor([0, 1, 1])].shape)
print(torch.where(x > 0, x, 0.0), x.transpose(0, 1).reshape(6).shape)
conv = F.conv2d(torch.empty(1, 3, 8, 8, device="meta"), torch.empty(4, 3, 3, 3, device="meta"))
print(conv, F.max_pool2d(conv, 2).shape)

# autograd records and runs backward on meta tensors
w = torch.empty(3, 4, device="meta", requires_grad=True)
loss = F.cross_entropy(x @ w, torch.zeros(2, dtype=torch.int64, device="meta"))
print(loss)
loss.backward()
print(w.grad)
print(torch.autograd.grad((w * w).sum(), w))

# what a meta tensor refuses
show("item", lambda: x.sum().item())
show("bool", lambda: bool(x.sum()))
show("tolist", lambda: x.tolist())
show("numpy", lambda: x.numpy())
show("cpu", lambda: x.cpu())
show("to cpu", lambda: x.to("cpu"))
show("copy out", lambda: torch.zeros(2, 3).copy_(x))
show("mixed", lambda: x + torch.ones(2, 3))
show("mixed other way", lambda: torch.ones(2, 3) + x)
show("mixed cat", lambda: torch.cat([x, torch.ones(2, 3)]))
show("0-d host tensor joins", lambda: x + torch.tensor(1.0))
show("broadcast", lambda: x + torch.empty(4, device="meta"))
show("matmul", lambda: x @ torch.empty(4, 5, device="meta"))
show("view", lambda: x.t().view(6))
show("fill", lambda: x.fill_(3))
show("copy in", lambda: x.copy_(torch.ones(2, 3)))

# modules: built on meta, moved, given memory, loaded
model = nn.Sequential(nn.Linear(3, 4, device="meta"), nn.ReLU(), nn.Linear(4, 2, device="meta"))
print(model, model[0].weight)
print(model(x), model.state_dict())
print(nn.Conv2d(3, 4, 3, device="meta")(torch.empty(1, 3, 8, 8, device="meta")))
print(nn.LayerNorm(3, device="meta").weight, nn.BatchNorm1d(3, device="meta").running_mean)
print(nn.Embedding(10, 4, device="meta")(torch.tensor([1, 2], device="meta")))
print(nn.init.kaiming_uniform_(torch.empty(3, 4, device="meta")))
source = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
with torch.no_grad():
    for i, p in enumerate(source.parameters()):
        p.copy_(torch.arange(p.numel(), dtype=torch.float32).reshape(p.shape) * 0.1 - 0.2 * i)
moved = copy.deepcopy(source).to("meta")
print(moved[0].weight, moved[0].weight.requires_grad, copy.deepcopy(moved)[2].bias)
empty = copy.deepcopy(moved).to_empty(device="cpu")
print(empty[0].weight.shape, empty[0].weight.device, empty[2].bias.dtype)
model.load_state_dict(source.state_dict(), assign=True)
print(model[0].weight.device, model(torch.ones(2, 3)))
