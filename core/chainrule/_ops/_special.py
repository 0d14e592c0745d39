"""NumPy implementations of the special functions behind the elementwise ops (erfc,
erfinv, lgamma, digamma, polygamma).

Note [optional scipy]
    SciPy's versions are used where SciPy is importable: it is an optional dependency,
    imported at the first call (not with chainrule: it costs import time and starts a
    BLAS thread pool of its own). Without it, the pure-NumPy fallbacks below give the
    same values to about 1e-13; the tests run both (``implementation.cache_clear()``
    with SciPy hidden forces the fallbacks).
"""
import functools
import math

import numpy as np

from .._dtypes import scalar_type_name
from .._meta import MetaArray
from .._tensor import DEVICE_ARRAY_TYPES, asarray, on_device_of


@functools.cache
def implementation(name):
    """The float64 array function for ``name``: SciPy's, else the fallback."""
    try:
        import scipy.special as sp
    except ImportError:
        return FALLBACKS[name]
    return {"erf": sp.erf, "erfc": sp.erfc, "erfinv": sp.erfinv, "lgamma": _scipy_lgamma(sp),
            "digamma": sp.psi, "polygamma": sp.polygamma, **_scipy_torch_special(sp)}[name]


def _scipy_torch_special(sp):
    """SciPy's functions behind chainrule.special's Bessel, Airy, error-function and
    incomplete-gamma names (the reference's values at +-inf where SciPy's differ)."""
    def nan_at_inf(fn):
        return lambda x: np.where(np.isinf(x), np.nan, fn(x))
    return {"i0": sp.i0, "i0e": sp.i0e, "i1": sp.i1, "i1e": sp.i1e, "erfcx": sp.erfcx,
            "log_ndtr": sp.log_ndtr, "gammainc": sp.gammainc, "gammaincc": sp.gammaincc,
            "zeta": _scipy_zeta(sp), "bessel_j0": nan_at_inf(sp.j0),
            "bessel_j1": nan_at_inf(sp.j1), "bessel_y0": nan_at_inf(sp.y0),
            "bessel_y1": nan_at_inf(sp.y1), "modified_bessel_i0": sp.i0,
            "modified_bessel_i1": sp.i1, "modified_bessel_k0": sp.k0,
            "modified_bessel_k1": sp.k1, "scaled_modified_bessel_k0": sp.k0e,
            "scaled_modified_bessel_k1": sp.k1e, "airy_ai": nan_at_inf(lambda x: sp.airy(x)[0]),
            "spherical_bessel_j0": _FALLBACK_MODULE().spherical_bessel_j0}


def _scipy_zeta(sp):
    def zeta(s, q):
        out = sp.zeta(s, q)
        pole = (q <= 0) & (q == np.floor(q)) & (s > 1)        # the reference: inf there
        return np.where(pole, np.inf, np.where(np.isinf(s) | np.isinf(q), np.nan, out))
    return zeta


def _FALLBACK_MODULE():
    from . import _special_fallbacks
    return _special_fallbacks


# The reference's kernel names where they are not "<name>_cpu" (Note [kernels without a
# dtype]); polygamma's depends on its order.
_KERNELS = {"erf": "erf_vml_cpu", "erfc": "erfc_vml_cpu", "erfinv": "erfinv_vml_cpu",
            "lgamma": "lgamma_vml_cpu", "digamma": "digamma", "i0": "i0_vml_cpu",
            "gammainc": "igamma_cpu", "gammaincc": "igammac_cpu"}


def _kernel_name(name, args):
    if name == "polygamma":
        return ("digamma", "trigamma")[args[0]] if args[0] < 2 else "polygamma"
    return _KERNELS.get(name, f"{name}_cpu")


def in_float64(name, x, *args):
    """``implementation(name)`` on ``x`` computed in float64, returned in x's dtype."""
    if x.dtype.kind == "c":
        raise NotImplementedError(f"\"{_kernel_name(name, args)}\" not implemented for "
                                  f"'{scalar_type_name(x.dtype)}'")
    fn = implementation(name)
    if type(x) is MetaArray:
        return MetaArray.like(x)                 # Note [meta arrays]: no values
    if type(x) is not np.ndarray and type(x) in DEVICE_ARRAY_TYPES:
        fn = _device_implementation(name)
        if fn is None:         # (np.vectorize of math's: host arrays only) a round trip
            return on_device_of(in_float64(name, x.get(), *args), x)
    if x.dtype == np.float64:
        return asarray(fn(*args, x), np.float64)
    with np.errstate(over="ignore"):            # beyond float32's range: inf, silently
        return asarray(fn(*args, x.astype(np.float64))).astype(x.dtype)


def in_float64_binary(name, a, b):
    """``implementation(name)(a, b)`` computed in float64 on the broadcast operands
    (same dtype), returned in their dtype."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    if type(a) is MetaArray or type(b) is MetaArray:
        return MetaArray.empty(shape, a.dtype)               # Note [meta arrays]
    fn = implementation(name)
    if type(a) in DEVICE_ARRAY_TYPES or type(b) in DEVICE_ARRAY_TYPES:
        fn = FALLBACKS[name]                             # Note [device fallbacks]
    out = fn(a.astype(np.float64), b.astype(np.float64))
    with np.errstate(over="ignore"):
        return asarray(np.broadcast_to(out, shape), np.float64).astype(a.dtype)


def _device_implementation(name):
    """What computes ``name`` on a device array: SciPy's ufuncs (the device layer runs
    them as its kernels), else the fallback when it is array code (digamma, polygamma,
    erfinv run where the array lives); None when only math's scalar functions remain."""
    fallback = FALLBACKS[name]
    if getattr(fallback, "device_code", False):      # Note [device fallbacks]
        return fallback
    fn = implementation(name)
    if isinstance(fn, np.ufunc) or getattr(fn, "array_code", False):
        return fn
    return None if isinstance(fallback, np.vectorize) else fallback


