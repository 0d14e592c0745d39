"""Aliases, in-place forms, in-place views and small predicates users reach for."""
import torch

x = torch.tensor([1.0, 2.0, 3.0])
print(torch.greater(x, 1.5), x.greater_equal(2), torch.less(x, 2), x.less_equal(2), torch.not_equal(x, 2))
for name in ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "less_equal_", "not_equal_"]:
    y = x.clone()
    getattr(y, name)(2)
    print(name, y, y._version)
y = x.clone(); y.multiply_(2).divide_(4).subtract_(1); print(y)
y = x.clone(); y.negative_(); y.absolute_(); y.sgn_(); print(y)
b = torch.tensor([True, False]); b.logical_and_(torch.tensor([True, True])); b.logical_not_(); print(b)
i = torch.tensor([6, 3, 12]); i.bitwise_and_(5); print(i); i.bitwise_or_(8); print(i); i.bitwise_xor_(1); print(i)
j = torch.tensor([6, 4, 9]); j.gcd_(torch.tensor([4, 6, 3])); print(j); j.lcm_(torch.tensor([5, 5, 5])); print(j)
print(torch.ones(4).cumsum_(0), torch.tensor([-1.0, 0.0, 2.0]).heaviside_(torch.tensor([0.5])))
print(torch.rsub(x, 5), torch.rsub(x, 5, alpha=2))
for fn in ["relu_", "sigmoid_", "tanh_", "exp_", "abs_", "neg_", "sqrt_", "clamp_", "zero_"]:
    z = torch.tensor([-0.5, 0.25, 1.5])
    out = getattr(torch, fn)(z, 0.0, 1.0) if fn == "clamp_" else getattr(torch, fn)(z)
    print(fn, out is z, z)
print(torch.celu_(torch.tensor([-1.0, 2.0])), torch.selu_(torch.tensor([-1.0, 2.0])), torch.threshold_(torch.tensor([-1.0, 2.0]), 0.0, 5.0))
z = torch.ones(2, 3); z.t_(); print(z.shape, z.stride(), z._version)
z = torch.ones(2, 3); z.unsqueeze_(1); print(z.shape); z.squeeze_(); print(z.shape); z.transpose_(0, 1); print(z.shape, z.is_contiguous())
a = torch.ones(2, requires_grad=True)
try:
    a.unsqueeze_(0)
except RuntimeError as e:
    print(e)
b = a * 2
b.unsqueeze_(0)
print(b.shape, b._version)
b.sum().backward()
print(a.grad)
print(x.type_as(torch.zeros(1, dtype=torch.float64)).dtype, x.nbytes, x.itemsize, x.is_cpu, torch.zeros(2, 3).t().dim_order())
print(torch.ones(2, 3).sum_to_size(1, 3), torch.ones(2, 3).sum_to_size((2, 1)))
try:
    torch.ones(2, 3).sum_to_size(4)
except RuntimeError as e:
    print(e)
print(torch.arange(5).split_with_sizes([2, 3]), torch.arange(6).unsafe_chunk(3))
try:
    torch.arange(5).split_with_sizes([2, 2])
except RuntimeError as e:
    print(e)
print(torch.is_same_size(torch.ones(2), torch.zeros(2)), torch.is_nonzero(torch.tensor([0.0])), torch.tensor([1], dtype=torch.uint8).is_signed(), x.is_signed())
for bad in [torch.ones(2), torch.ones(0)]:
    try:
        torch.is_nonzero(bad)
    except RuntimeError as e:
        print(e)
print(torch.numel(torch.ones(2, 3)), torch.is_floating_point(x), torch.is_complex(x), torch.detach(x * 1).requires_grad)
print(torch.conj_physical(torch.tensor([1 + 2j])), x.is_conj(), x.is_neg(), x.resolve_conj() is x, x.output_nr)
