"""Gamma and Chi2 distributions, and ``_standard_gamma``: a Gamma(alpha, 1) sample
that is differentiable in ``alpha``.

Note [implicit reparametrization]
    A gamma sample x of concentration a has the gradient the reference gives it:
    dx/da = -(dP(a, x)/da) / p(a, x), with P the regularized lower incomplete gamma
    function (the cdf) and p the density, i.e. the change of a that keeps the
    sample's quantile fixed. It does not depend on how x was drawn. dP/da comes from
    a central difference of SciPy's gammainc (or gammaincc in the upper tail, where
    it is accurate) when SciPy is there (Note [optional scipy]), else from the
    series P = sum_n x^(a+n) e^-x / Gamma(a+n+1) differentiated termwise. Like the
    reference's, this gradient has no derivative of its own.
"""
import numpy as np

from .. import _dtypes, _factories
from .._ops import FUNCTIONS, _special
from .._size import Size
from .._tensor import Tensor
from ..autograd.function import Function
from . import constraints
from .distribution import ExponentialFamily, broadcast_all

F = FUNCTIONS
__all__ = ["Gamma", "Chi2"]


def _gamma_grad(lower, upper, a, x):
    """-(dP/da) / p by central differences of the regularized incomplete gamma
    functions ``lower`` (P) and ``upper`` (Q = 1 - P), each where it is accurate."""
    h = 1e-5 * a
    lgamma = _special.implementation("lgamma")
    with np.errstate(all="ignore"):
        d_lower = (lower(a + h, x) - lower(a - h, x)) / (2 * h)
        d_upper = -(upper(a + h, x) - upper(a - h, x)) / (2 * h)
        log_pdf = (a - 1) * np.log(x) - x - lgamma(a)
        return -np.where(x > a, d_upper, d_lower) / np.exp(log_pdf)


def _series_p(a, x):
    """P(a, x) by its power series (converges fast for x < a + 1)."""
    lgamma = _special.implementation("lgamma")
    term = np.ones_like(a)
    total = term.copy()
    for n in range(1, 1000):
        term = term * x / (a + n)
        total = total + term
        if np.all(term <= 1e-17 * total):
            break
    return np.exp(a * np.log(x) - x - lgamma(a + 1)) * total


def _continued_fraction_q(a, x):
    """Q(a, x) by its continued fraction, evaluated by Lentz's method (converges fast
    for x > a + 1)."""
    lgamma = _special.implementation("lgamma")
    tiny = 1e-300
    b = x + 1 - a
    c, d = np.full_like(a, 1 / tiny), 1 / b
    h = d.copy()
    for i in range(1, 1000):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1 / d
        h = h * d * c
        if np.all(np.abs(d * c - 1) < 1e-16):
            break
    return np.exp(a * np.log(x) - x - lgamma(a)) * h


def _regularized_gamma(a, x):
    """(P, Q) of the regularized incomplete gamma function without SciPy: the series
    below a + 1, the continued fraction above (each then gives the other as 1 - it)."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    use_series = x < a + 1
    with np.errstate(all="ignore"):
        p = np.where(use_series, _series_p(a, np.where(use_series, x, 0.5 * a)), 0.0)
        q = np.where(use_series, 0.0, _continued_fraction_q(a, np.where(use_series, a + 2, x)))
    p = np.where(use_series, p, 1 - q)
    return np.where(x > 0, p, 0.0), np.where(x > 0, np.where(use_series, 1 - p, q), 1.0)


def standard_gamma_grad(alpha, x):
    """dx/dalpha of standard-gamma samples ``x`` (ndarrays; Note [implicit
    reparametrization]).

    >>> from chainrule.distributions.gamma import _standard_gamma, standard_gamma_grad
    >>> import numpy as np
    >>> round(float(standard_gamma_grad(np.array(1.0), np.array(1.0))), 4)
    1.1736
    """
    a, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
    try:
        import scipy.special as sp
    except ImportError:
        grad = _gamma_grad(lambda a, x: _regularized_gamma(a, x)[0],
                           lambda a, x: _regularized_gamma(a, x)[1], a, x)
    else:
        grad = _gamma_grad(sp.gammainc, sp.gammaincc, a, x)
    return np.nan_to_num(grad, nan=0.0, posinf=0.0, neginf=0.0)


def _host(t):
    """``t``'s values as a host ndarray (the samplers and the incomplete gamma function
    run on the host; their results go back to ``t``'s device)."""
    return t.detach().cpu().numpy()


