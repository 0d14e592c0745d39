"""chainrule.distributions with device tensors: samples, log-densities, entropies and
KL divergences stay on the device and agree with the host's; the gamma and von Mises
samplers draw there (Note [random numbers on a device]); reparametrized samples carry
gradients back to device parameters."""
import numpy as np
import pytest

import chainrule as cr
from chainrule import distributions as D

from runtime_support import needs_device

pytestmark = needs_device


def _t(value, device):
    return cr.tensor(value, dtype=cr.float64, device=device)


MAKERS = [
    ("Gamma", lambda t: D.Gamma(t([2.0, 0.4]), t([1.0, 3.0])), [0.5, 1.2]),
    ("Beta", lambda t: D.Beta(t([2.0, 0.4]), t([1.0, 3.0])), [0.5, 0.2]),
    ("Dirichlet", lambda t: D.Dirichlet(t([[2.0, 0.4, 1.0]])), [[0.5, 0.2, 0.3]]),
    ("StudentT", lambda t: D.StudentT(t([3.0, 5.0]), 0.5, 2.0), [0.5, 1.2]),
    ("Chi2", lambda t: D.Chi2(t([3.0, 5.0])), [0.5, 1.2]),
    ("LogNormal", lambda t: D.LogNormal(t([0.0, 1.0]), t([1.0, 0.5])), [0.5, 1.2]),
    ("Gumbel", lambda t: D.Gumbel(t([0.0, 1.0]), t([1.0, 0.5])), [0.5, 1.2]),
    ("Cauchy", lambda t: D.Cauchy(t([0.0, 1.0]), t([1.0, 0.5])), [0.5, 1.2]),
    ("HalfNormal", lambda t: D.HalfNormal(t([1.0, 0.5])), [0.5, 1.2]),
    ("Weibull", lambda t: D.Weibull(t([1.0, 0.5]), t([2.0, 1.5])), [0.5, 1.2]),
    ("VonMises", lambda t: D.VonMises(t([0.0, 1.0]), t([2.0, 0.5])), [0.5, 1.2]),
    ("Binomial", lambda t: D.Binomial(5, t([0.3, 0.6])), [1.0, 4.0]),
    ("Geometric", lambda t: D.Geometric(t([0.3, 0.6])), [1.0, 4.0]),
    ("NegativeBinomial", lambda t: D.NegativeBinomial(t([3.0, 2.0]), t([0.3, 0.6])), [1.0, 4.0]),
    ("Multinomial", lambda t: D.Multinomial(4, t([0.2, 0.3, 0.5])), [1.0, 1.0, 2.0]),
    ("RelaxedOneHotCategorical",
     lambda t: D.RelaxedOneHotCategorical(t(0.5), t([0.2, 0.3, 0.5])), [0.2, 0.3, 0.5]),
    ("ContinuousBernoulli", lambda t: D.ContinuousBernoulli(t([0.3, 0.8])), [0.5, 0.2]),
    ("LowRankMultivariateNormal",
     lambda t: D.LowRankMultivariateNormal(t([0.0, 1.0]), t([[1.0], [0.5]]), t([1.0, 2.0])),
     [0.5, 1.2]),
    ("MixtureSameFamily", lambda t: D.MixtureSameFamily(
        D.Categorical(t([0.3, 0.7])), D.Normal(t([0.0, 2.0]), t([1.0, 0.5]))), 0.5),
    ("LogisticNormal", lambda t: D.LogisticNormal(t([0.0, 1.0]), t([1.0, 0.5])),
     [0.2, 0.3, 0.5]),
    ("LKJCholesky", lambda t: D.LKJCholesky(3, t(2.0)),
     [[1.0, 0.0, 0.0], [0.28, 0.96, 0.0], [-0.2, 0.5, 0.8426149773176359]]),
]


@pytest.mark.parametrize("name, make, value", MAKERS, ids=[m[0] for m in MAKERS])
def test_distribution_runs_on_the_device_and_matches_the_host(name, make, value):
    on_device = make(lambda v: _t(v, "cuda"))
    on_host = make(lambda v: _t(v, "cpu"))
    sample = on_device.sample((4,))
    assert sample.device.type == "cuda" and sample.shape == on_host.sample((4,)).shape
    log_prob = on_device.log_prob(_t(value, "cuda"))
    assert log_prob.device.type == "cuda"
    np.testing.assert_allclose(log_prob.cpu().numpy(), on_host.log_prob(_t(value, "cpu")).numpy(),
                               rtol=1e-10)
    try:
        entropy = on_device.entropy()
    except NotImplementedError:
        return
    np.testing.assert_allclose(entropy.cpu().numpy(), on_host.entropy().numpy(), rtol=1e-10)


def test_gamma_samples_on_the_device_have_its_moments_and_gradient():
    conc = cr.tensor([2.0, 0.5], dtype=cr.float64, device="cuda", requires_grad=True)
    cr.manual_seed(0)
    x = D.Gamma(conc, 1.0).rsample((40000,))
    assert x.device.type == "cuda"
    np.testing.assert_allclose(x.mean(0).detach().cpu().numpy(), [2.0, 0.5], rtol=0.03)
    x.mean(0).sum().backward()
    np.testing.assert_allclose(conc.grad.cpu().numpy(), [1.0, 1.0], rtol=0.05)


def test_kl_divergence_on_the_device():
    p = D.Beta(_t([2.0], "cuda"), _t([3.0], "cuda"))
    q = D.Beta(_t([1.0], "cuda"), _t([1.5], "cuda"))
    kl = D.kl_divergence(p, q)
    host = D.kl_divergence(D.Beta(_t([2.0], "cpu"), _t([3.0], "cpu")),
                           D.Beta(_t([1.0], "cpu"), _t([1.5], "cpu")))
    assert kl.device.type == "cuda"
    np.testing.assert_allclose(kl.cpu().numpy(), host.numpy(), rtol=1e-12)
