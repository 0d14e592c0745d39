"""A small GAN on a ring of 2-D Gaussians: non-saturating BCE-with-logits losses,
spectral-normalised discriminator, an R1 gradient penalty (create_graph), two
optimizers, detach between the players."""
import math

import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm

torch.manual_seed(0)
MODES = 4
angles = torch.arange(MODES, dtype=torch.float64) * (2 * math.pi / MODES)
centers = torch.stack([angles.cos(), angles.sin()], 1) * 2.0


def real_batch(n):
    idx = torch.randint(0, MODES, (n,))
    return centers[idx] + 0.05 * torch.randn(n, 2, dtype=torch.float64)


G = nn.Sequential(nn.Linear(3, 24), nn.LeakyReLU(0.2), nn.Linear(24, 2)).double()
D = nn.Sequential(spectral_norm(nn.Linear(2, 24)), nn.LeakyReLU(0.2),
                  spectral_norm(nn.Linear(24, 24)), nn.LeakyReLU(0.2, inplace=True),
                  nn.Linear(24, 1)).double()
print(D)
print("D parameters:", [n for n, _ in D.named_parameters()])
print("D buffers:", [n for n, _ in D.named_buffers()])
bce = nn.BCEWithLogitsLoss()
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))

for step in range(25):
    real = real_batch(32).requires_grad_(True)
    fake = G(torch.randn(32, 3, dtype=torch.float64))
    d_real = D(real)
    d_fake = D(fake.detach())
    loss_d = bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))
    grad_real, = torch.autograd.grad(d_real.sum(), real, create_graph=True)
    r1 = grad_real.pow(2).sum(1).mean()
    opt_d.zero_grad()
    (loss_d + 0.5 * r1).backward()
    opt_d.step()

    d_out = D(fake)
    loss_g = bce(d_out, torch.ones_like(d_out))
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    if step % 5 == 0 or step == 24:
        print(f"step {step:2d} D {loss_d.item():.5f} R1 {r1.item():.5f} G {loss_g.item():.5f}")

lin = D[0]
sigma = torch.linalg.matrix_norm(lin.weight.detach(), ord=2)
print("spectral norm of normalised weight: %.4f" % sigma.item())
print("u norm %.4f" % lin.weight_u.norm().item(), "weight_orig", tuple(lin.weight_orig.shape))
print("G grads set:", all(p.grad is not None for p in G.parameters()))
print("D grad of last layer:", [f"{v:.5f}" for v in D[4].weight.grad[0, :4].tolist()])
D.eval()
with torch.no_grad():
    samples = G(torch.randn(200, 3, dtype=torch.float64))
    nearest = torch.cdist(samples, centers).argmin(1)
    counts = torch.bincount(nearest, minlength=MODES)
    print("samples per mode:", counts.tolist())
    print("mean D(real) %.5f mean D(fake) %.5f" % (
        torch.sigmoid(D(real_batch(200))).mean().item(), torch.sigmoid(D(samples)).mean().item()))
print("logits grad_fn:", type(D(samples).grad_fn).__name__)
