"""Parity tier for chainrule.special against torch.special (skips without torch): every
function's values on wide ranges, float64 and float32, with SciPy and with the NumPy
fallbacks (Note [optional scipy]); the gradients of the differentiable ones; the
not-differentiable ones stay without a graph like the reference's."""
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402
from chainrule._ops import _special  # noqa: E402

RNG = np.random.default_rng(0)
WIDE = np.concatenate([-np.logspace(-30, 2.5, 400), np.logspace(-30, 2.5, 400),
                       np.linspace(-30, 30, 601), [0.0, -0.0, np.inf, -np.inf, np.nan]])

# name -> (x values, atol relative to max(|value|, floor)): absolute near the zeros of
# the oscillating functions, relative elsewhere
UNARY = {
    "i0": 0, "i0e": 0, "i1": 0, "i1e": 0, "erfcx": 0, "log_ndtr": 1e-200,
    "modified_bessel_i0": 0, "modified_bessel_i1": 0, "modified_bessel_k0": 1e-290,
    "modified_bessel_k1": 1e-290, "scaled_modified_bessel_k0": 0,
    "scaled_modified_bessel_k1": 0, "bessel_j0": 1.0, "bessel_j1": 1.0, "bessel_y0": 1.0,
    "bessel_y1": 1.0, "airy_ai": 1.0, "spherical_bessel_j0": 1.0,
}


# the reference's own error where it is above float64's: its bessel_j0/j1/y0/y1 are off
# by up to ~4e-7 between 2 and 8, its airy_ai by ~3e-6 near -2 (SciPy and the fallbacks
# agree with each other to 1e-13 there; core/tests/test_special_functions.py)
REFERENCE_ERROR = {"bessel_j0": 1e-6, "bessel_j1": 1e-6, "bessel_y0": 1e-6, "bessel_y1": 1e-6,
                   "airy_ai": 1e-5}


@pytest.fixture(params=["scipy", "fallback"])
def implementation(request, monkeypatch):
    if request.param == "fallback":
        monkeypatch.setitem(sys.modules, "scipy", None)
        monkeypatch.setitem(sys.modules, "scipy.special", None)
    _special.implementation.cache_clear()
    yield request.param
    _special.implementation.cache_clear()


def _assert_close(mine, theirs, rtol, floor):
    mine, theirs = np.asarray(mine, np.float64), np.asarray(theirs, np.float64)
    same = (mine == theirs) | (np.isnan(mine) & np.isnan(theirs))
    with np.errstate(all="ignore"):
        err = np.where(same, 0.0, np.abs(mine - theirs) / np.maximum(np.abs(theirs), floor))
    worst = int(np.argmax(err))
    assert err[worst] <= rtol, f"{err[worst]:.3g} at {worst}: {mine[worst]!r} vs {theirs[worst]!r}"


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_float64(name, implementation):
    ours = getattr(cr.special, name)(cr.tensor(WIDE)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(WIDE)).numpy()
    _assert_close(ours, theirs, REFERENCE_ERROR.get(name, 5e-13), max(UNARY[name], 1e-300))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_float32(name):
    x = WIDE.astype(np.float32)
    ours = getattr(cr.special, name)(cr.tensor(x))
    theirs = getattr(torch.special, name)(torch.tensor(x))
    assert ours.dtype == cr.float32 and theirs.dtype == torch.float32
    # the reference computes in float32 (exp(x^2) in erfcx, airy_ai's phase at -316):
    # ours are float64 values rounded, within 1e-5 of its
    _assert_close(ours.numpy(), theirs.numpy(), 1e-5, max(UNARY[name], 1e-30))


def test_incomplete_gamma_values(implementation):
    a = 10 ** RNG.uniform(-2, 2, 3000)
    x = a * 10 ** RNG.uniform(-1.5, 1, 3000)
    for name in ("gammainc", "gammaincc"):
        ours = getattr(cr.special, name)(cr.tensor(a), cr.tensor(x)).numpy()
        theirs = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x)).numpy()
        # the reference's asymptotic branch (a > 20) is itself good to about 1e-8
        _assert_close(ours, theirs, 1e-7, 1e-250)


