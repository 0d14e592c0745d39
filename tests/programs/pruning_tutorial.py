"""The pruning tutorial on a LeNet: local (structured and unstructured) pruning of
conv1, iterative pruning, pruning several parameters, global pruning, a custom pruning
method, remove() and the state_dict; deterministic weights (random pruning only counted)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def deterministic(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            # rounded to a grid of 1/16: many equal magnitudes, ties to break
            grid = torch.round(torch.sin(torch.arange(n, dtype=torch.float32) * 0.7 + i) * 8) / 16
            p.copy_(grid.reshape(p.shape))
    return model


model = deterministic(LeNet())
x = torch.cos(torch.arange(2 * 28 * 28, dtype=torch.float32) / 9).reshape(2, 1, 28, 28)
module = model.conv1
print(list(module.named_parameters())[0][0], list(module.named_buffers()))

prune.random_unstructured(module, name="weight", amount=0.3)
print([n for n, _ in module.named_parameters()], [n for n, _ in module.named_buffers()])
print("random zeros", int((module.weight_mask == 0).sum()), "of", module.weight.nelement())
print("hooks", [type(h).__name__ for h in module._forward_pre_hooks.values()])

prune.l1_unstructured(module, name="bias", amount=3)
print("bias mask", module.bias_mask)
print("bias", module.bias)

model = deterministic(LeNet())
module = model.conv1
prune.l1_unstructured(module, name="weight", amount=0.3)
print("l1 mask sums per filter", module.weight_mask.sum(dim=(1, 2, 3)))
prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
print("after ln_structured", module.weight_mask.sum(dim=(1, 2, 3)))
for hook in module._forward_pre_hooks.values():
    if hook._tensor_name == "weight":
        break
print(list(hook))
print(list(model.state_dict().keys()))
out = model(x)
out.pow(2).sum().backward()
print("out", out[0])
print("grad of weight_orig", ["{:.2f}".format(v) for v in module.weight_orig.grad.abs().sum(dim=(1, 2, 3)).tolist()])

prune.remove(module, "weight")
print(list(module.named_parameters())[0][0], list(module.named_buffers()))
print("permanent zeros", int((module.weight == 0).sum()))

new_model = deterministic(LeNet())
for name, m in new_model.named_modules():
    if isinstance(m, torch.nn.Conv2d):
        prune.l1_unstructured(m, name="weight", amount=0.2)
    elif isinstance(m, torch.nn.Linear):
        prune.l1_unstructured(m, name="weight", amount=0.4)
print(dict(new_model.named_buffers()).keys())

model = deterministic(LeNet())
parameters_to_prune = (
    (model.conv1, "weight"), (model.conv2, "weight"),
    (model.fc1, "weight"), (model.fc2, "weight"), (model.fc3, "weight"),
)
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
for m, name in parameters_to_prune:
    w = getattr(m, name)
    print("sparsity in", type(m).__name__, "{:.2f}%".format(100.0 * float(torch.sum(w == 0)) / float(w.nelement())))
total_zero = sum(float(torch.sum(getattr(m, n) == 0)) for m, n in parameters_to_prune)
total = sum(float(getattr(m, n).nelement()) for m, n in parameters_to_prune)
print("global sparsity: {:.2f}%".format(100.0 * total_zero / total))
print("pruned?", prune.is_pruned(model), prune.is_pruned(deterministic(LeNet())))


class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor."""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


model = deterministic(LeNet())
foobar_unstructured(model.fc3, name="bias")
print(model.fc3.bias_mask)
prune.l1_unstructured(model.fc3, name="bias", amount=2)
print(model.fc3.bias_mask)
print(model(x)[1])
try:
    prune.l1_unstructured(model.fc2, name="weight", amount=1.5)
except ValueError as e:
    print("ValueError:", e)
try:
    prune.remove(model.fc2, "weight")
except ValueError as e:
    print("ValueError:", str(e).split(" of module")[0])
