"""``chainrule.special``: the reference's ``torch.special`` names, each the chainrule
op of the same function (so with its backward and forward rules), plus a few
compositions of them.

>>> import chainrule as cr
>>> round(cr.special.expit(cr.tensor([0.0])).item(), 3), cr.special.gammaln(cr.tensor(1.0))
(0.5, tensor(0.))
"""
import math as _math

from ._factories import full_like as _full_like
from ._ops import FUNCTIONS as _F
from ._ops._common import (complex_half_error as _complex_half_error,
                           float_input as _float_input, kernel_error as _kernel_error,
                           promote as _promote, wrapped_number as _wrapped_number)

digamma = psi = _F["digamma"]
gammaln = _F["lgamma"]
polygamma = _F["polygamma"]
multigammaln = _F["mvlgamma"]
erf, erfc, erfinv = _F["erf"], _F["erfc"], _F["erfinv"]
expit, logit = _F["sigmoid"], _F["logit"]
exp2, expm1, log1p = _F["exp2"], _F["expm1"], _F["log1p"]
sinc, xlogy = _F["sinc"], _F["xlogy"]


def round(input, *, decimals=0):
    """:func:`chainrule.round` on floating tensors (the reference's special.round has no
    integer shortcut: its kernel refuses integers and bool).

    >>> import chainrule as cr
    >>> cr.special.round(cr.tensor([0.5, 1.5, 2.25]), decimals=0).tolist()
    [0.0, 2.0, 2.0]
    """
    if input._data.dtype.kind in "biu":
        raise _kernel_error("round_vml_cpu" if decimals == 0 else "round_cpu")(input._data.dtype)
    return _F["round"](input, decimals=decimals)
logsumexp, softmax, log_softmax = _F["logsumexp"], _F["softmax"], _F["log_softmax"]

from ._ops import special_functions as _special_functions
from ._ops.special_functions import (i0, i0e, i1, i1e, erfcx, log_ndtr,  # noqa: F401
                                     gammainc, gammaincc, zeta)

globals().update(_special_functions.UNDIFFERENTIATED)    # bessel_j0, airy_ai, ...
globals().update(_special_functions.POLYNOMIALS)         # chebyshev_polynomial_t, ...

_SQRT2 = _math.sqrt(2.0)


def ndtr(input):
    """The standard normal CDF, ``(1 + erf(x / sqrt(2))) / 2``.

    >>> import chainrule as cr
    >>> cr.special.ndtr(cr.tensor([0.0])).item()
    0.5
    """
    return (1 + erf(_float_input(input) / _SQRT2)) * 0.5


def ndtri(input):
    """The inverse of :func:`ndtr`, ``sqrt(2) erfinv(2p - 1)``.

    >>> import chainrule as cr
    >>> cr.special.ndtri(cr.tensor([0.5])).item()
    0.0
    """
    x = _float_input(input)
    if x.is_complex() or x._data.dtype.itemsize == 2:      # the reference's ndtri_cpu
        raise _kernel_error("ndtri_cpu")(x._data.dtype)
    return erfinv(x * 2 - 1) * _SQRT2


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0.

    >>> import chainrule as cr
    >>> cr.special.xlog1py(cr.tensor([0.0, 2.0]), cr.tensor([-1.0, 0.0])).tolist()
    [0.0, 0.0]
    """
    x, y = _real_float_operands(input, other, "xlog1py_cpu")
    return _F["where"]((x == 0) * (y == y), x * 0, x * log1p(y))


def _real_float_operands(input, other, kernel):
    """The two operands promoted together, integers to the default floating dtype; the
    reference's kernel has no complex loop (Note [kernels without a dtype])."""
    x, y = _promote(_wrapped_number(input, other), other)
    if x._data.dtype.kind == "c":
        raise _complex_half_error(_kernel_error(kernel)(x._data.dtype), (input, other))
    return _float_input(x), _float_input(y)


def entr(input):
    """Elementwise entropy ``-x log x`` (0 at 0, -inf below 0).

    >>> import chainrule as cr
    >>> cr.special.entr(cr.tensor([0.0, 1.0])).tolist()
    [0.0, -0.0]
    """
    if input._data.dtype.kind == "c":
        raise _kernel_error("entr_cpu")(input._data.dtype)
    x = _float_input(input)
    where = _F["where"]
    return where(x < 0, _full_like(x, -_math.inf), where(x == 0, x * 0 + 0.0, -xlogy(x, x)))
