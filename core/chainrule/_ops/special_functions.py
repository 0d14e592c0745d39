"""Derivative table: torch.special's Bessel-type, error-function and incomplete-gamma
functions, plus the special functions the reference does not differentiate.

The differentiable ones (i0, i0e, i1, i1e, erfcx, log_ndtr, gammainc/gammaincc in
``other``, zeta in ``other``) are table ops with the reference's formulas; the rest
(Bessel J/Y/K, Airy, the orthogonal polynomials) return tensors without a graph,
as the reference's do (their outputs never require grad). Values come from SciPy
or the NumPy fallbacks (Note [optional scipy] in _special.py).
"""
import numpy as np

from .. import _dtypes
from .._meta import MetaArray
from .._tensor import DEVICE_ARRAY_TYPES, Tensor, on_device_of
from ._common import (EMPTY, FUNCTIONS, as_tensor_arg, commit_inplace, complex_half_error,
                      float_input, formula_helper, kernel_error, method, promote,
                      wrapped_number)
from ._formula_helpers import helper
from ._namespaces import array_fn
from ._registry import apply_op, defop, not_implemented
from . import _special, _special_polynomials as _polynomials

_INV_SQRT_2PI = 1 / np.sqrt(2 * np.pi)
_TWO_OVER_SQRT_PI = 2 / np.sqrt(np.pi)


def _forward(name):
    return lambda a: _special.in_float64(name, a)          # Note [optional scipy]


def _binary_forward(name):
    return lambda a, b: _special.in_float64_binary(name, a, b)


I0 = defop("i0", _forward("i0"), node_name="I0Backward0",
           vjp=(lambda F, g, self: g * F._special_i1(self),),
           jvp=lambda F, t, self: t[0] * F._special_i1(self))
I0E = defop("special_i0e", _forward("i0e"), node_name="SpecialI0EBackward0",
            vjp=(lambda F, g, self, result: g * (F._special_i1e(self) - F.sign(self) * result),),
            jvp=lambda F, t, self, result: t[0] * (F._special_i1e(self) - F.sign(self) * result))
I1 = defop("special_i1", _forward("i1"), node_name="SpecialI1Backward0",
           vjp=(lambda F, g, self, result: g * F.i1_prime(self, result),),
           jvp=lambda F, t, self, result: t[0] * F.i1_prime(self, result))
I1E = defop("special_i1e", _forward("i1e"), node_name="SpecialI1EBackward0",
            vjp=(lambda F, g, self, result: g * F.i1e_prime(self, result),),
            jvp=lambda F, t, self, result: t[0] * F.i1e_prime(self, result))
ERFCX = defop("special_erfcx", _forward("erfcx"), node_name="SpecialErfcxBackward0",
              vjp=(lambda F, g, self, result: g * (2 * self * result - _TWO_OVER_SQRT_PI),),
              jvp=lambda F, t, self, result: t[0] * (2 * self * result - _TWO_OVER_SQRT_PI))
LOG_NDTR = defop("special_log_ndtr", _forward("log_ndtr"), node_name="SpecialLogNdtrBackward0",
                 vjp=(lambda F, g, self, result: g * F.log_ndtr_prime(self, result),),
                 jvp=lambda F, t, self, result: t[0] * F.log_ndtr_prime(self, result))
# the reference differentiates the incomplete gamma functions and zeta only in `other`,
# and only in reverse mode
IGAMMA = defop("igamma", _binary_forward("gammainc"), inputs=("self", "other"),
               vjp=(not_implemented("igamma: input"),
                    lambda F, g, self, other: g * F.igamma_density(self, other)),
               jvp=not_implemented("igamma: input"))
IGAMMAC = defop("igammac", _binary_forward("gammaincc"), inputs=("self", "other"),
                vjp=(not_implemented("igammac: input"),
                     lambda F, g, self, other: -g * F.igamma_density(self, other)),
                jvp=not_implemented("igammac: input"))
