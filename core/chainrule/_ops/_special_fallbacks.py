"""Pure-NumPy fallbacks of torch.special's Bessel, Airy, incomplete-gamma and zeta
functions (Note [optional scipy] in _special.py: used when SciPy is missing).

Each works in float64 on arrays and reaches about 1e-13 relative accuracy (absolute
near the zeros of the oscillating functions) with one of three tools:

- power series where their terms do not cancel (small arguments),
- the trapezoidal rule on an integral representation whose integrand is periodic or
  decays doubly exponentially (the rule then converges exponentially),
- the classical asymptotic expansions for large arguments, truncated well before
  their smallest term.
"""
import math

import numpy as np

from .._tensor import DEVICE_ARRAY_TYPES

_EULER = 0.57721566490153286061
_SQRT_PI = math.sqrt(math.pi)


def _f64(x):
    """``x`` as float64: an ndarray, or a device array as it is (Note [device fallbacks])."""
    return x if type(x) in DEVICE_ARRAY_TYPES else np.asarray(x, np.float64)


def _quiet():
    return np.errstate(all="ignore")


# --- modified Bessel functions I_0, I_1 -------------------------------------------------
def _scaled_i_series(n, x):
    """exp(-x) I_n(x) for 0 <= x <= 30: the power series (all terms positive)."""
    half = x / 2
    term = half ** n / math.factorial(n)
    total = term + 0.0
    for k in range(1, 120):
        term = term * half * half / (k * (k + n))
        total += term
    return total * np.exp(-x)


def _scaled_asymptotic(n, x, sign):
    """sum_k sign**k a_k(n) / x**k with a_k = prod_{j<=k} (4n^2 - (2j-1)^2) / (k! 8^k):
    the Hankel-type series of exp(-x) I_n (sign -1) and exp(x) K_n (sign +1), over
    the common factor; x >= 25 keeps the 40 terms far before the smallest one."""
    mu = 4.0 * n * n
    term = np.ones_like(x)
    total = term + 0.0
    for k in range(1, 40):
        term = term * sign * (mu - (2 * k - 1) ** 2) / (8.0 * k * x)
        total += term
    return total


def scaled_i(n, x):
    """exp(-|x|) I_n(x) for n = 0, 1 (I_1 is odd)."""
    x = _f64(x)
    ax = np.abs(x)
    with _quiet():
        small = np.minimum(ax, 30.0)
        large = np.maximum(ax, 30.0)
        out = np.where(ax <= 30, _scaled_i_series(n, small),
                       _scaled_asymptotic(n, large, -1.0) / np.sqrt(2 * np.pi * large))
    out = np.where(np.isinf(ax), 0.0, out)
    return np.where(x < 0, -out, out) if n == 1 else out


def bessel_i(n, x):
    """I_n(x), n = 0, 1: the scaled value times exp(|x|) (inf past about 713)."""
    with _quiet():
        return scaled_i(n, x) * np.exp(np.abs(_f64(x)))


# --- modified Bessel functions K_nu --------------------------------------------------------
_K_NODES = 160


def _scaled_k_integral(nu, x):
    """exp(x) K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt for x >= 1.5, by
    the trapezoidal rule on [0, t_max] (t_max: where the integrand is below e^-45)."""
    t_max = np.arccosh(1 + 45.0 / x)
    h = t_max / _K_NODES
    t = h[..., None] * np.arange(_K_NODES + 1)
    f = np.exp(-x[..., None] * 2 * np.sinh(t / 2) ** 2) * np.cosh(nu * t)
    return h * (f.sum(-1) - f[..., 0] / 2)


