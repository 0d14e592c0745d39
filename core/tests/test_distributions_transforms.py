"""chainrule.distributions.transforms, transformed_distribution and
constraint_registry: inverses, log-dets against autograd Jacobians (Note [transform
event dims]), caching, composition shapes and supports; the parity with torch is in
tests/test_parity_distributions.py."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.distributions import (Normal, TransformedDistribution, biject_to, constraints,
                                     transform_to)
from chainrule.distributions import transforms as T

ELEMENTWISE = [T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform(), T.SoftplusTransform(),
               T.AffineTransform(0.5, -2.0), T.PowerTransform(cr.tensor(2.5, dtype=cr.float64)),
               T.ComposeTransform([T.AffineTransform(1.0, 0.5), T.ExpTransform()])]


@pytest.mark.parametrize("t", ELEMENTWISE, ids=repr)
def test_inverse_and_log_det_match_the_derivative(t):
    x = cr.tensor([0.3, 1.2], dtype=cr.float64, requires_grad=True)
    y = t(x)
    np.testing.assert_allclose(t.inv(y).detach().numpy(), x.detach().numpy(), rtol=1e-10)
    (dy,) = cr.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, y).detach().numpy(),
                               np.log(np.abs(dy.numpy())), rtol=1e-10)


def test_stick_breaking_log_det_is_the_jacobian_determinant():
    x = cr.tensor([0.3, -1.2, 0.4], dtype=cr.float64)
    t = T.StickBreakingTransform()
    x.requires_grad_()
    y = t(x)
    jac = np.stack([cr.autograd.grad(y[i], x, retain_graph=True)[0].numpy() for i in range(3)])
    _, logdet = np.linalg.slogdet(jac)
    x = x.detach()
    assert abs(t.log_abs_det_jacobian(x, t(x)).item() - logdet) < 1e-10
    np.testing.assert_allclose(t.inv(t(x)).numpy(), x.numpy(), rtol=1e-10)
    assert float(t(x).sum()) == pytest.approx(1.0)


def test_cache_returns_the_same_tensors():
    t = T.ExpTransform(cache_size=1)
    x = cr.tensor([0.5])
    y = t(x)
    assert t(x) is y and t.inv(y) is x
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


def test_compose_event_dims_and_shapes():
    t = T.ComposeTransform([T.ExpTransform(), T.ReshapeTransform((4,), (2, 2)),
                            T.IndependentTransform(T.AffineTransform(0.0, 2.0), 2)])
    assert t.domain.event_dim == 1 and t.codomain.event_dim == 2
    assert t.forward_shape((3, 4)) == (3, 2, 2) and t.inverse_shape((3, 2, 2)) == (3, 4)
    x = cr.zeros(3, 4)
    assert t.log_abs_det_jacobian(x, t(x)).shape == (3,)
    with pytest.raises(ValueError, match="different numbers of elements"):
        T.ReshapeTransform((4,), (3,))


def test_cat_and_stack_transforms():
    cat = T.CatTransform([T.ExpTransform(), T.identity_transform], dim=0, lengths=[2, 1])
    x = cr.tensor([0.0, 1.0, 5.0])
    np.testing.assert_allclose(cat(x).numpy(), [1.0, np.e, 5.0], rtol=1e-6)
    np.testing.assert_allclose(cat.log_abs_det_jacobian(x, cat(x)).numpy(), [0.0, 1.0, 0.0])
    stack = T.StackTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], dim=1)
    x = cr.ones(2, 2)
    np.testing.assert_allclose(stack.inv(stack(x)).numpy(), x.numpy(), rtol=1e-6)


def test_transformed_distribution_shapes_support_and_sampling():
    base = Normal(cr.zeros(3, 2), 1.0)
    d = TransformedDistribution(base, [T.ReshapeTransform((2,), (2, 1)), T.ExpTransform()])
    assert d.batch_shape == (3,) and d.event_shape == (2, 1)
    assert d.rsample((5,)).shape == (5, 3, 2, 1) and d.has_rsample
    assert repr(d.support) == "IndependentConstraint(GreaterThan(lower_bound=0.0), 2)"
    cr.manual_seed(0)
    lognormal = TransformedDistribution(Normal(cr.tensor(0.0), cr.tensor(0.5)), T.ExpTransform())
    draws = lognormal.sample((50000,))
    assert abs(draws.mean().item() - np.exp(0.125)) < 0.01
    with pytest.raises(ValueError, match="transforms must be a Transform or"):
        TransformedDistribution(base, [1])


def test_affine_decreasing_cdf_is_flipped():
    d = TransformedDistribution(Normal(0.0, 1.0), T.AffineTransform(0.0, -1.0))
    assert d.cdf(cr.tensor(1.0)).item() == pytest.approx(1 - Normal(0.0, 1.0).cdf(
        cr.tensor(-1.0)).item())


def test_registries_map_constraints_onto_their_sets():
    x = cr.tensor([-3.0, 0.0, 2.0])
    for c in (constraints.positive, constraints.unit_interval, constraints.greater_than(2.0),
              constraints.less_than(-1.0), constraints.interval(-1.0, 3.0)):
        for registry in (biject_to, transform_to):
            assert bool(c.check(registry(c)(x)).all()), (c, registry)
    assert bool(constraints.simplex.check(biject_to(constraints.simplex)(x)))
    assert bool(constraints.lower_cholesky.check(transform_to(constraints.lower_cholesky)(
        cr.ones(2, 2))))
    with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky"):
        biject_to(constraints.lower_cholesky)


def test_new_constraints():
    assert constraints.is_dependent(constraints.dependent)
    with pytest.raises(ValueError, match="Cannot determine validity"):
        constraints.dependent.check(cr.zeros(1))
    assert constraints.less_than(1.0).check(cr.tensor([0.0, 2.0])).tolist() == [True, False]
    assert constraints.multinomial(3).check(cr.tensor([1.0, 2.0])).item()
    assert constraints.positive_semidefinite.check(cr.eye(2)).item()
    assert not constraints.symmetric.check(cr.tensor([[1.0, 2.0], [0.0, 1.0]])).item()
    cat = constraints.cat([constraints.positive, constraints.real], 0, [1, 1])
    assert cat.check(cr.tensor([-1.0, -1.0])).tolist() == [False, True]
