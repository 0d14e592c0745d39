"""The von Mises distribution on the circle."""
import math

from .. import _dtypes, _factories, _grad_mode
from .._ops import FUNCTIONS
from .._size import Size
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
    xl = x.clamp(min=3.75)          # the large-x branch where it is used (finite elsewhere)
    large = xl - 0.5 * xl.log() + _polynomial(3.75 / xl, _LARGE[order]).log()
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
            loc = self.loc.to(_dtypes.float64).expand(shape)
            kappa = self.concentration.to(_dtypes.float64).expand(shape)
            return _best_fisher(loc, kappa).to(self.loc.dtype)


def _best_fisher(loc, kappa):
    """Best & Fisher's (1979) rejection sampler, with tensor ops (the draws are made
    where ``loc`` lives) in float64 (small kappas would make a float32 loop crawl)."""
    tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
    rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
    r = F["where"](kappa < 1e-5, 1 / kappa + kappa, (1 + rho.pow(2)) / (2 * rho))
    x = _factories.zeros_like(loc)
    done = _factories.zeros_like(loc, dtype=_dtypes.bool_)
    while not bool(done.all()):
        u1, u2, u3 = _factories.rand(3, *loc.shape, dtype=loc.dtype, device=loc.device)
        z = (math.pi * u1).cos()
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        log_ratio = (c / u2).clamp(min=1e-300).log()
        accept = (((c * (2 - c) - u2) > 0) | (log_ratio + 1 - c >= 0)) & ~done
        x = F["where"](accept, (u3 - 0.5).sign() * f.clamp(min=-1, max=1).acos(), x)
        done = done | accept
    return (x + math.pi + loc).remainder(2 * math.pi) - math.pi