def _k_series(n, x):
    """K_n(x), n = 0, 1, for 0 < x <= 2: the series that come with I_n's."""
    q = x * x / 4
    log_half = np.log(x / 2)
    term = np.ones_like(x) if n == 0 else x / 2       # (x/2)^(2k+n) / (k! (k+n)!)
    psi_k, psi_kn = -_EULER, -_EULER + (1.0 if n == 1 else 0.0)   # psi(k+1), psi(k+n+1)
    total = np.zeros_like(x)
    for k in range(40):
        if k:
            term = term * q / (k * (k + n))
            psi_k += 1.0 / k
            psi_kn += 1.0 / (k + n)
        total += term * (psi_k + psi_kn) / 2
    if n == 0:
        return total - log_half * bessel_i(0, x)
    return 1 / x + log_half * bessel_i(1, x) - total


def scaled_k(n, x):
    """exp(x) K_n(x), n = 0, 1: inf at 0, nan below."""
    x = _f64(x)
    with _quiet():
        lo = np.clip(x, 1e-300, 2.0)
        mid = np.clip(x, 1.5, 30.0)
        hi = np.maximum(x, 30.0)
        out = np.where(x <= 2, _k_series(n, lo) * np.exp(lo),
                       np.where(x <= 30, _scaled_k_integral(n, mid),
                                np.sqrt(np.pi / (2 * hi)) * _scaled_asymptotic(n, hi, 1.0)))
    out = np.where(x == 0, np.inf, np.where(x < 0, np.nan, out))
    return np.where(np.isposinf(x), 0.0, out)


def bessel_k(n, x):
    """K_n(x), n = 0, 1."""
    x = _f64(x)
    with _quiet():
        out = scaled_k(n, x) * np.exp(-np.where(np.isnan(x), 0, x))
    return np.where(x == 0, np.inf, out)


# --- Bessel functions J_0, J_1, Y_0, Y_1 ---------------------------------------------------
_J_POINTS = 128
_THETA = 2 * np.pi * np.arange(_J_POINTS) / _J_POINTS
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(120)


def _j_series(n, x):
    """J_n(x) for |x| <= 2 (alternating terms, no cancellation there)."""
    q = -x * x / 4
    term = np.ones_like(x) if n == 0 else x / 2
    total = term.copy()
    for k in range(1, 30):
        term = term * q / (k * (k + n))
        total += term
    return total


def _j_trapezoid(n, x):
    """J_n(x) = mean over a period of cos(n theta - x sin theta) (exact to rounding for
    |x| <= 30 with 128 points)."""
    return np.cos(n * _THETA - x[..., None] * np.sin(_THETA)).mean(-1)


