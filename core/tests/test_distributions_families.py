"""The distributions beyond the first set (gamma.py, beta.py, ..., the torch-named
submodules): gradcheck of log-densities and entropies, sample moments from large
samples, reparametrized gradients (Note [implicit reparametrization]), validation,
expand, and KL divergences against Monte Carlo estimates. Torch parity lives in
tests/test_parity_distributions.py."""
import importlib

import numpy as np
import pytest

import chainrule as cr
from chainrule import distributions as D
from chainrule.autograd import gradcheck


def t(*values):
    return cr.tensor(list(values), dtype=cr.float64, requires_grad=True)


def v(*values):
    return cr.tensor(list(values), dtype=cr.float64)


DENSITIES = [
    (lambda a, b: D.Gamma(a.exp(), b.exp()), v(0.4, 1.3)),
    (lambda a, b: D.Beta(a.exp(), b.exp()), v(0.4, 0.8)),
    (lambda a, b: D.Dirichlet(cr.stack([a.exp(), b.exp()], -1)), v(0.4, 0.6)),
    (lambda a, b: D.StudentT(a.exp() + 1, b, a.exp()), v(0.4, 1.3)),
    (lambda a, b: D.LogNormal(a, b.exp()), v(0.4, 1.3)),
    (lambda a, b: D.Gumbel(a, b.exp()), v(0.4, 1.3)),
    (lambda a, b: D.Cauchy(a, b.exp()), v(0.4, 1.3)),
    (lambda a, b: D.HalfNormal(b.exp()), v(0.4, 1.3)),
    (lambda a, b: D.Weibull(a.exp(), b.exp()), v(0.4, 1.3)),
    (lambda a, b: D.Kumaraswamy(a.exp(), b.exp()), v(0.4, 0.8)),
    (lambda a, b: D.VonMises(a, b.exp()), v(0.4, 1.3)),
    (lambda a, b: D.InverseGamma(a.exp() + 2, b.exp()), v(0.4, 1.3)),
    (lambda a, b: D.FisherSnedecor(a.exp() + 4, b.exp() + 4), v(0.4, 1.3)),
    (lambda a, b: D.Binomial(10, logits=a), v(3.0, 7.0)),
    (lambda a, b: D.NegativeBinomial(b.exp(), logits=a), v(3.0, 7.0)),
    (lambda a, b: D.Geometric(logits=a), v(3.0, 0.0)),
    (lambda a, b: D.ContinuousBernoulli(logits=a), v(0.4, 0.8)),
    (lambda a, b: D.RelaxedBernoulli(v(0.5, 0.7), logits=a), v(0.4, 0.8)),
    (lambda a, b: D.LowRankMultivariateNormal(a, cr.stack([a, b], -1), b.exp()), v(0.4, 0.8)),
]


@pytest.mark.parametrize("make, value", DENSITIES, ids=lambda x: "" if callable(x) else None)
def test_log_prob_and_entropy_gradcheck(make, value):
    a, b = t(0.2, -0.4), t(0.1, 0.3)
    assert gradcheck(lambda a, b: make(a, b).log_prob(value), (a, b))
    try:
        make(a, b).entropy()
    except NotImplementedError:
        return
    assert gradcheck(lambda a, b: make(a, b).entropy(), (a, b))


MOMENTS = [
    D.Gamma(cr.tensor(2.5), cr.tensor(1.5)), D.Gamma(cr.tensor(0.3), cr.tensor(2.0)),
    D.Chi2(cr.tensor(3.0)), D.Beta(cr.tensor(2.0), cr.tensor(3.0)),
    D.StudentT(cr.tensor(6.0), 1.0, 2.0), D.LogNormal(cr.tensor(0.2), cr.tensor(0.4)),
    D.Gumbel(cr.tensor(1.0), cr.tensor(2.0)), D.HalfNormal(cr.tensor(1.5)),
    D.Pareto(cr.tensor(1.0), cr.tensor(5.0)), D.Weibull(cr.tensor(1.5), cr.tensor(2.0)),
    D.Kumaraswamy(cr.tensor(2.0), cr.tensor(3.0)),
    D.InverseGamma(cr.tensor(6.0), cr.tensor(2.0)), D.FisherSnedecor(cr.tensor(8.0), cr.tensor(12.0)),
    D.Binomial(12, cr.tensor(0.3)), D.Geometric(cr.tensor(0.3)),
    D.NegativeBinomial(cr.tensor(4.0), cr.tensor(0.4)),
    D.ContinuousBernoulli(cr.tensor(0.3)), D.GeneralizedPareto(0.0, 1.0, 0.1),
    D.LowRankMultivariateNormal(cr.zeros(2), cr.tensor([[1.0], [0.5]]), cr.ones(2)),
    D.MixtureSameFamily(D.Categorical(cr.tensor([0.3, 0.7])),
                        D.Normal(cr.tensor([-1.0, 2.0]), cr.tensor([0.5, 1.0]))),
    D.Dirichlet(cr.tensor([1.0, 2.0, 3.0])), D.Multinomial(5, cr.tensor([0.2, 0.3, 0.5])),
    D.Wishart(cr.tensor(6.0), cr.tensor([[2.0, 0.3], [0.3, 1.0]])),
]


