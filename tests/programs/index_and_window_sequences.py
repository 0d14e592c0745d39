"""Index and value sequences: tril/triu indices, unravel_index, logspace, range, windows."""
import warnings
import torch

print(torch.tril_indices(3, 3, -1), torch.triu_indices(2, 3, offset=-1), torch.tril_indices(0, 3))
print(torch.triu_indices(4, 4, 1, dtype=torch.int32))
m = torch.arange(9.).reshape(3, 3)
r, c = torch.triu_indices(3, 3)
print(m[r, c])
print(torch.unravel_index(torch.tensor(5), (2, 3)), torch.unravel_index(torch.tensor([[4], [7]]), (3, 3)))
print(torch.unravel_index(torch.tensor([-1, 3]), (2, 2)))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print(torch.range(0, 1, 0.5), torch.range(1, 3, dtype=torch.int64))
print(torch.scalar_tensor(2, dtype=torch.int64), torch.scalar_tensor(1.5))
print(torch.logspace(-1, 1, 3, dtype=torch.float64), torch.logspace(0, 3, 4, base=2, dtype=torch.int64), torch.logspace(0, 1, 5))
for w in [torch.hann_window, torch.hamming_window, torch.bartlett_window]:
    print(w(6, dtype=torch.float64), w(5, periodic=False, dtype=torch.float64), w(1), w(0))
print(torch.blackman_window(6, dtype=torch.float64), torch.kaiser_window(6, dtype=torch.float64), torch.kaiser_window(5, False, 8.0, dtype=torch.float64))
print(torch.hann_window(8).round(decimals=4), torch.hamming_window(4, True, 0.5, 0.3, dtype=torch.float64))
print(torch.vander(torch.tensor([1, 2, 3])), torch.vander(torch.tensor([1., 2.], dtype=torch.float64), N=4, increasing=True))