def _scipy_lgamma(sp):
    def lgamma(x):
        out = sp.gammaln(x)
        return np.where(np.isneginf(x), np.inf, out)   # log|Gamma(-inf)|: inf, like torch
    lgamma.array_code = True           # (gammaln is a ufunc: it runs on a device too)
    return lgamma


def _lgamma_scalar(v):
    try:
        return math.lgamma(v)
    except ValueError:                 # the poles 0, -1, -2, ...
        return math.inf


def _vectorized(fn):
    return np.vectorize(fn, otypes=[np.float64])


erf_fallback = _vectorized(math.erf)
erfc_fallback = _vectorized(math.erfc)
lgamma_fallback = _vectorized(_lgamma_scalar)


def digamma_fallback(x):
    """psi(x): reflection below 1/2, recurrence up to 10, then the asymptotic series
    (its first omitted term is below 1e-14 there)."""
    x = asarray(x, np.float64)
    reflect = x < 0.5
    y = np.where(reflect, 1 - x, x)
    shift = np.zeros_like(y)
    with np.errstate(invalid="ignore", divide="ignore"):
        for _ in range(10):                     # y >= 0.5: at most 10 steps to 10
            small = y < 10
            shift -= np.where(small, 1 / np.where(small, y, 1), 0)
            y = np.where(small, y + 1, y)
        inv2 = 1 / (y * y)
        series = np.log(y) - 0.5 / y - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (
            1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132 - inv2 * 691 / 32760)))))
        psi = series + shift
        out = np.where(reflect, psi - np.pi / np.tan(np.pi * x), psi)
    out = np.where(x == 0, np.copysign(np.inf, -np.copysign(1.0, x)), out)
    return np.where((x < 0) & (x == np.floor(x)), np.nan, out)      # negative integers


# B_2j / (2j)! for the Euler-Maclaurin tail of the Hurwitz zeta function
_ZETA_TAIL = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
              -691 / 1307674368000, 1 / 74724249600]


def hurwitz_zeta_fallback(s, x):
    """zeta(s, x) = sum_k (x + k)**-s for an integer s >= 2: the first terms summed
    until x + k >= 10 + s, then the Euler-Maclaurin tail."""
    x = asarray(x, np.float64)
    bound = 10.0 + s
    total = np.zeros_like(x)
    a = np.where(np.isfinite(x), x, np.abs(x))      # -inf and nan never reach the bound
    a = np.where(a == 0, 0.0, a)                    # the pole at -0. as at +0.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        while True:
            small = a < bound
            if not small.any():
                break
            total += np.where(small, np.power(np.where(small, a, 1.0), -float(s)), 0)
            a = np.where(small, a + 1, a)
        tail = a ** (1.0 - s) / (s - 1) + 0.5 * a ** -float(s)
        rising = float(s)                       # s (s+1) ... (s+2j-2)
        for j, coefficient in enumerate(_ZETA_TAIL, start=1):
            tail += coefficient * rising * a ** (-s - 2.0 * j + 1)
            rising *= (s + 2 * j - 1) * (s + 2 * j)
    return total + tail


def polygamma_fallback(n, x):
    """The n-th derivative of digamma: (-1)**(n+1) n! zeta(n + 1, x) for n >= 1."""
    if n == 0:
        return digamma_fallback(x)
    x = asarray(x, np.float64)
    out = (-1.0) ** (n + 1) * math.factorial(n) * hurwitz_zeta_fallback(n + 1, x)
    return np.where(np.isnan(x) | np.isneginf(x), np.nan, out)


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def erfinv_fallback(y):
    """erf's inverse: Winitzki's approximation, then Halley steps on erf (|y| <= 1/2)
    or on erfc (beyond, where 1 - |y| is exact and erf(x) - y would cancel)."""
    y = asarray(y, np.float64)
    a = np.abs(y)
    inside = a < 1
    q = np.where(inside, 1 - a, 0.5)           # 1 - |y|, exact for |y| >= 1/2
    p = np.where(inside, a, 0.5)
    log_term = np.log(q * (2 - q))              # log(1 - y**2)
    c = 2 / (math.pi * 0.147) + log_term / 2
    x = np.sqrt(np.sqrt(c * c - log_term / 0.147) - c)
    tail = p > 0.5
    for _ in range(3):
        f = np.where(tail, q - erfc_fallback(x), erf_fallback(x) - p)
        step = f / (_TWO_OVER_SQRT_PI * np.exp(-x * x))
        x = x - step / (1 + x * step)
    out = np.copysign(x, y)
    out = np.where(a == 1, np.copysign(np.inf, y), out)
    return np.where((a > 1) | np.isnan(y), np.nan, out)


FALLBACKS = {"erf": erf_fallback, "erfc": erfc_fallback, "erfinv": erfinv_fallback,
             "lgamma": lgamma_fallback, "digamma": digamma_fallback,
             "polygamma": polygamma_fallback, **_FALLBACK_MODULE().FALLBACKS}
