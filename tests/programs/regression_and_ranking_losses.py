"""Heteroscedastic regression, count data and ranking heads: GaussianNLLLoss,
PoissonNLLLoss, MarginRankingLoss, MultiMarginLoss, MultiLabelMarginLoss,
MultiLabelSoftMarginLoss, SoftMarginLoss, with their gradients; logcumsumexp."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def grid(*shape, scale=1.0, shift=0.0):
    n = 1
    for s in shape:
        n *= s
    return (torch.cos(torch.arange(n, dtype=torch.float64) * 0.9 + shift) * scale).reshape(shape)


def report(name, loss, *leaves):
    grads = torch.autograd.grad(loss, leaves)
    norms = " ".join(f"{g.norm().item():.6f}" for g in grads)
    print(f"{name:<22} loss {loss.item():.6f} {loss.grad_fn.name():<28} grad norms {norms}")


# heteroscedastic regression: the net predicts a mean and a variance
mean = grid(6, 2).requires_grad_()
log_var = grid(6, 2, scale=0.5, shift=1.0).requires_grad_()
y = grid(6, 2, scale=1.3, shift=0.4)
gnll = nn.GaussianNLLLoss()
report("gaussian nll", gnll(mean, y, log_var.exp()), mean, log_var)
report("gaussian full", nn.GaussianNLLLoss(full=True, reduction="sum")(mean, y, log_var.exp()),
       mean, log_var)
shared_var = (log_var[:, :1].exp()).detach().requires_grad_()
report("gaussian shared var", gnll(mean, y, shared_var), mean, shared_var)
tiny = torch.full((6, 2), 1e-9, dtype=torch.float64, requires_grad=True)
report("gaussian clamped var", nn.GaussianNLLLoss(eps=1e-3)(mean, y, tiny), mean, tiny)
try:
    gnll(mean, y, -log_var.exp())
except ValueError as e:
    print("ValueError:", e)

# count data
rate_log = grid(5, scale=0.7).requires_grad_()
counts = torch.tensor([0.0, 2.0, 1.0, 5.0, 3.0], dtype=torch.float64)
report("poisson log_input", nn.PoissonNLLLoss()(rate_log, counts), rate_log)
rate = rate_log.detach().exp().requires_grad_()
report("poisson rate full", nn.PoissonNLLLoss(log_input=False, full=True)(rate, counts), rate)

# ranking
s1, s2 = grid(5, shift=0.3).requires_grad_(), grid(5, shift=2.0).requires_grad_()
order = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0], dtype=torch.float64)
report("margin ranking", nn.MarginRankingLoss(margin=0.2)(s1, s2, order), s1, s2)
report("soft margin", nn.SoftMarginLoss()(s1, order), s1)

scores = grid(4, 5, shift=0.7).requires_grad_()
classes = torch.tensor([1, 0, 4, 2])
report("multi margin", nn.MultiMarginLoss()(scores, classes), scores)
w = torch.tensor([1.0, 2.0, 0.5, 1.0, 1.5], dtype=torch.float64)
report("multi margin p2 w", nn.MultiMarginLoss(p=2, margin=0.5, weight=w)(scores, classes), scores)
labels = torch.tensor([[3, 0, -1, 1, 1], [1, 2, 4, -1, 0], [0, -1, 2, 2, 2], [4, 3, 2, 1, 0]])
report("multilabel margin", nn.MultiLabelMarginLoss()(scores, labels), scores)
multi_hot = torch.tensor([[1, 0, 0, 1, 0], [0, 1, 1, 0, 1], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]],
                         dtype=torch.float64)
report("multilabel soft", nn.MultiLabelSoftMarginLoss(weight=w)(scores, multi_hot), scores)
per_sample = F.multilabel_soft_margin_loss(scores, multi_hot, reduction="none")
print("per sample", [round(v, 6) for v in per_sample.tolist()])

# a tiny ranking model trained with the margin loss
torch.manual_seed(0)
scorer = nn.Linear(3, 1).double()
with torch.no_grad():
    scorer.weight.copy_(torch.tensor([[0.1, -0.2, 0.3]]))
    scorer.bias.zero_()
a, b = grid(8, 3, shift=0.1), grid(8, 3, shift=1.9)
prefer = torch.sign(a.sum(1) - b.sum(1))
opt = torch.optim.SGD(scorer.parameters(), lr=0.5)
for step in range(5):
    opt.zero_grad()
    loss = F.margin_ranking_loss(scorer(a).squeeze(1), scorer(b).squeeze(1), prefer, margin=0.1)
    loss.backward()
    opt.step()
    print(f"rank step {step} loss {loss.item():.6f}")

# logcumsumexp: a running log-partition, and its gradient
z = grid(6, shift=0.5, scale=3.0).requires_grad_()
running = torch.logcumsumexp(z, dim=0)
print("logcumsumexp", [round(v, 6) for v in running.tolist()], running.grad_fn.name())
running.sum().backward()
print("grad", [round(v, 6) for v in z.grad.tolist()])
print("matches cumsum of exp", torch.allclose(running, z.exp().cumsum(0).log()))
big = torch.tensor([1000.0, 1000.0, -1000.0], dtype=torch.float64)
print("stable", torch.logcumsumexp(big, 0).tolist())
