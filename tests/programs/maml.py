"""MAML on sine regression: inner SGD steps with create_graph, outer Adam on meta-parameters."""
import math
import torch
import torch.nn.functional as F


def det(*shape, scale=1.0, phase=0.0, dtype=torch.float64):
    # deterministic "random" values: generators differ between libraries
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float64) * 0.7371 + phase) * scale).reshape(shape).to(dtype)


def init_(model, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(det(*p.shape, scale=scale, phase=float(i)).to(p.dtype))


torch.manual_seed(1)
params = [det(40, 1, scale=0.5), torch.zeros(40, dtype=torch.float64),
          det(1, 40, scale=0.2, phase=1.0), torch.zeros(1, dtype=torch.float64)]
for p in params:
    p.requires_grad_()
meta_opt = torch.optim.Adam(params, lr=1e-3)


def net(x, w):
    h = F.relu(F.linear(x, w[0], w[1]))
    return F.linear(h, w[2], w[3])


COUNTER = [0]


def task(n):
    COUNTER[0] += 1
    c = COUNTER[0]
    amp, phase = 0.1 + 4.9 * (0.5 + 0.5 * math.sin(c * 1.3)), math.pi * (0.5 + 0.5 * math.cos(c))
    x = det(n, 1, scale=5.0, phase=float(c))
    return x, amp * torch.sin(x + phase)


for it in range(20):
    meta_opt.zero_grad()
    total = 0.0
    for _ in range(4):
        xs, ys = task(10)
        xq, yq = task(10)
        fast = params
        for _ in range(2):
            loss = F.mse_loss(net(xs, fast), ys)
            grads = torch.autograd.grad(loss, fast, create_graph=True)
            fast = [w - 0.01 * g for w, g in zip(fast, grads)]
        qloss = F.mse_loss(net(xq, fast), yq)
        qloss.backward()
        total += qloss.item()
    meta_opt.step()
    if it % 5 == 0:
        print(f"iter {it} meta-loss {total / 4:.6f}")
print("grad norm", sum(p.grad.norm() ** 2 for p in params).sqrt().item())
