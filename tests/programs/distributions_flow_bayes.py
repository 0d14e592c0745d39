"""A normalizing flow and a Bayesian regression with torch.distributions: the flow is a
TransformedDistribution trained by maximum likelihood on fixed data; the regression's
variational posterior is trained through reparametrized samples drawn from fixed
noise pushed through the posterior's transforms (the generators differ between
libraries, so no sampled value is printed); densities, KLs, transforms and biject_to."""
import torch
from torch.distributions import (Beta, Dirichlet, Gamma, HalfNormal, LogNormal, Normal,
                                 StudentT, TransformedDistribution, biject_to, constraints,
                                 kl_divergence)
from torch.distributions.transforms import (AffineTransform, ComposeTransform, ExpTransform,
                                            SigmoidTransform, StickBreakingTransform,
                                            TanhTransform)

torch.manual_seed(0)
data = torch.linspace(0.05, 0.95, 40, dtype=torch.float64) ** 2

# --- flow on (0, 1): Normal -> affine -> tanh -> affine into (0, 1) -----------------
loc = torch.zeros(1, dtype=torch.float64, requires_grad=True)
log_scale = torch.zeros(1, dtype=torch.float64, requires_grad=True)
opt = torch.optim.Adam([loc, log_scale], lr=0.05)
base = Normal(torch.tensor(0.0, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64))
for step in range(60):
    flow = TransformedDistribution(base, [AffineTransform(loc, log_scale.exp()), TanhTransform(),
                                          AffineTransform(0.5, 0.5)])
    loss = -flow.log_prob(data.clamp(1e-3, 1 - 1e-3)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 15 == 0 or step == 59:
        print(f"flow step {step} nll {loss.item():.6f} loc {loc.item():.6f} scale {log_scale.exp().item():.6f}")
print("flow cdf", flow.cdf(torch.tensor([0.25, 0.5], dtype=torch.float64)))
print("flow icdf", flow.icdf(torch.tensor([0.25, 0.5], dtype=torch.float64)))

# --- Bayesian linear regression: q(w) = Normal(mu, softplus(rho)), q(sigma) = LogNormal --
x = torch.linspace(-1, 1, 30, dtype=torch.float64)
y = 1.5 * x - 0.3 + 0.1 * torch.sin(7 * x)
mu = torch.zeros(2, dtype=torch.float64, requires_grad=True)
rho = torch.full((2,), -1.0, dtype=torch.float64, requires_grad=True)
s_loc = torch.tensor(-1.0, dtype=torch.float64, requires_grad=True)
eps_w = torch.tensor([[0.3, -1.1], [-0.4, 0.8], [1.2, 0.1], [-0.9, -0.2]], dtype=torch.float64)
eps_s = torch.tensor([0.5, -0.3, 0.9, -1.4], dtype=torch.float64)
prior = Normal(torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64))
opt = torch.optim.Adam([mu, rho, s_loc], lr=0.05)
for step in range(80):
    scale = torch.nn.functional.softplus(rho)
    q_w = Normal(mu, scale)
    q_s = LogNormal(s_loc, torch.tensor(0.3, dtype=torch.float64))
    w = ComposeTransform([AffineTransform(mu, scale)])(eps_w)    # = q_w.rsample() on fixed noise
    sigma = q_s.icdf(Normal(0.0, 1.0).cdf(eps_s))                 # reparametrized too
    pred = w[:, :1] * x + w[:, 1:]
    lik = Normal(pred, sigma.unsqueeze(-1)).log_prob(y).sum(-1).mean()
    kl = kl_divergence(q_w, prior).sum() + kl_divergence(q_s, LogNormal(-1.0, 1.0))
    loss = -(lik - kl)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 0 or step == 79:
        print(f"bayes step {step} elbo {-loss.item():.5f} mu {mu.tolist()} kl {kl.item():.5f}")

# --- densities and gradients of other families ------------------------------------
c = torch.tensor([2.0, 0.7], dtype=torch.float64, requires_grad=True)
r = torch.tensor([3.0, 1.5], dtype=torch.float64, requires_grad=True)
g = Gamma(c, r)
lp = g.log_prob(torch.tensor([0.4, 1.3], dtype=torch.float64)).sum() + g.entropy().sum()
lp.backward()
print("gamma", lp.item(), c.grad, r.grad, g.mean, g.variance, g.rsample((5, 2)).shape)
b = Beta(c.detach(), r.detach())
print("beta", b.log_prob(torch.tensor([0.3, 0.6], dtype=torch.float64)), b.mean, b.entropy())
print("dirichlet", Dirichlet(torch.tensor([1.0, 2.0, 3.0])).log_prob(torch.tensor([0.2, 0.3, 0.5])))
print("studentT", StudentT(torch.tensor(4.0), 1.0, 2.0).log_prob(torch.tensor(0.5)), HalfNormal(torch.tensor(2.0)).cdf(torch.tensor(1.0)))
print("kl", kl_divergence(Gamma(torch.tensor(2.0), torch.tensor(1.0)), Gamma(torch.tensor(3.0), torch.tensor(2.0))),
      kl_divergence(Beta(torch.tensor(2.0), torch.tensor(2.0)), Beta(torch.tensor(1.0), torch.tensor(3.0))))
sb = StickBreakingTransform()
z = torch.tensor([0.2, -0.5, 1.0])
print("stick", sb(z), sb.inv(sb(z)), sb.log_abs_det_jacobian(z, sb(z)))
print(biject_to(constraints.positive), biject_to(constraints.unit_interval), ExpTransform().inv, SigmoidTransform().sign)
print(TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()]).support, g.support, b.support)
try:
    Gamma(torch.tensor([-1.0]), torch.tensor([1.0]))
except ValueError as err:
    print("ValueError", str(err).split(" of distribution")[0])
