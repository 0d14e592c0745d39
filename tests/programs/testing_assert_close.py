"""torch.testing.assert_close as test scripts use it: passes and the failure messages."""
import torch
from torch.testing import assert_close, make_tensor

cases = [(torch.tensor([1., 2.]), torch.tensor([1., 2.5]), {}), (torch.tensor([1., 2.]), torch.tensor([1., 2.], dtype=torch.float64), {}),
         (torch.ones(2), torch.ones(3), {}), (torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]), {}), (1.0, 1.1, {}),
         ([torch.ones(1)], [torch.zeros(1)], {}), (torch.tensor([1, 2]), torch.tensor([1, 3]), {}),
         (torch.ones(2), torch.ones(2) * 1.001, dict(rtol=0, atol=1e-2)), ({'a': torch.ones(1)}, {'a': torch.ones(1) * 2}, {}),
         (torch.tensor(1.), torch.tensor(2.), {}), (torch.tensor([True]), torch.tensor([False]), {}),
         ([1, 2], [1, 2, 3], {}), ({'a': 1}, {'b': 1}, {}), (torch.ones(2), torch.ones(2) * 2, dict(msg='custom')),
         (torch.ones(2), [1., 1.], {}), (torch.ones(2), torch.ones(2), dict(rtol=1.0)),
         (torch.ones(2, 2), torch.ones(2, 2).t(), dict(check_stride=True)),
         (torch.tensor([1.0, float('nan')]), torch.tensor([1.0, float('nan')]), dict(equal_nan=True)),
         (torch.ones(2), torch.ones(2, dtype=torch.float64), dict(check_dtype=False)),
         (torch.zeros(3, 4), torch.zeros(3, 4).index_fill(1, torch.tensor([2]), 1.), {}), ('a', 'b', {}), (1, 1.0, {}), (None, None, {}),
         (torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([1.0, 2.0 + 1e-8], dtype=torch.float64), {}),
         ((torch.ones(2), (torch.ones(1), 3)), (torch.ones(2), (torch.ones(1), 4)), {})]
for a, b, kw in cases:
    try:
        assert_close(a, b, **kw)
        print("ok")
    except Exception as e:
        print(type(e).__name__, "|", e)
t = make_tensor(2, 3, dtype=torch.float32, device="cpu", low=-1, high=1)
print(t.shape, t.dtype, bool((t.abs() <= 1).all()), make_tensor((2,), dtype=torch.int64, device="cpu").dtype)
print(make_tensor(4, dtype=torch.float64, device="cpu", exclude_zero=True).ne(0).all(), make_tensor(3, 2, dtype=torch.bool, device="cpu").dtype)