@pytest.mark.parametrize("d", MOMENTS, ids=lambda d: type(d).__name__)
def test_sample_moments_match_mean_and_variance(d):
    cr.manual_seed(0)
    draws = d.sample((60000,)).double()
    mean, var = d.mean.double(), d.variance.double()
    sd = var.sqrt()
    assert (draws.mean(0) - mean).abs().le(0.03 * sd.clamp(min=1)).all()
    assert ((draws.var(0) - var).abs() / var).le(0.08).all()


def test_von_mises_samples_have_its_circular_variance():
    cr.manual_seed(3)
    d = D.VonMises(cr.tensor(0.5), cr.tensor(4.0))
    draws = d.sample((60000,)).double()
    assert abs(1 - (draws - 0.5).cos().mean().item() - d.variance.item()) < 0.01
    assert draws.abs().max().item() <= np.pi


def test_lkj_cholesky_samples_are_correlation_factors_with_its_marginals():
    cr.manual_seed(4)
    d = D.LKJCholesky(3, cr.tensor(2.0))
    L = d.sample((40000,))
    assert bool(D.constraints.corr_cholesky.check(L).all())
    L = L.double()
    corr = L @ L.mT
    # the first correlation is Beta(eta - 1 + dim/2, same) on [-1, 1]: mean 0, variance
    # 1 / (2 (eta - 1 + dim / 2) + 1) (the reference's onion sampler, which this follows,
    # gives the later rows other marginals)
    assert abs(corr[:, 1, 0].mean().item()) < 0.01
    assert abs(corr[:, 1, 0].var().item() - 1 / 6) < 0.01


def test_gamma_rsample_gradient_is_the_implicit_one():
    conc, rate = t(2.0, 0.5), t(3.0, 1.0)
    cr.manual_seed(0)
    x = D.Gamma(conc, rate).rsample((20000,))
    x.mean(0).sum().backward()
    # E[x] = concentration / rate: d/dconc = 1 / rate, d/drate = -conc / rate^2
    np.testing.assert_allclose(conc.grad.numpy(), [1 / 3, 1.0], rtol=0.03)
    np.testing.assert_allclose(rate.grad.numpy(), [-2 / 9, -0.5], rtol=0.03)


def test_beta_and_dirichlet_rsample_gradients_match_mean_derivatives():
    a, b = t(2.0), t(3.0)
    cr.manual_seed(1)
    D.Beta(a, b).rsample((40000,)).mean().backward()
    np.testing.assert_allclose([a.grad.item(), b.grad.item()], [3 / 25, -2 / 25], rtol=0.05)


@pytest.mark.parametrize("make", [
    lambda c: D.StudentT(c + 3.0), lambda c: D.LogNormal(c, 1.0), lambda c: D.Weibull(1.0, c + 1),
    lambda c: D.FisherSnedecor(c + 8, 10.0), lambda c: D.Kumaraswamy(c + 1, 2.0),
    lambda c: D.RelaxedBernoulli(cr.tensor(0.5), logits=c),
    lambda c: D.GeneralizedPareto(c, 1.0, 0.1), lambda c: D.ContinuousBernoulli(logits=c)])
def test_rsample_is_differentiable(make):
    c = t(0.5)
    sample = make(c).rsample((5,))
    assert make(c).has_rsample and sample.requires_grad
    (g,) = cr.autograd.grad(sample.sum(), c)
    assert np.isfinite(g.item()) and g.item() != 0


def test_standard_gamma_grad_without_scipy_agrees_with_scipy():
    """Note [implicit reparametrization]'s two paths: SciPy's incomplete gamma, and the
    series / continued fraction used without it (Note [optional scipy])."""
    sp = pytest.importorskip("scipy.special")
    from chainrule.distributions import gamma
    a = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 50.0, 400.0, 3000.0])
    for q in (0.001, 0.3, 0.7, 0.999):
        x = sp.gammaincinv(a, q)
        p, upper = gamma._regularized_gamma(a, x)
        np.testing.assert_allclose(p, sp.gammainc(a, x), rtol=1e-10)
        np.testing.assert_allclose(upper, sp.gammaincc(a, x), rtol=1e-10)
        fallback = gamma._gamma_grad(lambda a, x: gamma._regularized_gamma(a, x)[0],
                                     lambda a, x: gamma._regularized_gamma(a, x)[1], a, x)
        np.testing.assert_allclose(fallback, gamma.standard_gamma_grad(a, x), rtol=1e-7)


