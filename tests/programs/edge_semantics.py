"""Semantics people trip over: type promotion, integer division, reductions' dtypes,
nan handling, ties, median/quantile, advanced indexing, scatter_reduce, index_put accumulate."""
import torch

i = torch.tensor([-7, 7, 5, -5], dtype=torch.int32)
print("floor_divide", torch.floor_divide(i, 2), i // 2, "remainder", i % 3, torch.fmod(i, 3))
print("div trunc", torch.div(i, 2, rounding_mode="trunc"), "true", i / 2)
print("promote", (i * 2.5).dtype, (i + torch.tensor(1, dtype=torch.int64)).dtype,
      (torch.ones(2, dtype=torch.float16) + 1.0).dtype, (torch.ones(2, dtype=torch.int8) + torch.ones(2, dtype=torch.uint8)).dtype)
print("sum bool", torch.tensor([True, False, True]).sum(), torch.tensor([True, True]).sum().dtype)
print("cumsum int32", torch.cumsum(i, 0).dtype, torch.cumprod(torch.tensor([1, 2, 3], dtype=torch.int16), 0).dtype)
print("prod", torch.tensor([2, 3], dtype=torch.uint8).prod().dtype)
x = torch.tensor([3.0, float("nan"), 1.0, 3.0])
print("max with nan", x.max(), x.argmax(), torch.nanmean(x), x.nansum(), torch.nanmedian(x))
print("ties", torch.tensor([1.0, 3.0, 3.0, 2.0]).argmax(), torch.tensor([2.0, 1.0, 1.0]).argmin(),
      torch.tensor([1.0, 3.0, 3.0]).topk(2))
print("median even", torch.tensor([4.0, 1.0, 3.0, 2.0]).median(), torch.tensor([[4.0, 1.0], [3.0, 2.0]]).median(dim=1))
q = torch.tensor([1.0, 2.0, 4.0, 8.0])
for m in ["linear", "lower", "higher", "nearest", "midpoint"]:
    print("quantile", m, torch.quantile(q, torch.tensor([0.3, 0.5], dtype=q.dtype), interpolation=m))
a = torch.arange(12.0).reshape(3, 4)
print("adv index", a[[0, 2], [1, 3]], a[torch.tensor([[0], [2]]), torch.tensor([1, 3])])
print("bool mask", a[a % 2 == 0], a[:, torch.tensor([True, False, True, False])])
print("ellipsis", a[..., None, 1:3].shape, a[None, ..., -1])
b = torch.zeros(5)
b.index_put_((torch.tensor([0, 1, 1, 3]),), torch.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
print("index_put accumulate", b)
src = torch.tensor([1.0, 5.0, 2.0, 7.0, 3.0])
idx = torch.tensor([0, 1, 0, 1, 2])
for r in ["sum", "prod", "mean", "amax", "amin"]:
    print("scatter_reduce", r, torch.zeros(3).scatter_reduce(0, idx, src, reduce=r, include_self=False),
          torch.ones(3).scatter_reduce(0, idx, src, reduce=r))
print("sort stable", torch.tensor([2, 1, 2, 1, 0]).sort(stable=True))
print("unique", torch.unique(torch.tensor([3, 1, 3, 2, 1]), return_inverse=True, return_counts=True))
print("clamp int with float", torch.clamp(torch.tensor([1, 5, 9]), min=2.5, max=7.5))
print("round half even", torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5])), torch.round(torch.tensor([1.2345]), decimals=2))
print("mean dtype", torch.tensor([1, 2], dtype=torch.float16).mean().dtype, torch.arange(4.0).var(), torch.arange(4.0).std(unbiased=False))
print("logsumexp -inf", torch.logsumexp(torch.tensor([float("-inf"), float("-inf")]), 0), torch.logsumexp(torch.tensor([1000.0, 1000.0]), 0))
print("softmax -inf row", torch.softmax(torch.tensor([[float("-inf"), 0.0], [1.0, 2.0]]), dim=1))
print("where promote", torch.where(torch.tensor([True, False]), torch.tensor([1, 2]), 2.5))
print("eq broadcast", torch.tensor([[1], [2]]) == torch.tensor([1, 2]))
print("int pow", torch.tensor([2, 3]) ** 2, torch.tensor([2, 3]) ** 0.5, 2 ** torch.tensor([1, 2]))
print("bitwise", torch.tensor([12]) & 10, torch.tensor([12]) | 3, torch.tensor([12]) ^ 5, ~torch.tensor([12]), torch.tensor([-16]) >> 2, torch.tensor([3]) << 2)
print("isclose", torch.isclose(torch.tensor([1.0, float("nan")]), torch.tensor([1.0 + 1e-9, float("nan")]), equal_nan=True))
print("arange float", torch.arange(0, 1, 0.1).shape, torch.arange(1, 2.5, 0.5))
print("linspace int", torch.linspace(0, 10, 5, dtype=torch.int64))
print("empty max", torch.tensor([]).sum(), torch.tensor([]).prod(), torch.tensor([]).mean())