def _draw_standard_gamma(alpha):
    """Gamma(alpha, 1) draws by Marsaglia & Tsang's (2000) squeeze method, written with
    tensor ops so the draws are made where ``alpha`` lives (Note [random numbers on a
    device]); alpha < 1 uses Gamma(alpha + 1) * U^(1/alpha). Accepts > 95% per round."""
    a = alpha.detach()
    boost = a < 1
    d = F["where"](boost, a + 1, a) - 1.0 / 3
    c = (9 * d).rsqrt()
    x = _factories.zeros_like(a)
    done = _factories.zeros_like(a, dtype=_dtypes.bool_)
    while not bool(done.all()):
        z = _factories.randn(*a.shape, dtype=a.dtype, device=a.device)
        u = _factories.rand(*a.shape, dtype=a.dtype, device=a.device)
        v = (1 + c * z).pow(3)
        log_v = v.clamp(min=float(np.finfo(a.dtype.np).tiny)).log()
        accept = (v > 0) & (u.log() < 0.5 * z * z + d - d * v + d * log_v) & ~done
        x = F["where"](accept, d * v, x)
        done = done | accept
    u = _factories.rand(*a.shape, dtype=a.dtype, device=a.device)
    x = F["where"](boost, x * u.pow(1 / a), x)
    return x.clamp(min=float(np.finfo(a.dtype.np).tiny))


class _StandardGamma(Function):
    """Gamma(alpha, 1) draws whose gradient in alpha is Note [implicit
    reparametrization]'s."""

    @staticmethod
    def forward(alpha):
        return _draw_standard_gamma(alpha)

    @staticmethod
    def setup_context(ctx, inputs, output):     # usable inside chainrule.func transforms
        ctx.save_for_backward(inputs[0], output)
        ctx.save_for_forward(inputs[0], output)

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * _grad_tensor(alpha, x)

    @staticmethod
    def jvp(ctx, tangent):
        alpha, x = ctx.saved_for_forward
        return tangent * _grad_tensor(alpha, x)


def _grad_tensor(alpha, x):
    a, v = _host(alpha), _host(x)
    return _factories.tensor(standard_gamma_grad(a, v).astype(a.dtype), device=alpha.device)


def _standard_gamma(alpha):
    """Gamma(alpha, 1) samples shaped like ``alpha``, differentiable in it (the
    reference's ``torch._standard_gamma``).

    >>> import chainrule as cr
    >>> from chainrule.distributions.gamma import _standard_gamma, standard_gamma_grad
    >>> a = cr.tensor([2.0, 3.0], requires_grad=True)
    >>> x = _standard_gamma(a)
    >>> x.shape, x.requires_grad
    (chainrule.Size([2]), True)
    """
    return _StandardGamma.apply(alpha)


class Gamma(ExponentialFamily):
    """Gamma distribution with shape ``concentration`` and inverse scale ``rate``;
    ``rsample`` is differentiable in both (Note [implicit reparametrization]).

    >>> import chainrule as cr
    >>> from chainrule.distributions.gamma import _standard_gamma, standard_gamma_grad
    >>> d = cr.distributions.Gamma(cr.tensor(2.0), cr.tensor(3.0))
    >>> round(d.log_prob(cr.tensor(1.0)).item(), 4), round(d.mean.item(), 4)
    (-0.8028, 0.6667)
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    mean = property(lambda self: self.concentration / self.rate)
    mode = property(lambda self: ((self.concentration - 1) / self.rate).clamp(min=0))
    variance = property(lambda self: self.concentration / self.rate.pow(2))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = float(np.finfo(value._data.dtype).tiny)
        value.detach().clamp_(min=tiny)       # never exactly 0 (log_prob stays finite)
        return value

    def log_prob(self, value):
        value = _as_tensor_like(value, self.rate)
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return F["xlogy"](c, r) + F["xlogy"](c - 1, value) - r * value - F["lgamma"](c)

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + F["lgamma"](c) + (1.0 - c) * F["digamma"](c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return F["lgamma"](x + 1) + (x + 1) * (-y).reciprocal().log()


def _as_tensor_like(value, like):
    if isinstance(value, Tensor):
        return value
    return _factories.tensor(value, dtype=like.dtype, device=like.device)


def _gammainc(a, x):
    """The regularized lower incomplete gamma function (no gradient in ``a``; in ``x``
    the density, as the reference's ``special.gammainc``)."""
    return _GammaInc.apply(a, x)


class _GammaInc(Function):
    @staticmethod
    def forward(a, x):
        av, xv = np.broadcast_arrays(_host(a), _host(x))
        return _factories.tensor(_gammainc_array(av, xv).astype(av.dtype), device=x.device)

    @staticmethod
    def setup_context(ctx, inputs, output):     # usable inside chainrule.func transforms
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        density = (F["xlogy"](a - 1, x) - x - F["lgamma"](a)).exp()
        return None, grad * density


def _gammainc_array(a, x):
    try:
        import scipy.special as sp
    except ImportError:
        return _regularized_gamma(a, x)[0]
    return sp.gammainc(a, x)


class Chi2(Gamma):
    """Chi-squared distribution with ``df`` degrees of freedom (Gamma(df/2, 1/2)).

    >>> import chainrule as cr
    >>> from chainrule.distributions.gamma import _standard_gamma, standard_gamma_grad
    >>> cr.distributions.Chi2(cr.tensor(4.0)).mean
    tensor(4.)
    """
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, _factories.full_like(df, 0.5), validate_args=validate_args)

    _expand_attrs = ("concentration", "rate")
    df = property(lambda self: self.concentration * 2)