def test_zeta_values(implementation):
    s = 1 + 10 ** RNG.uniform(-2, 1.5, 3000)
    q = 10 ** RNG.uniform(-2, 2.5, 3000)
    ours = cr.special.zeta(cr.tensor(s), cr.tensor(q)).numpy()
    theirs = torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy()
    _assert_close(ours, theirs, 1e-12, 1e-300)


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_values(name):
    x = np.concatenate([RNG.uniform(-1.5, 1.5, 2000), [-1.0, 1.0, 0.0, 0.5, 2.0, -2.0] * 5])
    n = RNG.integers(-2, 25, x.shape).astype(np.float64)
    n[:40] += 0.6
    ours = getattr(cr.special, name)(cr.tensor(x), cr.tensor(n)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    scale = np.maximum(np.abs(theirs), 1.0)          # absolute near the polynomials' zeros
    np.testing.assert_allclose(ours / scale, theirs / scale, rtol=0, atol=1e-11)
    assert getattr(cr.special, name)(cr.tensor([0.25]), 3).item() == \
        getattr(torch.special, name)(torch.tensor([0.25]), 3).item()


DIFFERENTIABLE = {"i0": (-4, 4), "i0e": (-4, 4), "i1": (-4, 4), "i1e": (-4, 4),
                  "erfcx": (-3, 8), "log_ndtr": (-10, 5)}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_and_node_names(name):
    x = RNG.uniform(*DIFFERENTIABLE[name], 50)
    x[0] = 0.0
    ours_x = cr.tensor(x, requires_grad=True)
    theirs_x = torch.tensor(x, requires_grad=True)
    ours, theirs = getattr(cr.special, name)(ours_x), getattr(torch.special, name)(theirs_x)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    (g_ours,) = cr.autograd.grad(ours.sum(), ours_x)
    (g_theirs,) = torch.autograd.grad(theirs.sum(), theirs_x)
    np.testing.assert_allclose(g_ours.numpy(), g_theirs.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "zeta"])
def test_binary_gradients_in_other(name):
    a = RNG.uniform(1.2, 5, 20)
    x = RNG.uniform(0.2, 6, 20)
    ours_x, theirs_x = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = getattr(cr.special, name)(cr.tensor(a), ours_x)
    theirs = getattr(torch.special, name)(torch.tensor(a), theirs_x)
    (g_ours,) = cr.autograd.grad(ours.sum(), ours_x)
    (g_theirs,) = torch.autograd.grad(theirs.sum(), theirs_x)
    np.testing.assert_allclose(g_ours.numpy(), g_theirs.numpy(), rtol=1e-9)
    a_ours = cr.tensor(a, requires_grad=True)
    with pytest.raises(NotImplementedError, match="is not implemented"):
        getattr(cr.special, name)(a_ours, ours_x).sum().backward()


@pytest.mark.parametrize("name", sorted(set(UNARY) - set(DIFFERENTIABLE)) + POLYNOMIALS)
def test_not_differentiable_functions_have_no_graph(name):
    args = (3,) if name in POLYNOMIALS else ()
    ours = getattr(cr.special, name)(cr.ones(2, requires_grad=True), *args)
    theirs = getattr(torch.special, name)(torch.ones(2, requires_grad=True), *args)
    assert ours.requires_grad is theirs.requires_grad is False


def test_torch_level_names():
    x = np.array([0.5, 1.5, 3.0])
    assert np.allclose(cr.i0(cr.tensor(x)).numpy(), torch.i0(torch.tensor(x)).numpy(), rtol=1e-14)
    ours = cr.tensor(x).igamma(cr.tensor(x[::-1].copy())).numpy()
    theirs = torch.tensor(x).igamma(torch.tensor(x[::-1].copy())).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-13)
    np.testing.assert_allclose(cr.igammac(cr.tensor(x), cr.tensor(x)).numpy(),
                               torch.igammac(torch.tensor(x), torch.tensor(x)).numpy(), rtol=1e-13)
