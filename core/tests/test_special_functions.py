"""chainrule.special's Bessel, Airy, error-function, incomplete-gamma, zeta and
polynomial functions (_ops/special_functions.py): the pure-NumPy fallbacks against
closed forms and against SciPy on wide ranges, the edge values the reference returns,
the two implementations through the public functions, dtypes and errors.
(Values and gradients against torch: tests/test_parity_special.py.)"""
import math
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import _special, _special_fallbacks as fb, _special_polynomials as poly

try:
    import scipy.special as sp
except ImportError:                                       # pragma: no cover
    sp = None

WIDE = np.concatenate([-np.logspace(-300, 3, 1500), np.logspace(-300, 3, 1500),
                       np.linspace(-40, 40, 2001)])
POSITIVE = WIDE[WIDE > 0]


def _close(mine, ref, rtol, floor):
    """Relative error below ``rtol``, measured against max(|ref|, floor) (absolute near
    the zeros of oscillating functions); equal infinities and nans count as equal."""
    mine, ref = np.asarray(mine), np.asarray(ref)
    same = (mine == ref) | (np.isnan(mine) & np.isnan(ref))
    with np.errstate(all="ignore"):
        err = np.where(same, 0.0, np.abs(mine - ref) / np.maximum(np.abs(ref), floor))
    worst = int(np.argmax(err))
    assert err[worst] <= rtol, f"error {err[worst]:.3g} at index {worst}: {mine[worst]} vs {ref[worst]}"


# --- closed forms: the fallbacks without SciPy to compare with ----------------------------
KNOWN = [
    (fb.bessel_i(0, np.array([0.0])), 1.0), (fb.bessel_j(0, np.array([0.0])), 1.0),
    (fb.spherical_bessel_j0(np.array([math.pi / 2])), 2 / math.pi),
    # I_{1/2}-type identities: K_{1/2}(x) = sqrt(pi / (2x)) e^-x via the K integral
    (fb._scaled_k_integral(0.5, np.array([3.0])), math.sqrt(math.pi / 6)),
    (fb.airy_ai(np.array([0.0])), 0.3550280538878172),
    (fb.erfcx(np.array([0.0])), 1.0), (fb.erfcx(np.array([30.0])), 0.018795888861416751),
    (fb.log_ndtr(np.array([0.0])), -math.log(2)),
    (fb.gammainc(np.array([1.0]), np.array([2.0])), 1 - math.exp(-2)),
    (fb.gammaincc(np.array([0.5]), np.array([2.0])), math.erfc(math.sqrt(2))),
    (fb.zeta(np.array([2.0]), np.array([1.0])), math.pi ** 2 / 6),
    (fb.zeta(np.array([4.0]), np.array([0.5])), 15 * math.pi ** 4 / 90),
    # the derivative identities J0' = -J1 and I0' = I1 by central differences
    ((fb.bessel_j(0, np.array([3.7 + 1e-5])) - fb.bessel_j(0, np.array([3.7 - 1e-5]))) / 2e-5,
     -fb.bessel_j(1, np.array([3.7]))[0]),
]


@pytest.mark.parametrize("index", range(len(KNOWN)))
def test_fallbacks_give_closed_form_values(index):
    got, want = KNOWN[index]
    assert float(np.asarray(got).ravel()[0]) == pytest.approx(want, rel=1e-9 if index == 12 else 1e-13)


def test_bessel_wronskian_holds():
    """J1 Y0 - J0 Y1 = 2 / (pi x) and I0 K1 + I1 K0 = 1 / x: the fallbacks are consistent
    with each other across their range switches."""
    x = np.linspace(0.05, 60.0, 3000)
    w = fb.bessel_j(1, x) * fb.bessel_y(0, x) - fb.bessel_j(0, x) * fb.bessel_y(1, x)
    np.testing.assert_allclose(w, 2 / (np.pi * x), rtol=1e-12)
    x = np.linspace(0.05, 600.0, 3000)
    w = fb.scaled_i(0, x) * fb.scaled_k(1, x) + fb.scaled_i(1, x) * fb.scaled_k(0, x)
    np.testing.assert_allclose(w, 1 / x, rtol=1e-13)


# --- against SciPy on wide ranges ------------------------------------------------------------
needs_scipy = pytest.mark.skipif(sp is None, reason="compares with SciPy")


@needs_scipy
@pytest.mark.parametrize("name, reference, floor", [
    ("i0", "i0", 0), ("i0e", "i0e", 0), ("i1", "i1", 0), ("i1e", "i1e", 0),
    ("modified_bessel_k0", "k0", 1e-300), ("modified_bessel_k1", "k1", 1e-300),
    ("scaled_modified_bessel_k0", "k0e", 0), ("scaled_modified_bessel_k1", "k1e", 0),
    ("bessel_j0", "j0", 1.0), ("bessel_j1", "j1", 1.0), ("bessel_y0", "y0", 1.0),
    ("bessel_y1", "y1", 1.0), ("erfcx", "erfcx", 0), ("log_ndtr", "log_ndtr", 1e-100)])
