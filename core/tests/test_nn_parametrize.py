"""nn.utils.parametrize (Note [parametrized attributes]), parametrizations.weight_norm /
spectral_norm and the hook-based weight_norm / spectral_norm."""
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn.utils import parametrizations, parametrize


class Double(nn.Module):
    def forward(self, x):
        return x * 2

    def right_inverse(self, x):
        return x / 2


class Halves(nn.Module):
    """Two originals: weight = a + b."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, w):
        return w / 2, w / 2


def linear():
    m = nn.Linear(3, 2).double()
    with cr.no_grad():
        m.weight.copy_(cr.arange(6, dtype=cr.float64).reshape(2, 3) - 2)
    return m


def test_register_read_assign_and_remove():
    m, other = linear(), linear()
    original = m.weight
    parametrize.register_parametrization(m, "weight", Double())
    assert type(m).__name__ == "ParametrizedLinear" and type(other).__name__ == "Linear"
    assert m.parametrizations.weight.original is original
    np.testing.assert_array_equal(m.weight.detach().numpy(), 2 * original.detach().numpy())
    m(cr.ones(1, 3, dtype=cr.float64)).sum().backward()
    assert original.grad.tolist() == [[2.0] * 3] * 2
    m.weight = cr.ones(2, 3, dtype=cr.float64)
    assert original.tolist() == [[0.5] * 3] * 2
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and m.weight is original and m.weight.tolist() == [[1.0] * 3] * 2
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(m, "weight")


def test_several_originals_chains_and_cache():
    m = parametrize.register_parametrization(linear(), "weight", Halves())
    names = [n for n, _ in m.named_parameters()]
    assert names == ["bias", "parametrizations.weight.original0",
                     "parametrizations.weight.original1"]
    parametrize.register_parametrization(m, "weight", Double())
    np.testing.assert_array_equal(m.weight.detach().numpy(), 2 * linear().weight.detach().numpy())
    with parametrize.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    with pytest.raises(ValueError, match="sequence of tensors"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)


def test_unsafe_checks_and_missing_inverse():
    class Grow(nn.Module):
        def forward(self, x):
            return cr.cat([x, x])
    with pytest.raises(ValueError, match="may not change the shape or dtype"):
        parametrize.register_parametrization(linear(), "weight", Grow())
    m = parametrize.register_parametrization(linear(), "weight", Grow(), unsafe=True)
    assert m.weight.shape == (4, 3)
    with pytest.raises(RuntimeError, match="Grow does not implement right_inverse"):
        m.weight = cr.zeros(4, 3, dtype=cr.float64)


def test_registration_evaluates_the_parametrization_once_and_leaves_a_failed_module_alone():
    calls = []

    class Count(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x
    parametrize.register_parametrization(linear(), "weight", Count())
    assert len(calls) == 1                    # spectral_norm's power iteration steps once

    class Grow(nn.Module):
        def forward(self, x):
            return cr.cat([x, x])
    m = linear()
    with pytest.raises(ValueError, match="may not change the shape or dtype"):
        parametrize.register_parametrization(m, "weight", Grow())
    assert not parametrize.is_parametrized(m) and m.weight.shape == (2, 3)


def test_hook_spectral_norm_starts_raw_and_iterates_v_first():
    m = nn.utils.spectral_norm(linear())
    raw = m.weight_orig.detach().clone()
    assert cr.equal(m.weight, raw) and not m.weight.requires_grad
    u0 = m.weight_u.clone()
    m(cr.ones(1, 3, dtype=cr.float64))
    v = nn.functional.normalize(raw.T.mv(u0), dim=0)
    u = nn.functional.normalize(raw.mv(v), dim=0)
    np.testing.assert_allclose(m.weight_v.numpy(), v.numpy())
    np.testing.assert_allclose(m.weight.detach().numpy(), (raw / u.dot(raw.mv(v))).numpy())


def test_hook_spectral_norm_follows_buffers_replaced_by_a_dtype_change():
    m = nn.utils.spectral_norm(nn.Linear(3, 2)).double()
    out = m(cr.ones(1, 3, dtype=cr.float64))
    assert out.dtype == cr.float64 and m.weight_u.dtype == cr.float64
    assert not cr.equal(m.weight_v, cr.zeros(3, dtype=cr.float64))    # updated in place


def test_weight_norm_parametrization_gradients_and_values():
    m = parametrizations.weight_norm(linear())
    g, v = m.parametrizations.weight.original0, m.parametrizations.weight.original1
    np.testing.assert_allclose(m.weight.detach().numpy(), linear().weight.detach().numpy())
    assert g.shape == (2, 1)
    assert cr.autograd.gradcheck(lambda g_, v_: parametrizations._WeightNorm(0)(g_, v_),
                                 (g.detach().requires_grad_(), v.detach().requires_grad_()))


def test_spectral_norm_divides_by_the_largest_singular_value():
    m = parametrizations.spectral_norm(linear())
    for _ in range(20):
        m(cr.ones(1, 3, dtype=cr.float64))
    assert abs(np.linalg.norm(m.weight.detach().numpy(), 2) - 1) < 1e-6


def test_hook_forms_and_their_removal():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = nn.utils.weight_norm(linear())
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_g", "weight_v"]
    expected = linear().weight.detach().numpy().sum(1) + m.bias.detach().numpy()
    np.testing.assert_allclose(m(cr.ones(1, 3, dtype=cr.float64)).detach().numpy()[0], expected)
    nn.utils.remove_weight_norm(m)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]
    s = nn.utils.spectral_norm(linear())
    assert list(s.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    nn.utils.remove_spectral_norm(s)
    assert list(s.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(s)
