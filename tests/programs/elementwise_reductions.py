"""Common numerics users print: activations, reductions, statistics, comparisons and
their gradients, in float32 and float64, with integer and boolean tensors."""
import torch

x = torch.linspace(-3, 3, 13, dtype=torch.float64, requires_grad=True)
acts = {
    "relu": torch.relu(x), "sigmoid": torch.sigmoid(x), "tanh": torch.tanh(x),
    "softplus": torch.nn.functional.softplus(x), "gelu": torch.nn.functional.gelu(x),
    "silu": torch.nn.functional.silu(x), "elu": torch.nn.functional.elu(x),
    "leaky": torch.nn.functional.leaky_relu(x, 0.1), "hardtanh": torch.nn.functional.hardtanh(x),
    "log1p_exp": torch.log1p(torch.exp(x)), "erf": torch.erf(x), "atan": torch.atan(x),
    "clamp": x.clamp(-1, 2), "abs": x.abs(), "sign": torch.sign(x) * x,
}
for name, y in acts.items():
    (g,) = torch.autograd.grad(y.sum(), x)
    print(f"{name:9s} {y.sum().item():.10f} {g.sum().item():.10f}")

m = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 7 - 0.5
print("sum", m.sum(), m.sum(0), m.sum(1, keepdim=True).shape)
print("mean/std/var", m.mean(), m.std(), m.var(1, unbiased=False), m.std(0, correction=0))
print("max", m.max(), m.max(1), m.min(0).values, m.amax((0, 1)))
print("argmax", m.argmax(), m.argmax(0), m.argmin(1, keepdim=True))
print("prod", m.prod(1), "logsumexp", torch.logsumexp(m, 1), "norm", m.norm(), m.norm(p=1, dim=0))
print("cummax", torch.cummax(m[0], 0).values, "cumprod", torch.cumprod(m[1], 0))
print("median", m.median(), "quantile", torch.quantile(m.flatten(), torch.tensor([0.25, 0.5, 0.9])))
print("all/any", (m > 0).all(), (m > 0).any(1), (m > 0).sum(), torch.count_nonzero(m > 0))
i = torch.arange(10)
print("int ops", i // 3, i % 3, i * 2 + 1, (i ** 2).sum(), i.float().mean(), i.dtype, (i / 4).dtype)
print("promotion", (i + 0.5).dtype, (i + torch.tensor(1.5, dtype=torch.float64)).dtype,
      (torch.ones(2, dtype=torch.float32) + torch.ones(2, dtype=torch.float64)).dtype)
print("isclose", torch.isclose(m, m + 1e-9).all(), torch.allclose(m, m * (1 + 1e-7)), torch.equal(m, m.clone()))
print("nan handling", torch.tensor([1.0, float("nan"), 3.0]).nansum(), torch.isnan(torch.tensor([float("nan"), 1.0])))
print("round", torch.round(m * 10), torch.floor(m * 3), torch.ceil(m * 3), torch.trunc(m * 3), torch.frac(m * 3)[0])

w = torch.tensor([[0.5, -1.5], [2.0, 0.25]], requires_grad=True)
stats = w.std() + w.var(0).sum() + w.logsumexp(1).sum() + w.norm() + w.prod() + w.max() + w.amin(1).sum()
stats.backward()
print("stat grads", w.grad)