def test_unary_fallbacks_match_scipy(name, reference, floor):
    x = WIDE[np.abs(WIDE) < 1e3] if name.startswith("bessel") else WIDE
    rtol = 1e-13 if name == "log_ndtr" else 3e-14      # SciPy's own error in log_ndtr's tail
    _close(fb.FALLBACKS[name](x), getattr(sp, reference)(x), rtol, floor)


@needs_scipy
def test_airy_fallback_matches_scipy():
    x = np.concatenate([np.linspace(-60, 30, 4001), np.logspace(-300, 2, 300)])
    _close(fb.airy_ai(x), sp.airy(x)[0], 1e-12, 1.0)
    _close(fb.airy_ai(x[x > 0]), sp.airy(x[x > 0])[0], 3e-13, 1e-300)


@needs_scipy
def test_incomplete_gamma_fallbacks_match_scipy():
    rng = np.random.default_rng(0)
    a = 10 ** rng.uniform(-3, 3, 20000)
    x = a * 10 ** rng.uniform(-2, 1, 20000)
    _close(fb.gammainc(a, x), sp.gammainc(a, x), 1e-11, 1e-290)
    _close(fb.gammaincc(a, x), sp.gammaincc(a, x), 1e-11, 1e-290)


@needs_scipy
def test_zeta_fallback_matches_scipy():
    rng = np.random.default_rng(1)
    s = 1 + 10 ** rng.uniform(-3, 2, 5000)
    q = 10 ** rng.uniform(-3, 3, 5000)
    _close(fb.zeta(s, q), sp.zeta(s, q), 1e-12, 1e-300)


# --- the reference's values at the edges (both implementations) ------------------------------
INF, NAN = math.inf, math.nan
EDGES = {   # values at [-inf, -1, -0., 0., 1e-300, inf, nan], as the reference gives them
    "i0e": [0.0, 0.46575960759364043, 1.0, 1.0, 1.0, 0.0, NAN],
    "i1e": [-0.0, -0.2079104153497085, 0.0, 0.0, 5e-301, 0.0, NAN],
    "erfcx": [INF, 5.008980080762283, 1.0, 1.0, 1.0, 0.0, NAN],
    "log_ndtr": [-INF, -1.841021645009264, -math.log(2), -math.log(2), -math.log(2), -0.0, NAN],
    "airy_ai": [NAN, 0.5355608832923521, 0.3550280538878172, 0.3550280538878172,
                0.3550280538878172, NAN, NAN],
    "bessel_j0": [NAN, 0.7651976865579665, 1.0, 1.0, 1.0, NAN, NAN],
    "bessel_y0": [NAN, NAN, -INF, -INF, -439.8351636227653, NAN, NAN],
    "modified_bessel_k1": [NAN, NAN, INF, INF, 1e300, 0.0, NAN],
    "spherical_bessel_j0": [0.0, 0.8414709848078965, 1.0, 1.0, 1.0, 0.0, NAN],
}


@pytest.fixture(params=["scipy", "fallback"])
def implementation(request, monkeypatch):
    if request.param == "fallback":
        monkeypatch.setitem(sys.modules, "scipy", None)
        monkeypatch.setitem(sys.modules, "scipy.special", None)
    elif sp is None:                                                  # pragma: no cover
        pytest.skip("SciPy is not installed")
    _special.implementation.cache_clear()
    yield request.param
    _special.implementation.cache_clear()


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_values_are_the_references(name, implementation):
    x = cr.tensor([-INF, -1.0, -0.0, 0.0, 1e-300, INF, NAN], dtype=cr.float64)
    got = getattr(cr.special, name)(x).numpy()
    _close(got, np.array(EDGES[name]), 1e-13, 1e-300)


def test_incomplete_gamma_and_zeta_edges(implementation):
    a = cr.tensor([0.0, 0.0, 0.0, -1.0, 1.0, 1.0, INF, INF, 1.0, NAN], dtype=cr.float64)
    x = cr.tensor([0.0, 1.0, -1.0, 1.0, 0.0, INF, 1.0, INF, -1e-300, 1.0], dtype=cr.float64)
    lower = [NAN, 1.0, NAN, NAN, 0.0, 1.0, 0.0, NAN, NAN, NAN]
    _close(cr.special.gammainc(a, x).numpy(), np.array(lower), 0, 1)
    _close(cr.special.gammaincc(a, x).numpy(), 1 - np.array(lower), 0, 1)
    s = cr.tensor([1.0, 0.5, 2.0, 2.0, 2.5, 2.0, 3.0, INF, 2.0, -2.0], dtype=cr.float64)
    q = cr.tensor([1.0, 1.0, 0.0, -1.0, -1.5, -1.5, -1.5, 2.0, INF, 1.0], dtype=cr.float64)
    want = [INF, NAN, INF, INF, NAN, 9.379246644989124, 0.11810202582086413, NAN, NAN, NAN]
    _close(cr.special.zeta(s, q).numpy(), np.array(want), 1e-12, 1)