def test_validation_messages():
    with pytest.raises(ValueError, match="Expected parameter concentration"):
        D.Gamma(cr.tensor([-1.0]), cr.tensor([1.0]))
    with pytest.raises(ValueError, match="within the support"):
        D.Beta(cr.tensor(2.0), cr.tensor(2.0)).log_prob(cr.tensor(1.5))
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Dirichlet(cr.tensor(1.0))
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count"):
        D.Multinomial(cr.tensor(3), cr.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices"):
        D.LowRankMultivariateNormal(cr.zeros(2), cr.ones(3, 1), cr.ones(2))
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        D.Binomial(cr.tensor([2.0, 3.0]), cr.tensor([0.5, 0.5])).enumerate_support()
    assert D.Gamma(cr.tensor(-1.0), 1.0, validate_args=False).concentration.item() == -1.0


def test_expand_keeps_values():
    for d in (D.Gamma(cr.tensor(2.0), 1.5), D.StudentT(cr.tensor(3.0)), D.Chi2(cr.tensor(2.0)),
              D.LogNormal(0.0, 1.0), D.Beta(cr.tensor(2.0), cr.tensor(3.0)),
              D.Weibull(cr.tensor(1.0), cr.tensor(2.0)), D.Binomial(5, cr.tensor(0.3))):
        wide = d.expand((4,))
        x = d.sample()
        assert wide.batch_shape == (4,) and wide.sample().shape == (4,)
        np.testing.assert_allclose(wide.log_prob(x).numpy(), np.full(4, d.log_prob(x).item()),
                                   rtol=1e-6)


@pytest.mark.parametrize("p, q", [
    (D.Gamma(cr.tensor(2.0), cr.tensor(3.0)), D.Gamma(cr.tensor(1.0), cr.tensor(1.5))),
    (D.Beta(cr.tensor(2.0), cr.tensor(3.0)), D.Beta(cr.tensor(1.5), cr.tensor(1.5))),
    (D.Gumbel(cr.tensor(0.5), cr.tensor(1.2)), D.Gumbel(cr.tensor(0.0), cr.tensor(2.0))),
    (D.Pareto(cr.tensor(1.0), cr.tensor(3.0)), D.Pareto(cr.tensor(0.5), cr.tensor(2.0))),
    (D.LogNormal(cr.tensor(0.5), cr.tensor(0.7)), D.LogNormal(cr.tensor(0.0), cr.tensor(1.0))),
    (D.Normal(cr.tensor(0.5), cr.tensor(1.2)), D.Gumbel(cr.tensor(0.0), cr.tensor(2.0))),
])
def test_kl_matches_monte_carlo(p, q):
    cr.manual_seed(2)
    x = p.sample((200000,))
    estimate = (p.log_prob(x) - q.log_prob(x)).mean().item()
    assert abs(D.kl_divergence(p, q).item() - estimate) < 0.03


def test_torch_named_submodules_import():
    for module, name in [("normal", "Normal"), ("gamma", "Gamma"), ("transforms", "ExpTransform"),
                         ("studentT", "StudentT"), ("utils", "broadcast_all"),
                         ("constraint_registry", "biject_to"), ("kl", "kl_divergence"),
                         ("one_hot_categorical", "OneHotCategoricalStraightThrough"),
                         ("relaxed_categorical", "RelaxedOneHotCategorical")]:
        mod = importlib.import_module(f"chainrule.distributions.{module}")
        assert getattr(mod, name) is getattr(D, name, getattr(mod, name))


def test_mixture_and_straight_through():
    mix = D.MixtureSameFamily(D.Categorical(cr.tensor([0.3, 0.7])),
                              D.Normal(cr.tensor([-1.0, 2.0]), cr.tensor([0.5, 1.0])))
    x = cr.tensor([0.0, 1.0])
    expected = np.log(0.3 * np.exp(D.Normal(-1.0, 0.5).log_prob(x).numpy())
                      + 0.7 * np.exp(D.Normal(2.0, 1.0).log_prob(x).numpy()))
    np.testing.assert_allclose(mix.log_prob(x).numpy(), expected, rtol=1e-6)
    probs = cr.tensor([0.2, 0.8], requires_grad=True)
    sample = D.OneHotCategoricalStraightThrough(probs).rsample((3,))
    (sample * cr.tensor([1.0, 2.0])).sum().backward()
    # straight through the normalised probs: 3 * (w - w . probs) / sum(probs)
    assert sample.sum().item() == 3.0
    np.testing.assert_allclose(probs.grad.numpy(), [-2.4, 0.6], rtol=1e-5)
