"""A feature-engineering pipeline on tabular data: robust scaling with quantiles,
binning with bucketize/searchsorted/histc/histogram, per-group statistics with
scatter_reduce and bincount, NaN-aware summaries, a differentiable quantile loss
(pinball) fitted by gradient descent, and gradients through median/kthvalue/sort."""
import torch

torch.manual_seed(0)
n = 200
age = torch.randint(18, 80, (n,)).float()
income = torch.exp(torch.randn(n) * 0.6 + 10.0)
group = torch.randint(0, 4, (n,))
income_with_nan = income.clone()
income_with_nan[::17] = float("nan")

# robust scaling
q = torch.tensor([0.25, 0.5, 0.75])
for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
    print(interp, torch.quantile(age, q, interpolation=interp))
q1, med, q3 = torch.quantile(income, q)
scaled = (income - med) / (q3 - q1)
print("scaled summary", scaled.min().item(), scaled.max().item(), scaled.median().item())
print("nanquantile", torch.nanquantile(income_with_nan, q))
print("nanmedian", torch.nanmedian(income_with_nan), "nanmean", torch.nanmean(income_with_nan))
print("nansum", torch.nansum(income_with_nan) / 1e6)
print("quantile 2-D dim=0", torch.quantile(torch.stack([age, age * 2]), 0.5, dim=1, keepdim=True))

# binning
edges = torch.tensor([18.0, 30.0, 45.0, 60.0, 80.0])
bins = torch.bucketize(age, edges)
bins_right = torch.bucketize(age, edges, right=True)
print("bucketize counts", torch.bincount(bins, minlength=6))
print("right=True counts", torch.bincount(bins_right, minlength=6))
print("searchsorted", torch.searchsorted(edges, torch.tensor([18.0, 31.0, 79.9, 90.0])),
      torch.searchsorted(edges, torch.tensor([18.0, 30.0]), side="right"))
print("histc", torch.histc(age, bins=6, min=18, max=80))
hist = torch.histogram(age, bins=5)
print("histogram", hist.hist, hist.bin_edges)
h2 = torch.histogram(age, bins=edges, density=True)
print("histogram density", h2.hist)
weighted = torch.histogram(age, bins=4, range=(20.0, 70.0), weight=income / income.sum())
print("weighted", weighted.hist)

# per-group statistics
counts = torch.bincount(group, minlength=4)
sums = torch.zeros(4).scatter_add(0, group, income)
print("group counts", counts, "group means", sums / counts)
gmax = torch.zeros(4).scatter_reduce(0, group, income, reduce="amax", include_self=False)
gmin = torch.full((4,), float("inf")).scatter_reduce(0, group, income, reduce="amin")
gmean = torch.zeros(4).scatter_reduce(0, group, income, reduce="mean", include_self=False)
print("group max", gmax, "group min", gmin, "group mean", gmean)
weighted_counts = torch.bincount(group, weights=age)
print("age by group", weighted_counts)
vals, idx = torch.sort(income, descending=True)
print("top-3 groups", group[idx[:3]], "unique groups", torch.unique(group, return_counts=True))
print("mode of bins", torch.mode(bins))
print("cummax tail", torch.cummax(age, 0).values[-3:], "kth", torch.kthvalue(age, 10))

# fit the 0.9 quantile of log-income per group with the pinball loss
log_inc = income.log()
theta = torch.zeros(4, requires_grad=True)
opt = torch.optim.SGD([theta], lr=0.5)
tau = 0.9
for step in range(200):
    opt.zero_grad()
    r = log_inc - theta[group]
    loss = torch.maximum(tau * r, (tau - 1) * r).mean()
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step} pinball {loss.item():.5f}")
emp = torch.stack([torch.quantile(log_inc[group == g], tau) for g in range(4)])
print("fitted", theta.detach(), "empirical", emp)

# gradients through order statistics
x = torch.tensor([3.0, -1.0, 2.0, 5.0, 0.5, 4.0], requires_grad=True)
(torch.median(x) + torch.kthvalue(x, 2).values + torch.quantile(x, 0.3) + x.sort().values[-1] * 2).backward()
print("order-statistic grads", x.grad)
x.grad = None
m = torch.tensor([[1.0, 4.0, 2.0], [3.0, 3.0, 0.0]], requires_grad=True)
torch.quantile(m, torch.tensor([0.2, 0.8]), dim=1).sum().backward()
print("quantile dim grads", m.grad)