ZETA = defop("special_zeta", _binary_forward("zeta"), inputs=("self", "other"),
             node_name="SpecialZetaBackward0",
             vjp=(not_implemented("zeta"),
                  lambda F, g, self, other: -g * self * F._special_zeta(self + 1, other)),
             jvp=not_implemented("zeta"))


def _formula_function(name, op, forward):
    """``F.<name>``: the op on Tensors (differentiable again), its forward on arrays."""
    def on_tensors(input, *others):
        return apply_op(op, (input, *others), EMPTY)
    on_tensors.__name__ = name
    formula_helper(on_tensors)
    array_fn(name)(forward)


_formula_function("_special_i1", I1, _forward("i1"))
_formula_function("_special_i1e", I1E, _forward("i1e"))
_formula_function("_special_zeta", ZETA, _binary_forward("zeta"))
_formula_function("_special_i0e", I0E, _forward("i0e"))
array_fn("i0")(_forward("i0"))
array_fn("lgamma")(_forward("lgamma"))


@helper
def i1_prime(F, self, result):
    """d I_1(x) / dx = I_0(x) - I_1(x) / x, and 1/2 at x = 0."""
    zero = self == 0
    return F.where(zero, self * 0 + 0.5, F.i0(self) - result / F.where(zero, 1, self))


@helper
def i1e_prime(F, self, result):
    """d i1e(x) / dx = i0e(x) - i1e(x) (sign(x) + 1 / x), and 1/2 at x = 0."""
    zero = self == 0
    safe = F.where(zero, 1, self)
    return F.where(zero, self * 0 + 0.5,
                   F._special_i0e(self) - result * (F.sign(self) + 1 / safe))


@helper
def log_ndtr_prime(F, self, result):
    """d log ndtr(x) / dx = pdf(x) / ndtr(x) = exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi)."""
    return F.exp(-(result + self * self / 2)) * _INV_SQRT_2PI


@helper
def igamma_density(F, self, other):
    """d P(a, x) / dx = x^(a-1) e^-x / Gamma(a)."""
    return F.exp((self - 1) * F.log(other) - other - F.lgamma(self))


# --- public functions ------------------------------------------------------------------------
def _real_floating(value, kernel, name="input", half=True):
    """``value`` as a floating tensor (integers to the default dtype); complex inputs,
    and half precision ones for a kernel without it (``half=False``), raise the
    reference's "not implemented for" error naming its kernel (Note [kernels without a
    dtype])."""
    t = float_input(as_tensor_arg(value, name))
    dtype = t._data.dtype
    if dtype.kind == "c" or (not half and dtype.itemsize == 2):
        raise kernel_error(kernel)(dtype)
    return t


def _differentiable_unary(name, op, kernel, example, half=True):
    def fn(input):
        return apply_op(op, (_real_floating(input, kernel, half=half),), EMPTY)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The reference's ``special.{name}``, differentiable like it.\n\n"
                  f"    >>> import chainrule as cr\n"
                  f"    >>> round(cr.special.{name}(cr.tensor([1.0], dtype=cr.float64)).item(), 6)"
                  f"\n    {example}\n")
    return fn


i0 = _differentiable_unary("i0", I0, "i0_vml_cpu", 1.266066)
i0e = _differentiable_unary("i0e", I0E, "i0e_cpu", 0.465760)
i1 = _differentiable_unary("i1", I1, "i1_cpu", 0.565159)
i1e = _differentiable_unary("i1e", I1E, "i1e_cpu", 0.207910)
erfcx = _differentiable_unary("erfcx", ERFCX, "erfcx_cpu", 0.427584, half=False)
log_ndtr = _differentiable_unary("log_ndtr", LOG_NDTR, "log_ndtr_cpu", -0.172754, half=False)
FUNCTIONS["i0"] = i0


