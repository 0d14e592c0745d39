"""The von Mises distribution on the circle."""
import math

import numpy as np

from .. import _grad_mode
from .._ops import FUNCTIONS
from .._size import Size
from .._tensor import Tensor
from . import constraints
from .distribution import Distribution, broadcast_all

F = FUNCTIONS
__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1-9.8.4: polynomial approximations of I0 and I1 below and
# above x = 3.75 (the reference uses them too, so values and gradients agree)
_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
          [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3])
_LARGE = ([0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1,
           0.2635537e-1, -0.1647633e-1, 0.392377e-2],
          [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
           0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2])


def _polynomial(y, coefficients):
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel(x, order=0):
    """log(I_order(x)) for x > 0 and order 0 or 1, differentiable in x."""
    small = _polynomial((x / 3.75).pow(2), _SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _polynomial(3.75 / x, _LARGE[order]).log()
    return F["where"](x < 3.75, small.log(), large)


class VonMises(Distribution):
    """Circular distribution with mean angle ``loc`` and ``concentration``.

    >>> import chainrule as cr
    >>> d = cr.distributions.VonMises(cr.tensor(0.0), cr.tensor(2.0))
    >>> round(d.log_prob(cr.tensor(0.5)).item(), 4), round(d.variance.item(), 4)
    (-0.9067, 0.3022)
    """
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel(self.concentration, order=0))

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        log_ratio = (_log_modified_bessel(self.concentration, 1)
                     - _log_modified_bessel(self.concentration, 0))
        return 1 - log_ratio.exp()

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with _grad_mode.no_grad():
            loc = np.broadcast_to(self.loc.numpy().astype(np.float64), shape)
            kappa = np.broadcast_to(self.concentration.numpy().astype(np.float64), shape)
            angles = _best_fisher(loc, kappa)
        return Tensor._wrap(angles.astype(self.loc.dtype.np))


def _best_fisher(loc, kappa):
    """Best & Fisher's (1979) rejection sampler, in float64 (small kappas would make a
    float32 loop crawl)."""
    from .. import _random
    rng = _random.numpy_rng(None)
    tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
    rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
    r = np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))
    x, done = np.zeros(loc.shape), np.zeros(loc.shape, dtype=bool)
    while not done.all():
        u1, u2, u3 = rng.random((3,) + loc.shape)
        z = np.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        with np.errstate(all="ignore"):
            accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
        accept &= ~done
        x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1)), x)
        done |= accept
    return np.mod(x + math.pi + loc, 2 * math.pi) - math.pi