# --- the orthogonal polynomials -----------------------------------------------------------------
def test_polynomials_match_their_closed_forms():
    x = np.linspace(-0.99, 0.99, 199)
    theta = np.arccos(x)
    for n in range(12):
        np.testing.assert_allclose(poly.chebyshev_t(x, n), np.cos(n * theta), atol=1e-12)
        np.testing.assert_allclose(poly.chebyshev_u(x, n),
                                   np.sin((n + 1) * theta) / np.sin(theta), atol=1e-11)
        legendre = np.polynomial.legendre.Legendre.basis(n)(x)
        np.testing.assert_allclose(poly.legendre_p(x, n), legendre, atol=1e-12)
        hermite = np.polynomial.hermite.Hermite.basis(n)(x)
        np.testing.assert_allclose(poly.hermite_h(x, n), hermite, rtol=1e-12, atol=1e-12)
        hermite_e = np.polynomial.hermite_e.HermiteE.basis(n)(x)
        np.testing.assert_allclose(poly.hermite_he(x, n), hermite_e, rtol=1e-12, atol=1e-12)
        laguerre = np.polynomial.laguerre.Laguerre.basis(n)(x)
        np.testing.assert_allclose(poly.laguerre_l(x, n), laguerre, rtol=1e-12, atol=1e-12)


def test_polynomial_degree_rules():
    f = cr.special.chebyshev_polynomial_t
    x = cr.tensor([0.5, 0.5, 0.5, 0.5], dtype=cr.float64)
    # degrees truncated; negative, nan and inf degrees give 0 (the reference's int cast)
    got = f(x, cr.tensor([2.7, -1.0, NAN, INF], dtype=cr.float64)).tolist()
    assert got == [-0.5, 0.0, 0.0, 0.0]
    assert f(cr.tensor([1, 2]), cr.tensor([3])).dtype == cr.float32
    assert f(0.5, cr.tensor([3])).tolist() == [-1.0]
    assert f(cr.tensor([0.5], dtype=cr.float32), cr.tensor([3.0], dtype=cr.float64)).dtype == cr.float64


# --- public functions: dtypes, errors, aliases, devices ---------------------------------------
def test_dtypes_and_complex_errors():
    assert cr.special.i0(cr.tensor([1, 2])).dtype == cr.float32
    assert cr.special.bessel_j0(cr.tensor([True])).dtype == cr.float32
    assert cr.special.zeta(cr.tensor([2, 3]), cr.tensor([1, 2])).dtype == cr.float32
    with pytest.raises(NotImplementedError, match="\"i0_vml_cpu\" not implemented for 'ComplexFloat'"):
        cr.special.i0(cr.tensor([1 + 1j]))
    with pytest.raises(NotImplementedError, match="\"bessel_j0_cpu\" not implemented"):
        cr.special.bessel_j0(cr.tensor([1 + 1j]))
    with pytest.raises(NotImplementedError, match="\"igamma_cpu\" not implemented for 'Long'"):
        cr.special.gammainc(cr.tensor([1, 2]), cr.tensor([1, 2]))
    with pytest.raises(TypeError, match="argument 'other' \\(position 2\\) must be Tensor"):
        cr.special.gammainc(cr.tensor([1.0]), 2.0)


def test_aliases_and_methods():
    x = cr.tensor([0.5, 2.0])
    for top, special in (("i0", "i0"), ("igamma", "gammainc"), ("igammac", "gammaincc")):
        assert getattr(cr, top).__wrapped__ is getattr(cr.special, special).__wrapped__
    assert x.i0().tolist() == cr.special.i0(x).tolist()
    assert x.igammac(x).tolist() == cr.special.gammaincc(x, x).tolist()
    y = x.clone()
    assert y.igamma_(x) is y and y.tolist() == cr.special.gammainc(x, x).tolist()


def test_derivatives_the_reference_lacks():
    a = cr.tensor([1.5], dtype=cr.float64, requires_grad=True)
    x = cr.tensor([2.0], dtype=cr.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not"):
        cr.special.gammainc(a, x).sum().backward()
    (g,) = cr.autograd.grad(cr.special.gammainc(a.detach(), x).sum(), x)
    assert g.item() == pytest.approx(math.exp(0.5 * math.log(2) - 2 - math.lgamma(1.5)))
    out = cr.special.bessel_j0(x)
    assert not out.requires_grad and out.grad_fn is None


def test_meta_tensors_keep_shapes():
    m = cr.empty(2, 3, device="meta")
    assert cr.special.airy_ai(m).shape == (2, 3)
    assert cr.special.legendre_polynomial_p(m, cr.empty(3, device="meta")).shape == (2, 3)
    assert cr.special.zeta(m, cr.empty(3, device="meta")).shape == (2, 3)
