"""Forward-mode AD through chainrule.distributions: reparametrized samples (the
gamma sample's tangent is Note [implicit reparametrization]'s gradient) and
log-densities carry tangents that agree with reverse mode."""
import numpy as np

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD
from chainrule.distributions import Beta, Gamma, StudentT, TransformedDistribution, Normal
from chainrule.distributions.gamma import standard_gamma_grad
from chainrule.distributions.transforms import AffineTransform, TanhTransform


def test_gamma_sample_tangent_is_the_implicit_gradient():
    with fwAD.dual_level():
        c = fwAD.make_dual(cr.tensor([2.0, 0.5], dtype=cr.float64), cr.ones(2, dtype=cr.float64))
        primal, tangent = fwAD.unpack_dual(Gamma(c, 1.0).rsample())
    np.testing.assert_allclose(tangent.numpy(), standard_gamma_grad(np.array([2.0, 0.5]),
                                                                    primal.numpy()))


def _reverse_grad(fn, x):
    x = x.detach().requires_grad_()
    (g,) = cr.autograd.grad(fn(x).sum(), x)
    return g


def test_log_prob_tangents_agree_with_reverse_mode():
    value = cr.tensor([0.3, 0.6], dtype=cr.float64)
    makers = [lambda p: Beta(p, p + 1).log_prob(value),
              lambda p: StudentT(p + 2, p, p).log_prob(value),
              lambda p: TransformedDistribution(Normal(p, 1.0), [AffineTransform(0.1, 2.0),
                                                                 TanhTransform()]).log_prob(value)]
    x = cr.tensor([1.5, 0.7], dtype=cr.float64)
    for fn in makers:
        with fwAD.dual_level():
            out = fn(fwAD.make_dual(x, cr.ones(2, dtype=cr.float64)))
            tangent = fwAD.unpack_dual(out).tangent
        np.testing.assert_allclose(tangent.numpy(), _reverse_grad(fn, x).numpy(), rtol=1e-10)
