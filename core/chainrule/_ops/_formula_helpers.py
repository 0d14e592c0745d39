"""Helpers for derivative formulas, each written once against the namespace ``F``
(so it runs on ndarrays and on Tensors alike) and bound into both namespaces."""
import cmath
import math

HELPERS = {}


def helper(fn):
    HELPERS[fn.__name__] = fn
    return fn


@helper
def conj_scalar(F, alpha):
    return alpha.conjugate() if hasattr(alpha, "conjugate") else alpha


@helper
def erf_prime(F, x):
    return (2.0 / math.sqrt(math.pi)) * F.exp(-(x * x))


@helper
def pow_grad_base(F, self, exponent):
    """d(self**e)/dself, defined as 0 where e == 0 (also at self == 0)."""
    return F.where(exponent == 0, self * 0, exponent * self ** (exponent - 1))


@helper
def pow_grad_base_scalar(F, self, exponent):
    if exponent == 0:
        return self * 0
    if exponent == 2 and not F.is_tensor_path():
        # x ** 2 on arrays: one operation. Recorded (create_graph), the reference's
        # ops (pow, mul), which a profile of double backward compares against.
        return 2 * self
    return exponent * self ** (exponent - 1)


@helper
def pow_grad_scalar_base(F, result, base):
    """d(base**e)/de = result * log(base) for a Python number base (0 when base == 0)."""
    if base == 0:
        return result * 0
    log_base = math.log(base) if isinstance(base, (int, float)) and base > 0 else cmath.log(base)
    return result * log_base


@helper
def pow_grad_exponent(F, self, exponent, result):
    """d(self**e)/de = result * log(self), defined as 0 where self == 0 and e >= 0."""
    zero_base = (self == 0) * (F.real(exponent) >= 0) if F.is_complex(exponent) else \
        (self == 0) * (exponent >= 0)
    safe = F.where(self == 0, self + 1, self)
    return F.where(zero_base, result * 0, result * F.log(safe))


@helper
def sgn_grad(F, g, self, result):
    """Backward of z / |z|: (g - s * Re(conj(s) * g)) / |z|, and 0 for real input."""
    if not F.is_complex(self):
        return g * 0
    mag = F.abs(self)
    safe = F.where(mag == 0, mag + 1, mag)
    grad = (g - result * F.real(F.conj(result) * g)) / safe
    return F.where(mag == 0, grad * 0, grad)


@helper
def angle_grad(F, g, self):
    """Backward of the complex argument: g * i z / |z|**2 (0 at 0 and for real z)."""
    if not F.is_complex(self):
        return g * 0
    mag2 = F.real(self * F.conj(self))
    safe = F.where(mag2 == 0, mag2 + 1, mag2)
    grad = g * self / safe * 1j
    return F.where(mag2 == 0, grad * 0, grad)


@helper
def clamp_mask(F, self, min, max):
    """Where clamp passes the gradient: min <= x <= max (bounds inclusive)."""
    if min is None:
        return self <= max
    if max is None:
        return self >= min
    return (self >= min) * (self <= max)


@helper
def sgn_jvp(F, t, self, result):
    """Tangent of z / |z|: (t - s * Re(conj(s) * t)) / |z|, and 0 for real input."""
    return sgn_grad(F, t, self, result)


@helper
def angle_jvp(F, t, self):
    """Tangent of the argument: Im(conj(z) * t) / |z|**2 (0 for real input)."""
    if not F.is_complex(self):
        return F.real(t) * 0
    mag2 = F.real(self * F.conj(self))
    safe = F.where(mag2 == 0, mag2 + 1, mag2)
    out = F.imag(F.conj(self) * t) / safe
    return F.where(mag2 == 0, out * 0, out)