def _hankel(n, x):
    """(P, Q), the Hankel expansions of J_n and Y_n for x >= 25."""
    mu = 4.0 * n * n
    p, q = np.ones_like(x), np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 50):
        term = term * (mu - (2 * k - 1) ** 2) / (8.0 * k * x)
        if k % 2:
            q += term * (-1) ** (k // 2)
        else:
            p += term * (-1) ** (k // 2)
    return p, q


def _hankel_phase(n, x):
    """(cos chi, sin chi) with chi = x - (n/2 + 1/4) pi, from cos x and sin x."""
    c, s = np.cos(x) / math.sqrt(2), np.sin(x) / math.sqrt(2)
    return (c + s, s - c) if n == 0 else (s - c, -s - c)


def _j_large(n, x):
    p, q = _hankel(n, x)
    cos_chi, sin_chi = _hankel_phase(n, x)
    return np.sqrt(2 / (np.pi * x)) * (p * cos_chi - q * sin_chi)


def _y_large(n, x):
    p, q = _hankel(n, x)
    cos_chi, sin_chi = _hankel_phase(n, x)
    return np.sqrt(2 / (np.pi * x)) * (p * sin_chi + q * cos_chi)


def bessel_j(n, x):
    """J_n(x), n = 0, 1 (J_1 is odd)."""
    x = _f64(x)
    ax = np.abs(x)
    with _quiet():
        out = np.where(ax <= 2, _j_series(n, np.minimum(ax, 2.0)),
                       np.where(ax <= 25, _j_trapezoid(n, np.clip(ax, 2.0, 25.0)),
                                _j_large(n, np.maximum(ax, 25.0))))
    out = np.where(np.isinf(x), np.nan, out)
    return np.where(x < 0, -out, out) if n == 1 else out


def _y_series(n, x):
    """Y_n(x) for 0 < x <= 2: J_n's series with the digamma weights."""
    q = -x * x / 4
    term = np.ones_like(x) if n == 0 else x / 2
    psi_k, psi_kn = -_EULER, -_EULER + (1.0 if n == 1 else 0.0)
    total = np.zeros_like(x)
    for k in range(30):
        if k:
            term = term * q / (k * (k + n))
            psi_k += 1.0 / k
            psi_kn += 1.0 / (k + n)
        total += term * (psi_k + psi_kn) / 2
    log_part = 2 / np.pi * np.log(x / 2) * _j_series(n, x)
    if n == 0:
        return log_part - 2 / np.pi * total
    return log_part - 2 / (np.pi * x) - 2 / np.pi * total


def _gauss_legendre(f, lo, hi):
    """int_lo^hi f(t) dt by 120-point Gauss-Legendre (lo, hi: arrays)."""
    half = ((hi - lo) / 2)[..., None]
    t = (lo + hi)[..., None] / 2 + half * _GL_NODES
    return (f(t) * _GL_WEIGHTS).sum(-1) * half[..., 0]


def _y_integral(n, x):
    """Y_n(x) for 2 <= x <= 25 from its integral representation:
    (1/pi) int_0^pi sin(x sin t - n t) dt
    - (1/pi) int_0^inf (e^(nt) + (-1)^n e^(-nt)) e^(-x sinh t) dt."""
    xs = x[..., None]
    oscillating = _gauss_legendre(lambda t: np.sin(xs * np.sin(t) - n * t), 0 * x, np.pi + 0 * x)
    sign = 1.0 if n == 0 else -1.0
    decaying = _gauss_legendre(
        lambda t: (np.exp(n * t) + sign * np.exp(-n * t)) * np.exp(-xs * np.sinh(t)),
        0 * x, np.arcsinh(45.0 / x))
    return (oscillating - decaying) / np.pi


def bessel_y(n, x):
    """Y_n(x), n = 0, 1: -inf at 0, nan below."""
    x = _f64(x)
    with _quiet():
        out = np.where(x <= 2, _y_series(n, np.clip(x, 1e-300, 2.0)),
                       np.where(x <= 25, _y_integral(n, np.clip(x, 2.0, 25.0)),
                                _y_large(n, np.maximum(x, 25.0))))
    out = np.where(x == 0, -np.inf, np.where(x < 0, np.nan, out))
    return np.where(np.isinf(x), np.nan, out)


# --- Airy function Ai ----------------------------------------------------------------------
_AI0 = 1 / (3 ** (2 / 3) * math.gamma(2 / 3))          # Ai(0)
_AIP0 = -1 / (3 ** (1 / 3) * math.gamma(1 / 3))        # Ai'(0)


def _airy_taylor_step(y, yp, x0, h):
    """(Ai, Ai') at x0 + h from their values at x0: the Taylor series of the solution
    of y'' = x y, whose coefficients obey (k+2)(k+1) c_{k+2} = x0 c_k + c_{k-1}."""
    c_prev, c_prev2 = yp, y                # c_{k-1}, c_{k-2} while computing c_k
    c_km3 = np.zeros_like(y)
    value, slope = y + yp * h, yp.copy()
    power = h.copy()                       # h^(k-1)
    for k in range(2, 45):
        c_k = (x0 * c_prev2 + c_km3) / (k * (k - 1))
        slope += k * c_k * power
        power = power * h
        value += c_k * power
        c_km3, c_prev2, c_prev = c_prev2, c_prev, c_k
    return value, slope


def _airy_stepped(x):
    """Ai(x) for -10 <= x <= 2, stepping from 0 (exact values) in steps of at most 1."""
    steps = np.maximum(np.ceil(np.nan_to_num(np.abs(x))), 1.0)
    h = x / steps
    y, yp = np.full_like(x, _AI0), np.full_like(x, _AIP0)
    x0 = np.zeros_like(x)
    for i in range(int(steps.max(initial=1))):
        active = i < steps
        y_new, yp_new = _airy_taylor_step(y, yp, x0, h)
        y, yp = np.where(active, y_new, y), np.where(active, yp_new, yp)
        x0 = np.where(active, x0 + h, x0)
    return y


def _airy_negative(x):
    """Ai(x) for x <= -10: the oscillating asymptotic expansion in zeta = 2/3 |x|^1.5,
    with u_k = (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k) u_{k-1}."""
    ax = -x
    zeta = 2 / 3 * ax * np.sqrt(ax)
    even, odd = np.ones_like(x), np.zeros_like(x)
    u, power = 1.0, np.ones_like(x)
    for k in range(1, 30):
        u *= (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k)
        power = power / zeta
        if k % 2:
            odd += (-1) ** (k // 2) * u * power
        else:
            even += (-1) ** (k // 2) * u * power
    phase = zeta + np.pi / 4
    return (np.sin(phase) * even - np.cos(phase) * odd) / (_SQRT_PI * ax ** 0.25)


def airy_ai(x):
    """Ai(x): the stepped Taylor series near 0, K_{1/3} for x > 2
    (Ai(x) = sqrt(x/3) K_{1/3}(zeta) / pi) and the expansion below -10. Like the
    reference, nan at +-inf."""
    x = _f64(x)
    with _quiet():
        pos = np.maximum(x, 2.0)
        zeta = 2 / 3 * pos * np.sqrt(pos)
        right = np.sqrt(pos / 3) / np.pi * np.exp(-zeta) * _scaled_k_integral(1 / 3, zeta)
        out = np.where(x > 2, right, np.where(x >= -10, _airy_stepped(np.clip(x, -10.0, 2.0)),
                                              _airy_negative(np.minimum(x, -10.0))))
    return np.where(np.isinf(x), np.nan, out)


def spherical_bessel_j0(x):
    """sin(x) / x (its Taylor series near 0; 0 at +-inf)."""
    x = _f64(x)
    with _quiet():
        q = x * x
        series = 1 - q / 6 * (1 - q / 20 * (1 - q / 42 * (1 - q / 72)))
        out = np.where(np.abs(x) < 0.5e-2, series, np.sin(x) / x)
    return np.where(np.isinf(x), 0.0, out)


# --- erfcx and log_ndtr --------------------------------------------------------------------
def _erfcx_continued_fraction(x):
    """exp(x^2) erfc(x) for x >= 5: Laplace's continued fraction, from the tail."""
    tail = np.zeros_like(x)
    for k in range(60, 0, -1):
        tail = (k / 2) / (x + tail)
    return 1 / (_SQRT_PI * (x + tail))


def erfcx(x):
    """exp(x^2) erfc(x) (inf for x below about -26.6)."""
    from . import _special
    x = _f64(x)
    with _quiet():
        near = np.minimum(x, 5.0)
        direct = np.exp(near * near) * _special.implementation("erfc")(near)
        out = np.where(x < 5, direct, _erfcx_continued_fraction(np.maximum(x, 5.0)))
    return np.where(np.isneginf(x), np.inf, out)


def _exp_minus_half_square(x):
    """exp(-x^2 / 2) without the rounding error of x^2 (x = hi + lo, hi with 24 bits:
    hi^2 is exact), which exp would magnify by x^2."""
    hi = np.where(np.isfinite(x), x.astype(np.float32).astype(np.float64), 0.0)
    return np.exp(-hi * hi / 2) * np.exp(-(x - hi) * (x + hi) / 2)


def log_ndtr(x):
    """log of the standard normal CDF: through erfcx below -1 (no underflow), else
    log1p(-ndtr(-x))."""
    from . import _special
    x = _f64(x)
    with _quiet():
        t = x / math.sqrt(2)
        left = np.log(erfcx(-t) / 2) - t * t
        right = np.log1p(-_special.implementation("erfc")(t) / 2)
        far = np.maximum(x, 4.0)
        tail = np.log1p(-erfcx(far / math.sqrt(2)) * _exp_minus_half_square(far) / 2)
        out = np.where(x < -1, left, np.where(x > 4, tail, right))
    return np.where(np.isneginf(x), -np.inf, out)


# --- regularized incomplete gamma functions ------------------------------------------------
def _log1pmx(e):
    """log(1 + e) - e, accurate also for small e (its series for |e| < 1/2)."""
    small = np.abs(e) < 0.5
    s = np.where(small, e, 0.0)
    total, power = np.zeros_like(e), -s * s
    for k in range(2, 60):
        total += power / k
        power = power * -s
    return np.where(small, total, np.log1p(np.where(small, 0.0, e)) - e)


def _log_power_factor(a, x):
    """log(x^a e^-x / Gamma(a)); for a >= 10 through log1pmx and Stirling's series, so
    that large a and x loose no digits to cancellation."""
    from . import _special
    direct = a * np.log(x) - x - _special.implementation("lgamma")(a)
    big = np.maximum(a, 10.0)
    inv = 1 / big
    stirling = inv * (1 / 12 - inv * inv * (1 / 360 - inv * inv * (1 / 1260 - inv * inv / 1680)))
    uniform = big * _log1pmx(x / big - 1) + 0.5 * np.log(big / (2 * np.pi)) - stirling
    return np.where(a >= 10, uniform, direct)


def _lower_series(a, x):
    """P(a, x) = x^a e^-x / Gamma(a + 1) sum_k x^k / ((a+1)...(a+k)), for x < a + 1."""
    term, total = np.ones_like(x), np.ones_like(x)
    for k in range(1, 2000):        # (reading one flag per step, also on a device)
        term = term * x / (a + k)
        total += term
        if np.all(term <= total * 1e-17):
            break
    return np.exp(_log_power_factor(a, x)) / a * total


def _upper_fraction(a, x):
    """Q(a, x) by the continued fraction of Gamma(a, x) (modified Lentz), for x >= a + 1."""
    tiny = 1e-300
    b = x + 1 - a
    c, d = np.full_like(x, 1 / tiny), 1 / b
    h = d + 0.0
    for i in range(1, 2000):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if np.all(np.abs(delta - 1) < 1e-16):
            break
    return np.exp(_log_power_factor(a, x)) * h


def _incomplete_gamma(a, x, upper):
    """P(a, x) (upper=False) or Q(a, x), with the reference's values at the edges."""
    a, x = np.broadcast_arrays(_f64(a), _f64(x))
    with _quiet():
        series_side = x < a + 1
        ok = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
        aa, xx = np.where(ok, a, 1.0), np.where(ok, x, 1.0)
        p = _lower_series(aa, np.where(series_side, xx, 0.5))
        q = _upper_fraction(aa, np.where(series_side, 2.0, xx))
        lower = np.where(series_side, p, 1 - q)
        out = np.where(upper, 1 - lower, lower)
        out = np.where(upper & ~series_side, q, out)
    edge_lower = np.where((x == 0) | np.isposinf(a), 0.0, 1.0)    # x = 0, a = inf; a = 0, x = inf
    out = np.where(ok, out, np.where(upper, 1 - edge_lower, edge_lower))
    bad = (a < 0) | (x < 0) | np.isnan(a) | np.isnan(x) | ((a == 0) & (x == 0)) | \
        (np.isinf(a) & np.isinf(x))
    return np.where(bad, np.nan, out)


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return _incomplete_gamma(a, x, False)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _incomplete_gamma(a, x, True)


# --- Hurwitz zeta ------------------------------------------------------------------------------
# B_2j / (2j)!, j = 1..7: the Euler-Maclaurin tail's coefficients
_BERNOULLI_RATIOS = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                     -691 / 1307674368000, 1 / 74724249600]


def zeta(s, q):
    """zeta(s, q) = sum_k (q + k)^-s for s > 1: terms summed until q + k >= 10 + s, then
    the Euler-Maclaurin tail. Like the reference: inf at s = 1 and at the poles q = 0,
    -1, ...; nan for s < 1, for q < 0 with a non-integer s, and for infinite s or q."""
    s, q = np.broadcast_arrays(_f64(s), _f64(q))
    ok = (s > 1) & np.isfinite(s) & np.isfinite(q) & ~((q <= 0) & (q == np.floor(q)))
    ss, a = np.where(ok, s, 2.0), np.where(ok, q, 1.0)
    bound = 10.0 + ss
    total = np.zeros_like(a)
    with _quiet():
        while True:
            small = a < bound
            if not small.any():
                break
            total += np.where(small, np.power(np.where(small, a, 1.0), -ss), 0)
            a = np.where(small, a + 1, a)
        tail = a ** (1.0 - ss) / (ss - 1) + 0.5 * a ** -ss
        rising = ss + 0.0                           # s (s+1) ... (s+2j-2)
        for j, coefficient in enumerate(_BERNOULLI_RATIOS, start=1):
            tail += coefficient * rising * a ** (-ss - 2.0 * j + 1)
            rising = rising * (ss + 2 * j - 1) * (ss + 2 * j)
    out = total + tail
    pole = ((s == 1) | ((q <= 0) & (q == np.floor(q)))) & (s >= 1) & np.isfinite(s) & \
        np.isfinite(q)
    out = np.where(ok, out, np.where(pole, np.inf, np.nan))
    return np.where((q < 0) & (s != np.floor(s)), np.nan, out)


# Note [device fallbacks]
#     The fallbacks of the table ops (i0, i0e, i1, i1e, erfcx, log_ndtr, gammainc,
#     gammaincc, zeta) are array code only: ufuncs, where, broadcasting and a flag
#     read per loop step, so they run where their operand lives (a device array:
#     the device's kernels), also when SciPy is importable, as SciPy's versions of
#     these are host ufuncs. erfc and lgamma come from the implementation in use.
for _fn in (scaled_i, bessel_i, erfcx, log_ndtr, gammainc, gammaincc, zeta):
    _fn.device_code = True


def _at(fn, n):
    def at(x):
        return fn(n, x)
    at.device_code = getattr(fn, "device_code", False)
    return at


FALLBACKS = {"i0": _at(bessel_i, 0), "i1": _at(bessel_i, 1), "i0e": _at(scaled_i, 0),
             "i1e": _at(scaled_i, 1), "modified_bessel_i0": _at(bessel_i, 0),
             "modified_bessel_i1": _at(bessel_i, 1), "modified_bessel_k0": _at(bessel_k, 0),
             "modified_bessel_k1": _at(bessel_k, 1), "scaled_modified_bessel_k0": _at(scaled_k, 0),
             "scaled_modified_bessel_k1": _at(scaled_k, 1), "bessel_j0": _at(bessel_j, 0),
             "bessel_j1": _at(bessel_j, 1), "bessel_y0": _at(bessel_y, 0),
             "bessel_y1": _at(bessel_y, 1), "airy_ai": airy_ai,
             "spherical_bessel_j0": spherical_bessel_j0, "erfcx": erfcx, "log_ndtr": log_ndtr,
             "gammainc": gammainc, "gammaincc": gammaincc, "zeta": zeta}
