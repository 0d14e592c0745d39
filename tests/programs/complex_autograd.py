"""Complex autograd: a complex-weighted layer trained on a real loss, abs/angle/conj, view_as_real."""
import torch

w = torch.complex(torch.linspace(-1, 1, 6, dtype=torch.float64), torch.linspace(0.5, -0.5, 6, dtype=torch.float64))
w = w.reshape(2, 3).clone().requires_grad_(True)
x = torch.complex(torch.cos(torch.arange(12, dtype=torch.float64)), torch.sin(torch.arange(12, dtype=torch.float64) * 0.3)).reshape(4, 3)
target = torch.linspace(0, 1, 8, dtype=torch.float64).reshape(4, 2)
opt = torch.optim.SGD([w], lr=0.05, momentum=0.9)
for step in range(15):
    z = x @ w.t()
    mag = z.abs()
    loss = ((mag - target) ** 2).mean() + 0.01 * torch.angle(z).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.10f}")
print("w", w.detach())
print("grad", w.grad)
z = torch.tensor([1 + 2j, -0.5 + 0.25j], requires_grad=True)
y = (z * z.conj()).real.sum() + torch.view_as_real(z).prod(-1).sum() + (z.exp() / (1 + z)).imag.sum()
y.backward()
print("z.grad", z.grad)
r = torch.polar(torch.tensor([2.0, 1.0], dtype=torch.float64, requires_grad=True), torch.tensor([0.3, -1.2], dtype=torch.float64))
print("polar", r, torch.view_as_complex(torch.view_as_real(r)).sgn())
