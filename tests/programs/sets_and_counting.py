"""unique, bincount, bucketize, searchsorted, isin, mode: the counting and set functions."""
import torch

x = torch.tensor([3., 1., 3., 2.])
print(torch.unique(x), torch.unique(x, return_inverse=True, return_counts=True, sorted=False))
print(torch.unique(torch.tensor([[1, 2], [1, 2], [0, 1]]), dim=0, return_inverse=True))
print(x.unique(return_counts=True), torch.unique(torch.tensor([[2, 1], [2, 5]])))
print(torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1, 1]), return_counts=True, return_inverse=True))
print(torch.unique_consecutive(torch.tensor([[1, 1], [1, 1], [2, 3]]), dim=0, return_counts=True))
print(torch.bincount(torch.tensor([0, 1, 1, 3])), torch.bincount(torch.tensor([0, 1, 1]), weights=torch.tensor([0.5, 1., 2.]), minlength=4))
print(torch.bincount(torch.tensor([], dtype=torch.long)), torch.tensor([2, 2]).bincount())
for bad in [torch.tensor([-1]), torch.tensor([[1]])]:
    try:
        torch.bincount(bad)
    except RuntimeError as e:
        print(e)
b = torch.tensor([1, 3, 5, 7, 9])
print(torch.bucketize(torch.tensor([1, 5, 9]), b), torch.bucketize(torch.tensor([[1, 5], [9, 0]]), b, right=True))
print(torch.searchsorted(b, torch.tensor([3, 6, 9])), torch.searchsorted(b, torch.tensor([3, 6, 9]), side="right"))
print(torch.searchsorted(torch.tensor([[1, 3, 5], [2, 4, 6]]), torch.tensor([[3], [5]]), side="right"))
print(torch.searchsorted(b, torch.tensor([3, 6]), out_int32=True).dtype)
print(torch.searchsorted(torch.tensor([5, 1, 3]), torch.tensor([2, 4]), sorter=torch.tensor([1, 2, 0])))
print(torch.isin(torch.tensor([1, 2, 3, 4]), torch.tensor([2, 4])), torch.isin(torch.tensor([1, 2]), 2, invert=True))
m = torch.tensor([[1., 2., 2., 3.], [4., 4., 1., 1.]], requires_grad=True)
r = torch.mode(m, dim=1)
print(r.values.detach(), r.indices, r.values.requires_grad)
r.values.sum().backward()
print(m.grad)
print(torch.mode(m.detach(), 0, keepdim=True), m.detach().mode(), torch.mode(torch.tensor(3.)))
