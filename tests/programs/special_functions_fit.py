"""Fitting models built from torch.special and Householder reflections: a von Mises
concentration through i0e/i1e, a probit regression through log_ndtr, a gamma CDF's
scale through gammainc, Chebyshev features by least squares, and an orthogonal
Procrustes alignment parametrized by linalg.householder_product."""
import math

import torch

torch.set_default_dtype(torch.float64)

# --- von Mises concentration: maximize sum(kappa cos(theta - mu)) - n log(2 pi I0(kappa)) --
theta = torch.tensor([0.3, -0.2, 0.5, 0.1, -0.4, 0.25, 0.05, -0.1, 0.6, -0.3])
log_kappa = torch.zeros((), requires_grad=True)
opt = torch.optim.Adam([log_kappa], lr=0.1)
for step in range(150):
    kappa = log_kappa.exp()
    log_norm = math.log(2 * math.pi) + torch.special.i0e(kappa).log() + kappa
    nll = -(kappa * torch.cos(theta)).sum() + theta.numel() * log_norm
    opt.zero_grad()
    nll.backward()
    opt.step()
kappa = log_kappa.exp().detach()
print("kappa", round(kappa.item(), 6), "nll", round(nll.item(), 6))
print("mean resultant", round(torch.cos(theta).mean().item(), 6),
      "A(kappa)", round((torch.special.i1e(kappa) / torch.special.i0e(kappa)).item(), 6))

# --- probit regression with log_ndtr --------------------------------------------------------
x = torch.linspace(-2, 2, 40).unsqueeze(1)
y = (x.squeeze(1) + 0.8 * torch.sin(9 * x.squeeze(1)) > 0.1).double()   # not separable
w = torch.zeros(2, requires_grad=True)
opt = torch.optim.LBFGS([w], lr=0.5, max_iter=50)


def probit_loss():
    opt.zero_grad()
    z = w[0] * x.squeeze(1) + w[1]
    loss = -(y * torch.special.log_ndtr(z) + (1 - y) * torch.special.log_ndtr(-z)).mean()
    loss.backward()
    return loss


for _ in range(3):
    loss = opt.step(probit_loss)
print("probit w", [round(v, 5) + 0.0 for v in w.tolist()], "loss", round(loss.item(), 6))
print("erfcx at the tail", torch.special.erfcx(torch.tensor([10.0, 30.0])))

# --- gamma CDF scale through gammainc (differentiable in x) -------------------------------------
shape = torch.tensor([2.5])
times = torch.tensor([0.5, 1.0, 2.0, 4.0, 8.0])
observed = torch.tensor([0.05, 0.2, 0.55, 0.85, 0.99])
log_scale = torch.zeros(1, requires_grad=True)
opt = torch.optim.Adam([log_scale], lr=0.05)
for step in range(300):
    cdf = torch.special.gammainc(shape.expand(5), times / log_scale.exp())
    loss = ((cdf - observed) ** 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("gamma scale", round(log_scale.exp().item(), 5), "residual", round(loss.item(), 7))
print("upper tail", torch.special.gammaincc(shape, torch.tensor([6.0])))

# --- Chebyshev features by least squares ----------------------------------------------------------
t = torch.linspace(-1, 1, 25)
target = torch.exp(t) * torch.cos(3 * t)
features = torch.stack([torch.special.chebyshev_polynomial_t(t, n) for n in range(8)], dim=1)
coef = torch.linalg.lstsq(features, target.unsqueeze(1)).solution.squeeze(1)
print("chebyshev coefficients", coef)
print("max fit error", round((features @ coef - target).abs().max().item(), 6))
print("legendre P3", torch.special.legendre_polynomial_p(torch.tensor([0.5, -0.25]), 3))
print("hermite H4", torch.special.hermite_polynomial_h(torch.tensor([0.5]), 4))

# --- orthogonal Procrustes through Householder reflectors ----------------------------------------
k = torch.arange(30.0)
points = torch.stack([torch.sin(k), torch.cos(2 * k), k / 15 - 1], dim=1)


def rotation(vectors):
    """Two reflections (tau = 2 / |v|^2: exact reflectors) make a rotation."""
    v = vectors.tril(-1) + torch.eye(3, 2)
    square = torch.cat([vectors, torch.zeros(3, 1)], dim=1)
    return torch.linalg.householder_product(square, 2 / (v * v).sum(0))


true_q = rotation(torch.tensor([[0.0, 0.0], [0.4, 0.0], [-0.7, 0.9]]))
rotated = points @ true_q.T
vectors = torch.tensor([[0.0, 0.0], [0.1, 0.0], [0.1, 0.1]], requires_grad=True)
opt = torch.optim.Adam([vectors], lr=0.05)
for step in range(300):
    loss = ((points @ rotation(vectors).T - rotated) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("procrustes loss", round(loss.item(), 8), "det", round(torch.linalg.det(rotation(vectors)).item(), 6))
a, tau_qr = torch.geqrf(points[:5])
q5 = torch.linalg.householder_product(a, tau_qr)
print("geqrf R diag", a.diagonal(), "tau", tau_qr)
print("Q orthonormal", torch.allclose(q5.T @ q5, torch.eye(3)), "QR = A", torch.allclose(q5 @ a.triu()[:3], points[:5]))
print("ormqr", torch.ormqr(a, tau_qr, torch.ones(5, 1)).squeeze(1))

# --- special values -------------------------------------------------------------------------------
v = torch.tensor([0.5, 1.0, 10.0])
print("i0", torch.i0(v), "zeta", torch.special.zeta(torch.tensor([2.0, 4.0]), 1.0))
print("k0", torch.special.modified_bessel_k0(v), "airy", torch.special.airy_ai(torch.tensor([-1.0, 0.0, 1.0])))
print("j0 at 20", torch.special.bessel_j0(torch.tensor([20.0])), "sinc-like", torch.special.spherical_bessel_j0(v))
