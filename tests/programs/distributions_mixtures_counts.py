"""Likelihood fitting with torch.distributions beyond the Normal: a Gaussian mixture
(MixtureSameFamily), a negative-binomial count regression, a low-rank factor model and
priors on covariance (Wishart, LKJCholesky) — every loss from log_prob on fixed data, so
no sampled value is printed (the generators differ); then entropies, moments, KLs and
supports of the families, and a Gumbel-softmax relaxation's density."""
import torch
import torch.distributions as D

torch.manual_seed(0)
x = torch.cat([torch.linspace(-3.0, -1.0, 25), torch.linspace(0.5, 3.5, 35)]).double()

# --- two-component Gaussian mixture by maximum likelihood ---------------------------
logits = torch.zeros(2, dtype=torch.float64, requires_grad=True)
locs = torch.tensor([-1.0, 1.0], dtype=torch.float64, requires_grad=True)
log_scales = torch.zeros(2, dtype=torch.float64, requires_grad=True)
opt = torch.optim.Adam([logits, locs, log_scales], lr=0.1)
for step in range(50):
    mix = D.MixtureSameFamily(D.Categorical(logits=logits), D.Normal(locs, log_scales.exp()))
    loss = -mix.log_prob(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0 or step == 49:
        print(f"gmm {step} nll {loss.item():.6f} locs {[round(v, 5) for v in locs.tolist()]}")
print("gmm mean/var/cdf", mix.mean, mix.variance, mix.cdf(torch.tensor([0.0], dtype=torch.float64)))

# --- negative-binomial regression on counts -------------------------------------------
feature = torch.linspace(-1, 1, 20, dtype=torch.float64)
counts = torch.tensor([0, 3, 0, 5, 1, 0, 6, 2, 0, 9, 2, 12, 1, 4, 15, 3, 20, 6, 2, 25],
                      dtype=torch.float64)
w = torch.zeros(2, dtype=torch.float64, requires_grad=True)
log_r = torch.zeros((), dtype=torch.float64, requires_grad=True)
opt = torch.optim.LBFGS([w, log_r], lr=0.5, max_iter=40)


def closure():
    opt.zero_grad()
    nb = D.NegativeBinomial(log_r.exp(), logits=w[0] + w[1] * feature)
    nll = -nb.log_prob(counts).sum()
    nll.backward()
    return nll


for it in range(3):
    nll = opt.step(closure)
    print(f"negbin {it} nll {nll.item():.5f}")
nb = D.NegativeBinomial(log_r.exp().detach(), logits=(w[0] + w[1] * feature).detach())
print("negbin fit", [round(v, 4) for v in w.tolist()], round(log_r.exp().item(), 4), nb.mean[:3], nb.variance[:3])
pois = D.Poisson(nb.mean)
print("poisson vs negbin", pois.log_prob(counts).sum().item(), nb.log_prob(counts).sum().item())

# --- a one-factor model with LowRankMultivariateNormal --------------------------------
data = torch.stack([feature, 0.5 * feature + 0.1, -feature + 0.05 * torch.sin(9 * feature)], -1)
factor = torch.full((3, 1), 0.1, dtype=torch.float64, requires_grad=True)
log_diag = torch.zeros(3, dtype=torch.float64, requires_grad=True)
opt = torch.optim.Adam([factor, log_diag], lr=0.05)
for step in range(40):
    fa = D.LowRankMultivariateNormal(data.mean(0), factor, log_diag.exp())
    loss = -fa.log_prob(data).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("factor model", loss.item(), fa.entropy().item(), fa.variance, torch.linalg.eigvalsh(fa.covariance_matrix))
full = D.MultivariateNormal(data.mean(0), covariance_matrix=fa.covariance_matrix.detach())
print("kl lowrank||full", D.kl_divergence(fa, full).item(), D.kl_divergence(full, fa).item())

# --- priors over covariances ------------------------------------------------------------
cov = torch.tensor([[1.0, 0.3], [0.3, 0.5]], dtype=torch.float64)
wishart = D.Wishart(torch.tensor(5.0, dtype=torch.float64), covariance_matrix=cov)
print("wishart", wishart.log_prob(torch.eye(2, dtype=torch.float64)), wishart.entropy(), wishart.mean, wishart.variance)
corr = D.transforms.CorrCholeskyTransform()(torch.tensor([0.4, -0.3, 0.2], dtype=torch.float64))
lkj = D.LKJCholesky(3, torch.tensor(1.5, dtype=torch.float64))
print("lkj", lkj.log_prob(corr), corr @ corr.mT, lkj.sample((2,)).shape)

# --- the families' summaries ------------------------------------------------------------
c = torch.tensor([0.7, 2.5], dtype=torch.float64)
for d in [D.Gamma(c, 2.0), D.Beta(c, 1.5), D.StudentT(c + 2), D.Gumbel(c, 0.5), D.Weibull(c, 1.5),
          D.Kumaraswamy(c, 2.0), D.InverseGamma(c + 2, 1.0), D.FisherSnedecor(c + 4, c + 5),
          D.HalfCauchy(c), D.Pareto(c, c + 2), D.VonMises(c, c), D.Chi2(c), D.LogNormal(c, 0.3),
          D.ContinuousBernoulli(c / 3), D.Geometric(c / 3), D.Binomial(6, c / 3),
          D.GeneralizedPareto(c, 1.0, c / 5)]:
    try:
        h = d.entropy()
    except NotImplementedError:
        h = "n/a"
    print(type(d).__name__, d.mean, d.variance, h, d.support)
print("kl", D.kl_divergence(D.Gamma(c, 1.0), D.Gamma(c + 1, 2.0)), D.kl_divergence(D.Beta(c, c), D.Uniform(0.0, 1.0)),
      D.kl_divergence(D.Exponential(c), D.Gamma(c, 1.0)), D.kl_divergence(D.Normal(c, 1.0), D.Laplace(0.0, 1.0)))
relaxed = D.RelaxedOneHotCategorical(torch.tensor(0.3), logits=torch.tensor([0.5, -0.2, 1.0]))
print("gumbel-softmax", relaxed.log_prob(torch.tensor([0.2, 0.1, 0.7])), relaxed.rsample((4,)).shape, relaxed.support)
