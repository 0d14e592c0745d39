"""chainrule.distributions: differentiable log-densities (gradcheck), sample moments,
KL divergences against Monte Carlo estimates, validation (Note [distribution
validation]); torch parity in tests/programs/distributions_vae_policy.py."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck
from chainrule.distributions import (Bernoulli, Categorical, Exponential, Independent, Laplace,
                                     MultivariateNormal, Normal, OneHotCategorical, Poisson,
                                     Uniform, kl_divergence)


def t(*values):
    return cr.tensor(list(values), dtype=cr.float64, requires_grad=True)


@pytest.mark.parametrize("make, value", [
    (lambda a, b: Normal(a, b.exp()), [0.3, -1.2]),
    (lambda a, b: Laplace(a, b.exp()), [0.3, -1.2]),
    (lambda a, b: Exponential(b.exp()), [0.3, 1.2]),
    (lambda a, b: Bernoulli(logits=a), [1.0, 0.0]),
    (lambda a, b: Categorical(logits=cr.stack([a, b], -1)), [1, 0]),
    (lambda a, b: Poisson(b.exp()), [0.0, 3.0]),
    (lambda a, b: Uniform(a - 3, b.exp() + 1), [0.3, 0.5]),
])
def test_log_prob_and_entropy_are_differentiable(make, value):
    a, b = t(0.2, -0.4), t(0.1, 0.3)
    x = cr.tensor(value, dtype=cr.float64)
    assert gradcheck(lambda a, b: make(a, b).log_prob(x), (a, b))
    if not isinstance(make(a, b), (Poisson,)):
        assert gradcheck(lambda a, b: make(a, b).entropy(), (a, b))


def test_sample_moments():
    cr.manual_seed(0)
    for d in (Normal(cr.tensor(1.5), cr.tensor(0.5)), Laplace(cr.tensor(1.0), cr.tensor(2.0)),
              Exponential(cr.tensor(3.0)), Uniform(cr.tensor(-1.0), cr.tensor(3.0)),
              Bernoulli(cr.tensor(0.3)), Poisson(cr.tensor(4.0))):
        draws = d.sample((40000,)).double()
        assert abs(draws.mean().item() - d.mean.item()) < 0.05 * max(1, d.stddev.item())
        assert abs(draws.var().item() - d.variance.item()) < 0.1 * d.variance.item()
    counts = cr.bincount(Categorical(cr.tensor([0.2, 0.3, 0.5])).sample((20000,)), minlength=3)
    np.testing.assert_allclose(counts.numpy() / 20000, [0.2, 0.3, 0.5], atol=0.02)


def test_rsample_carries_gradients():
    loc, scale = t(0.5), t(2.0)
    Normal(loc, scale).rsample((10,)).sum().backward()
    assert loc.grad.item() == 10.0 and scale.grad is not None


@pytest.mark.parametrize("p, q", [
    (Normal(cr.tensor(0.3), cr.tensor(1.2)), Normal(cr.tensor(-0.5), cr.tensor(0.8))),
    (Laplace(cr.tensor(0.3), cr.tensor(1.2)), Laplace(cr.tensor(-0.5), cr.tensor(0.8))),
    (Exponential(cr.tensor(2.0)), Exponential(cr.tensor(0.7))),
    (MultivariateNormal(cr.zeros(2), cr.tensor([[2.0, 0.5], [0.5, 1.0]])),
     MultivariateNormal(cr.ones(2), scale_tril=cr.tensor([[1.0, 0.0], [0.3, 0.7]]))),
])
def test_kl_matches_monte_carlo(p, q):
    cr.manual_seed(1)
    x = p.sample((200000,))
    estimate = (p.log_prob(x) - q.log_prob(x)).mean().item()
    assert abs(kl_divergence(p, q).item() - estimate) < 0.03


def test_discrete_kls_sum_over_the_support():
    p, q = Categorical(cr.tensor([0.2, 0.3, 0.5])), Categorical(cr.tensor([0.4, 0.4, 0.2]))
    exact = sum(a * np.log(a / b) for a, b in zip([0.2, 0.3, 0.5], [0.4, 0.4, 0.2]))
    assert abs(kl_divergence(p, q).item() - exact) < 1e-6
    oh = kl_divergence(OneHotCategorical(cr.tensor([0.2, 0.3, 0.5])),
                       OneHotCategorical(cr.tensor([0.4, 0.4, 0.2])))
    assert abs(oh.item() - exact) < 1e-6
    b = kl_divergence(Bernoulli(cr.tensor(0.3)), Bernoulli(cr.tensor(0.5))).item()
    assert abs(b - (0.3 * np.log(0.6) + 0.7 * np.log(1.4))) < 1e-6


def test_mvn_parametrisations_agree():
    cov = cr.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=cr.float64)
    x = cr.tensor([0.3, -0.7], dtype=cr.float64)
    by_cov = MultivariateNormal(cr.zeros(2, dtype=cr.float64), covariance_matrix=cov)
    by_prec = MultivariateNormal(cr.zeros(2, dtype=cr.float64),
                                 precision_matrix=cr.linalg.inv(cov))
    by_tril = MultivariateNormal(cr.zeros(2, dtype=cr.float64),
                                 scale_tril=cr.linalg.cholesky(cov))
    values = [d.log_prob(x).item() for d in (by_cov, by_prec, by_tril)]
    np.testing.assert_allclose(values, values[0])
    np.testing.assert_allclose(by_tril.covariance_matrix.numpy(), cov.numpy())


def test_independent_and_validation():
    d = Independent(Normal(cr.zeros(3, 2), cr.ones(3, 2)), 1)
    assert d.batch_shape == (3,) and d.event_shape == (2,)
    assert d.log_prob(cr.zeros(3, 2)).shape == (3,)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        Normal(cr.tensor([0.0]), cr.tensor([-1.0]))
    with pytest.raises(ValueError, match="to be within the support"):
        Uniform(cr.tensor([0.0]), cr.tensor([2.0])).log_prob(cr.tensor([3.0]))
    with pytest.raises(ValueError, match="not both"):
        Bernoulli(probs=cr.tensor(0.5), logits=cr.tensor(0.0))
    assert Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    with pytest.raises(NotImplementedError):
        kl_divergence(Normal(0.0, 1.0), Categorical(cr.tensor([0.5, 0.5])))
