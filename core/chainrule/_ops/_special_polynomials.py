"""The orthogonal polynomials of torch.special on float64 arrays, computed the way the
reference computes them (so that the values agree to the last bit where it can): the
degree ``n`` is truncated to an integer; a negative degree gives 0; the Chebyshev
kinds use their trigonometric closed forms inside (-1, 1) beyond a small degree and
the three-term recurrence elsewhere.
"""
import numpy as np


def _recurrence(first, second, step, x, n):
    """P_n(x) from P_0 = ``first``, P_1 = ``second`` and P_{k+1} = step(k, x, P_k, P_{k-1})
    (k = 1, 2, ...), elementwise for a degree array ``n``."""
    p, q = np.broadcast_arrays(first, second)
    p, q = p.astype(np.float64), q.astype(np.float64)
    out = np.where(n == 0, p, q)
    with np.errstate(all="ignore"):
        for k in range(1, int(n.max(initial=1))):
            r = step(k, x, q, p)
            p, q = q, r
            out = np.where(n == k + 1, r, out)
    return out


def _degree(x, n):
    x, n = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(n))
    if n.dtype.kind == "f":            # the reference's int64 cast of nan and inf: negative
        n = np.where(np.isfinite(n), n, -1.0)
    return x, n.astype(np.int64)


def _finish(out, x, n, special=None):
    """Degree < 0 gives 0; ``special`` (mask, values) overrides where the reference
    returns closed-form values (x = +-1, ...)."""
    if special is not None:
        out = np.where(special[0], special[1], out)
    return np.where(n < 0, 0.0, out)


def _chebyshev_recurrence(x, n, second):
    """The recurrence all four Chebyshev kinds share, T_{k+1} = 2x T_k - T_{k-1}."""
    return _recurrence(np.ones_like(x), second, lambda k, x, q, p: (x + x) * q - p, x,
                       np.maximum(n, 0))


def chebyshev_t(x, n):
    x, n = _degree(x, n)
    with np.errstate(all="ignore"):
        out = _chebyshev_recurrence(x, n, x)
        trig = np.cos(n * np.arccos(x))
        out = np.where((n > 6) & (np.abs(x) < 1), trig, out)
    ends = np.where((x > 0) | (n % 2 == 0), 1.0, -1.0)
    return _finish(out, x, n, (np.abs(x) == 1, ends))


def chebyshev_u(x, n):
    x, n = _degree(x, n)
    with np.errstate(all="ignore"):
        out = _chebyshev_recurrence(x, n, x + x)
        theta = np.arccos(x)
        sin_theta = np.sin(theta)
        trig = np.where(sin_theta != 0, np.sin((n + 1) * theta) / sin_theta,
                        (n + 1) * np.cos((n + 1) * theta) / x)
        out = np.where((n > 8) & (np.abs(x) < 1), trig, out)
    ends = np.where((x > 0) | (n % 2 == 0), n + 1.0, -(n + 1.0))
    return _finish(out, x, n, (np.abs(x) == 1, ends))


def chebyshev_v(x, n):
    x, n = _degree(x, n)
    odd_end = np.where(n % 2 == 0, n + n + 1.0, -(n + n + 1.0))
    with np.errstate(all="ignore"):
        out = _chebyshev_recurrence(x, n, x + x - 1)
        theta = np.arccos(x)
        trig = np.where(np.sin(theta / 2) != 1, np.cos((n + 0.5) * theta) / np.cos(theta / 2),
                        odd_end)
        out = np.where((n > 8) & (np.abs(x) < 1), trig, out)
    ends = np.where(x > 0, 1.0, odd_end)
    return _finish(out, x, n, (np.abs(x) == 1, ends))


def chebyshev_w(x, n):
    x, n = _degree(x, n)
    ends = np.where(x > 0, n + n + 1.0, np.where(n % 2 == 0, 1.0, -1.0))
    with np.errstate(all="ignore"):
        out = _chebyshev_recurrence(x, n, x + x + 1)
        theta = np.arccos(x)
        trig = np.where(np.cos(theta / 2) != 1, np.sin((n + 0.5) * theta) / np.sin(theta / 2),
                        ends)
        out = np.where((n > 8) & (np.abs(x) < 1), trig, out)
    return _finish(out, x, n, (np.abs(x) == 1, ends))


def shifted(kind):
    """The shifted polynomial of a Chebyshev kind: kind(2x - 1, n)."""
    def polynomial(x, n):
        x = np.asarray(x, np.float64)
        return kind(x + x - 1, n)
    return polynomial


def hermite_h(x, n):
    """Physicists' Hermite: H_{k+1} = 2x H_k - 2k H_{k-1}."""
    x, n = _degree(x, n)
    out = _recurrence(np.ones_like(x), x + x, lambda k, x, q, p: (x + x) * q - (k + k) * p, x,
                      np.maximum(n, 0))
    return _finish(out, x, n)


def hermite_he(x, n):
    """Probabilists' Hermite: He_{k+1} = x He_k - k He_{k-1}."""
    x, n = _degree(x, n)
    out = _recurrence(np.ones_like(x), x, lambda k, x, q, p: x * q - k * p, x, np.maximum(n, 0))
    return _finish(out, x, n)


def laguerre_l(x, n):
    """Laguerre: (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}; 1 at x = 0."""
    x, n = _degree(x, n)
    out = _recurrence(np.ones_like(x), 1 - x,
                      lambda k, x, q, p: ((k + k + (1 - x)) * q - k * p) / (k + 1), x,
                      np.maximum(n, 0))
    return _finish(out, x, n, (x == 0, 1.0))


def legendre_p(x, n):
    """Legendre: (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1}; +-1 at x = +-1."""
    x, n = _degree(x, n)
    out = _recurrence(np.ones_like(x), x,
                      lambda k, x, q, p: ((k + k + 1) * x * q - k * p) / (k + 1), x,
                      np.maximum(n, 0))
    ends = np.where((x > 0) | (n % 2 == 0), 1.0, -1.0)
    return _finish(out, x, n, (np.abs(x) == 1, ends))
