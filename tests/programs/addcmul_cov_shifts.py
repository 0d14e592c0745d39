"""addcmul/addcdiv (as optimizers use them), bit shifts, cov/corrcoef, result_type."""
import torch

x = torch.ones(2, dtype=torch.float64)
a, b = torch.tensor([1., 2.], dtype=torch.float64), torch.tensor([3., 4.], dtype=torch.float64)
print(torch.addcmul(x, a, b, value=0.5), torch.addcdiv(x, a, b, value=2), x.addcmul(a, b))
try:
    torch.addcdiv(torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.long))
except RuntimeError as e:
    print(str(e)[:60])
print(torch.addcmul(torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.long), value=2))
p = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
m, v = torch.zeros(3), torch.zeros(3)
for step in range(1, 4):
    loss = (p ** 2).sum()
    loss.backward()
    with torch.no_grad():
        m.mul_(0.9).add_(p.grad, alpha=0.1)
        v.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
        denom = (v / (1 - 0.999 ** step)).sqrt().add_(1e-8)
        p.addcdiv_(m, denom, value=-0.01 / (1 - 0.9 ** step))
    p.grad = None
print("adam by hand", p)
t1 = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
t2 = torch.tensor([3., 5.], dtype=torch.float64, requires_grad=True)
torch.addcdiv(x, t1, t2, value=3).sum().backward()
print(t1.grad, t2.grad)
print(torch.bitwise_left_shift(torch.tensor([1, 2]), 2), torch.tensor([8]) >> 1, torch.tensor([1]) << 3, torch.bitwise_right_shift(torch.tensor([16, 9]), torch.tensor([2, 1])))
s = torch.tensor([5, 6]); s <<= 1; print(s); s.bitwise_right_shift_(2); print(s)
obs = torch.tensor([[0., 1., 2., 4.], [2., 1., 0.5, 0.]], dtype=torch.float64, requires_grad=True)
c = torch.cov(obs)
print(c, torch.corrcoef(obs))
c.sum().backward()
print(obs.grad)
print(torch.cov(obs.detach(), correction=0), torch.cov(obs.detach(), fweights=torch.tensor([1, 2, 1, 1]), aweights=torch.tensor([0.5, 1.0, 1.0, 2.0], dtype=torch.float64)))
print(torch.cov(torch.tensor([1., 2., 4.])), torch.corrcoef(torch.tensor([[1., 2., 4.], [1., 1., 2.], [3., 1., 0.]])))
print(torch.result_type(torch.ones(1, dtype=torch.int32), 1.0), torch.result_type(2, 3.0), torch.result_type(torch.tensor(1.0, dtype=torch.float64), torch.ones(2)))
print(torch.can_cast(torch.float32, torch.int32), torch.can_cast(torch.int32, torch.float16), torch.can_cast(torch.int64, torch.bool))