def _floating_pair(input, other, kernel, integers_ok):
    """Both operands promoted to one floating dtype (``input`` or ``other`` may be a
    number, not both: zeta's rule; gammainc takes tensors only)."""
    if not integers_ok:
        for value, name, position in ((input, "input", 1), (other, "other", 2)):
            if not isinstance(value, Tensor):
                raise TypeError(f"special_{kernel}(): argument '{name}' (position {position}) "
                                f"must be Tensor, not {type(value).__name__}")
    a, b = promote(wrapped_number(input, other), wrapped_number(other, input, "other"))
    if not integers_ok and a._data.dtype.kind in "biu":
        raise kernel_error(f"{kernel}_cpu")(a._data.dtype)
    half = kernel != "zeta"                 # the reference's zeta kernel has no half types
    try:
        return (_real_floating(a, f"{kernel}_cpu", half=half),
                _real_floating(b, f"{kernel}_cpu", half=half))
    except NotImplementedError as error:
        raise complex_half_error(error, (input, other)) from None


def gammainc(input, other):
    """The regularized lower incomplete gamma function ``P(input, other)``;
    differentiable in ``other`` only, like the reference (also ``cr.igamma``).

    >>> import chainrule as cr
    >>> a, x = cr.tensor([1.0], dtype=cr.float64), cr.tensor([2.0], dtype=cr.float64)
    >>> round(cr.special.gammainc(a, x).item(), 6)   # 1 - exp(-2)
    0.864665
    """
    return apply_op(IGAMMA, _floating_pair(input, other, "igamma", False), EMPTY)


def gammaincc(input, other):
    """The regularized upper incomplete gamma function ``Q = 1 - P``; differentiable in
    ``other`` only (also ``cr.igammac``).

    >>> import chainrule as cr
    >>> a, x = cr.tensor([1.0], dtype=cr.float64), cr.tensor([2.0], dtype=cr.float64)
    >>> round(cr.special.gammaincc(a, x).item(), 6)  # exp(-2)
    0.135335
    """
    return apply_op(IGAMMAC, _floating_pair(input, other, "igammac", False), EMPTY)


def zeta(input, other):
    """The Hurwitz zeta function ``sum_k (other + k) ** -input``; either argument may be a
    number; differentiable in ``other`` only, like the reference.

    >>> import chainrule as cr
    >>> round(cr.special.zeta(2.0, cr.tensor([1.0], dtype=cr.float64)).item(), 6)  # pi**2/6
    1.644934
    """
    return apply_op(ZETA, _floating_pair(input, other, "zeta", True), EMPTY)


FUNCTIONS["igamma"], FUNCTIONS["igammac"] = gammainc, gammaincc


# --- the functions the reference does not differentiate -----------------------------------
def _host(arr):
    """A device array's host copy (these functions run NumPy/SciPy code)."""
    return arr.get() if type(arr) in DEVICE_ARRAY_TYPES else arr


def _undifferentiated(name, example):
    def fn(input):
        t = _real_floating(input, f"{name}_cpu", half=False)
        data = t._data
        if type(data) is MetaArray:
            return Tensor._wrap(MetaArray.like(data))          # Note [meta arrays]
        return Tensor._wrap(on_device_of(_special.in_float64(name, _host(data)), data))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The reference's ``special.{name}`` (not differentiable, like it).\n\n"
                  f"    >>> import chainrule as cr\n"
                  f"    >>> round(cr.special.{name}(cr.tensor([1.0], dtype=cr.float64)).item(), 6)"
                  f"\n    {example}\n")
    return fn


UNDIFFERENTIATED = {name: _undifferentiated(name, example) for name, example in [
    ("airy_ai", 0.135292), ("bessel_j0", 0.765198), ("bessel_j1", 0.440051),
    ("bessel_y0", 0.088257), ("bessel_y1", -0.781213), ("modified_bessel_i0", 1.266066),
    ("modified_bessel_i1", 0.565159), ("modified_bessel_k0", 0.421024),
    ("modified_bessel_k1", 0.601907), ("scaled_modified_bessel_k0", 1.144463),
    ("scaled_modified_bessel_k1", 1.636153), ("spherical_bessel_j0", 0.841471)]}


