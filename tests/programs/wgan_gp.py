"""WGAN-GP on 2-D toy data: critic with gradient penalty (create_graph), generator steps."""
import torch
import torch.nn as nn


def det(*shape, scale=1.0, phase=0.0, dtype=torch.float64):
    # deterministic "random" values: generators differ between libraries
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float64) * 0.7371 + phase) * scale).reshape(shape).to(dtype)


def init_(model, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(det(*p.shape, scale=scale, phase=float(i)).to(p.dtype))


torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2)).double()
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2),
                  nn.Linear(32, 1)).double()
init_(G)
init_(D)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.9))
real_all = torch.cat([det(64, 2, scale=0.1) + torch.tensor([1.0, 1.0], dtype=torch.float64),
                      det(64, 2, scale=0.1, phase=1.0) - 1.0])


def gradient_penalty(real, fake):
    alpha = det(real.size(0), 1, scale=0.5, phase=2.0) + 0.5
    mix = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    score = D(mix)
    grads, = torch.autograd.grad(score, mix, grad_outputs=torch.ones_like(score),
                                 create_graph=True, retain_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


for step in range(30):
    for k in range(3):
        idx = (torch.arange(32) * 7 + step * 3 + k) % real_all.size(0)
        real = real_all[idx]
        fake = G(det(32, 4, phase=step + 0.1 * k)).detach()
        loss_d = D(fake).mean() - D(real).mean() + 10 * gradient_penalty(real, fake)
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
    loss_g = -D(G(det(32, 4, phase=-step))).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    if step % 10 == 0:
        print(f"step {step} loss_d {loss_d.item():.6f} loss_g {loss_g.item():.6f}")
print("final", round(loss_d.item(), 6), round(loss_g.item(), 6))
