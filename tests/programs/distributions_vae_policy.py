"""torch.distributions as VAEs and policy gradients use them (no sampled values printed:
the generators differ; shapes, log-probs, entropies, KLs and gradients are compared)."""
import torch
from torch.distributions import (Normal, Categorical, Bernoulli, Uniform, Exponential, Laplace,
                                 MultivariateNormal, OneHotCategorical, Poisson, Independent,
                                 kl_divergence, constraints)

torch.manual_seed(0)
mu = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
log_sigma = torch.tensor([0.1, -0.3], dtype=torch.float64, requires_grad=True)
q = Normal(mu, log_sigma.exp())
p = Normal(torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64))
kl = kl_divergence(q, p).sum()
kl.backward()
print("kl", kl, mu.grad, log_sigma.grad)
x = torch.tensor([0.2, 0.3], dtype=torch.float64)
print(q.log_prob(x), q.cdf(x), q.icdf(torch.tensor([0.1, 0.9], dtype=torch.float64)), q.entropy(), q.mean, q.stddev, q.variance)
print(q.sample((4, 3)).shape, q.rsample().requires_grad, q.sample().requires_grad, q.batch_shape, q.event_shape)
logits = torch.tensor([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]], dtype=torch.float64, requires_grad=True)
pi = Categorical(logits=logits)
actions = torch.tensor([1, 2])
returns = torch.tensor([1.5, -0.5], dtype=torch.float64)
loss = -(pi.log_prob(actions) * returns).mean() - 0.01 * pi.entropy().mean()
loss.backward()
print("policy", loss, logits.grad, pi.probs, pi.mode, pi.sample((5,)).shape, pi.enumerate_support().shape)
print(Categorical(probs=torch.tensor([0.2, 0.3, 0.5])), Categorical(probs=torch.tensor([1.0, 3.0])).probs)
b = Bernoulli(logits=torch.tensor([0.0, 2.0]))
print(b, b.probs, b.log_prob(torch.tensor([1.0, 0.0])), b.entropy(), b.mean, b.variance, kl_divergence(b, Bernoulli(torch.tensor([0.3, 0.6]))))
u = Uniform(torch.tensor([0.0]), torch.tensor([2.0]))
print(u, u.log_prob(torch.tensor([0.5])), u.entropy(), u.cdf(torch.tensor([0.5])), u.mean, u.variance, u.support)
e = Exponential(torch.tensor(2.0))
print(e, e.log_prob(torch.tensor(1.0)), e.cdf(torch.tensor(1.0)), e.entropy(), kl_divergence(e, Exponential(torch.tensor(1.0))))
l = Laplace(0.0, 1.0)
print(l.cdf(torch.tensor(0.5)), l.icdf(torch.tensor(0.2)), l.log_prob(torch.tensor(-1.0)), kl_divergence(l, Laplace(1.0, 2.0)))
cov = torch.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
m = MultivariateNormal(torch.zeros(2, dtype=torch.float64), covariance_matrix=cov)
m2 = MultivariateNormal(torch.ones(2, dtype=torch.float64), scale_tril=torch.tensor([[1.0, 0.0], [0.3, 0.7]], dtype=torch.float64))
print(m, m.log_prob(torch.ones(2, dtype=torch.float64)), m.entropy(), m.scale_tril, m.precision_matrix, m.variance)
print(kl_divergence(m, m2), m2.covariance_matrix, m.rsample((3,)).shape)
mp = MultivariateNormal(torch.zeros(2, dtype=torch.float64), precision_matrix=torch.linalg.inv(cov))
print(mp.log_prob(torch.ones(2, dtype=torch.float64)))
oh = OneHotCategorical(torch.tensor([0.2, 0.8]))
print(oh.log_prob(torch.tensor([0.0, 1.0])), oh.sample((3,)).shape, oh.entropy())
po = Poisson(torch.tensor([1.0, 4.0]))
print(po.log_prob(torch.tensor([0.0, 3.0])), po.mean, kl_divergence(po, Poisson(torch.tensor([2.0, 2.0]))))
ind = Independent(Normal(torch.zeros(3, 2), torch.ones(3, 2)), 1)
print(ind, ind.batch_shape, ind.event_shape, ind.log_prob(torch.zeros(3, 2)), kl_divergence(ind, ind))
for bad in [lambda: Normal(torch.tensor([0.0]), torch.tensor([-1.0])),
            lambda: Categorical(probs=torch.tensor([0.2, 0.8]), logits=torch.tensor([0.0, 1.0])),
            lambda: q.log_prob(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)),
            lambda: u.log_prob(torch.tensor([3.0])),
            lambda: Bernoulli(torch.tensor([1.5])),
            lambda: kl_divergence(Normal(0.0, 1.0), Bernoulli(0.5))]:
    try:
        bad()
        print("no error")
    except (ValueError, NotImplementedError) as err:
        print(type(err).__name__, err)
print(constraints.positive, constraints.simplex, constraints.interval(0.0, 1.0), Normal(0.0, 1.0, validate_args=False).log_prob(torch.tensor(1.0)))