def _polynomial(name, fn, example):
    def polynomial(input, n):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"special_{name}() received an invalid combination of arguments")
        x, degree = promote(as_tensor_arg(input), as_tensor_arg(n, "n"))
        x = _real_floating(x, f"{name}_cpu")
        degree = degree._data
        data = x._data
        if type(data) is MetaArray or type(degree) is MetaArray:
            shape = np.broadcast_shapes(data.shape, degree.shape)
            return Tensor._wrap(MetaArray.empty(shape, data.dtype))
        out = fn(_host(data), _host(degree)).astype(data.dtype)
        return Tensor._wrap(on_device_of(out, data))
    polynomial.__name__ = polynomial.__qualname__ = name
    polynomial.__doc__ = (f"The reference's ``special.{name}(input, n)``: the degree-``n`` "
                          f"polynomial at ``input`` (``n`` truncated to an integer; 0 for n < 0;"
                          f" not differentiable).\n\n    >>> import chainrule as cr\n"
                          f"    >>> cr.special.{name}(cr.tensor([0.5], dtype=cr.float64), 3).item()"
                          f"\n    {example}\n")
    return polynomial


P = _polynomials
POLYNOMIALS = {name: _polynomial(name, fn, example) for name, fn, example in [
    ("chebyshev_polynomial_t", P.chebyshev_t, -1.0),
    ("chebyshev_polynomial_u", P.chebyshev_u, -1.0),
    ("chebyshev_polynomial_v", P.chebyshev_v, -1.0),
    ("chebyshev_polynomial_w", P.chebyshev_w, -1.0),
    ("shifted_chebyshev_polynomial_t", P.shifted(P.chebyshev_t), -0.0),
    ("shifted_chebyshev_polynomial_u", P.shifted(P.chebyshev_u), -0.0),
    ("shifted_chebyshev_polynomial_v", P.shifted(P.chebyshev_v), 1.0),
    ("shifted_chebyshev_polynomial_w", P.shifted(P.chebyshev_w), -1.0),
    ("hermite_polynomial_h", P.hermite_h, -5.0),
    ("hermite_polynomial_he", P.hermite_he, -1.375),
    ("laguerre_polynomial_l", P.laguerre_l, -0.14583333333333334),
    ("legendre_polynomial_p", P.legendre_p, -0.4375)]}


# --- the reference's torch.* and Tensor spellings ------------------------------------------
@method("i0")
def i0_method(self):
    """``x.i0()`` is ``cr.i0(x)``.

    >>> import chainrule as cr
    >>> cr.tensor([0.0]).i0().item()
    1.0
    """
    return i0(self)


@method("igamma")
def igamma_method(self, other):
    """``x.igamma(other)`` is ``cr.igamma(x, other)`` (``special.gammainc``).

    >>> import chainrule as cr
    >>> cr.tensor([1.0]).igamma(cr.tensor([0.0])).item()
    0.0
    """
    return gammainc(self, other)


@method("igammac")
def igammac_method(self, other):
    """``x.igammac(other)`` is ``cr.igammac(x, other)`` (``special.gammaincc``).

    >>> import chainrule as cr
    >>> cr.tensor([1.0]).igammac(cr.tensor([0.0])).item()
    1.0
    """
    return gammaincc(self, other)


for _name, _fn in (("i0_", i0), ("igamma_", gammainc), ("igammac_", gammaincc)):
    def _inplace(self, *args, _fn=_fn):
        return commit_inplace(self, _fn(self, *args))
    _inplace.__name__ = _name
    _inplace.__doc__ = (f"In-place ``{_name[:-1]}``: writes into this tensor and bumps its "
                        f"version.\n\n    >>> import chainrule as cr\n    >>> x = cr.ones(2); "
                        f"_ = x.{_name}({'' if _name == 'i0_' else 'cr.ones(2)'}); x._version\n    1\n")
    method(_name)(_inplace)
