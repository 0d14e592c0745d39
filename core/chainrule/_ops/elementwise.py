"""Derivative table: elementwise ops.

Each entry: the forward on ndarrays, then one VJP per input, then the JVP (tangent
``t`` of each input, in order), written for both namespaces (Note [one formula, two
namespaces] in _registry.py). Complex inputs follow the conjugate-Wirtinger
convention: for a holomorphic f, the VJP is ``g * conj(f'(z))``.
"""
import functools
import math

import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ._common import (EMPTY, FUNCTIONS, apply_binary, as_tensor_arg, commit_inplace, float_input,
                      promote, public, method)
from ._method_slot import accelerable
from ._namespaces import array_fn
from .views import make_view
from ._registry import NONDIFF, NOT_IMPLEMENTED, apply_op, defop

@functools.cache
def _erf_impl():
    """erf on float64 arrays: scipy's where present (optional), else math.erf per
    element. Imported at the first erf, not with chainrule: scipy costs import time
    and starts a BLAS thread pool of its own."""
    try:
        from scipy.special import erf
    except ImportError:                # pragma: no cover - depends on the environment
        erf = np.vectorize(math.erf, otypes=[np.float64])
    return erf


def _erf_array(x):
    return _erf_impl()(x)


@array_fn("erf")
def _erf(x):
    if x.dtype == np.float64:
        return np.asarray(_erf_array(x))
    return np.asarray(_erf_array(x.astype(np.float64))).astype(x.dtype)


# --- binary arithmetic --------------------------------------------------------------
ADD = defop("add", lambda a, b, alpha: a + b if alpha == 1 else a + alpha * b,
            inputs=("self", "other"), attrs=("alpha",),
            vjp=(lambda F, g: g,
                 lambda F, g, alpha: g if alpha == 1 else g * F.conj_scalar(alpha)),
            jvp=lambda F, t, alpha: t[0] + alpha * t[1])
SUB = defop("sub", lambda a, b, alpha: a - b if alpha == 1 else a - alpha * b,
            inputs=("self", "other"), attrs=("alpha",),
            vjp=(lambda F, g: g,
                 lambda F, g, alpha: -g if alpha == 1 else -g * F.conj_scalar(alpha)),
            jvp=lambda F, t, alpha: t[0] - alpha * t[1])
MUL = defop("mul", np.multiply, inputs=("self", "other"),
            vjp=(lambda F, g, other: g * F.conj(other),
                 lambda F, g, self: g * F.conj(self)),
            jvp=lambda F, t, self, other: t[0] * other + self * t[1])
DIV = defop("div", np.true_divide, inputs=("self", "other"),
            vjp=(lambda F, g, other: g / F.conj(other),
                 lambda F, g, self, other: -g * F.conj(self / (other * other))),
            jvp=lambda F, t, self, other: t[0] / other - t[1] * self / (other * other))
DIV_ROUNDED = defop("div_rounded",
                    lambda a, b, rounding_mode: np.floor_divide(a, b) if rounding_mode == "floor"
                    else np.trunc(a / b).astype(np.result_type(a, b)) if a.dtype.kind in "fc"
                    else _int_trunc_div(a, b),
                    inputs=("self", "other"), attrs=("rounding_mode",), node_name="DivBackward1",
                    vjp=(lambda F, g: g * 0, lambda F, g: g * 0), jvp=lambda F, t: t[0] * 0)
POW = defop("pow", lambda a, b: np.power(a, b), inputs=("self", "exponent"),
            node_name="PowBackward1",
            vjp=(lambda F, g, self, exponent: g * F.conj(F.pow_grad_base(self, exponent)),
                 lambda F, g, self, exponent, result:
                     g * F.conj(F.pow_grad_exponent(self, exponent, result))),
            jvp=lambda F, t, self, exponent, result: t[0] * F.pow_grad_base(self, exponent)
                + t[1] * F.pow_grad_exponent(self, exponent, result))
POW_SCALAR = defop("pow_scalar", lambda a, exponent: np.power(a, exponent), attrs=("exponent",),
                   node_name="PowBackward0",
                   vjp=(lambda F, g, self, exponent:
                        g * F.conj(F.pow_grad_base_scalar(self, exponent)),),
                   jvp=lambda F, t, self, exponent: t[0] * F.pow_grad_base_scalar(self, exponent))
MAXIMUM = defop("maximum", np.maximum, inputs=("self", "other"),
                vjp=(lambda F, g, self, other: F.where(self == other, g / 2, g * (self > other)),
                     lambda F, g, self, other: F.where(self == other, g / 2, g * (other > self))),
                jvp=lambda F, t, self, other: F.where(self >= other, t[0], t[1]))
MINIMUM = defop("minimum", np.minimum, inputs=("self", "other"),
                vjp=(lambda F, g, self, other: F.where(self == other, g / 2, g * (self < other)),
                     lambda F, g, self, other: F.where(self == other, g / 2, g * (other < self))),
                jvp=lambda F, t, self, other: F.where(self <= other, t[0], t[1]))
REMAINDER = defop("remainder", np.remainder, inputs=("self", "other"),
                  vjp=(lambda F, g: g,
                       lambda F, g, self, other: -g * F.floor(self / other)),
                  jvp=lambda F, t, self, other: t[0] - t[1] * F.floor(self / other))
FLOOR_DIVIDE = defop("floor_divide", np.floor_divide, inputs=("self", "other"),
                     vjp=(NOT_IMPLEMENTED, NOT_IMPLEMENTED), jvp=NOT_IMPLEMENTED)
WHERE = defop("where", lambda c, a, b: np.where(c, a, b), inputs=("condition", "self", "other"),
              vjp=(NONDIFF,
                   lambda F, g, condition: F.where(condition, g, g * 0),
                   lambda F, g, condition: F.where(condition, g * 0, g)),
              jvp=lambda F, t, condition: F.where(condition, t[1], t[2]))


def _int_trunc_div(a, b):
    q = np.floor_divide(a, b)
    return q + ((q < 0) & (q * b != a))


# --- unary ops (holomorphic ones conjugate their derivative) -----------------------
_ZEROS = {}     # dtype -> a 0-d zero of it (read-only; one per dtype)


def _relu_forward(a):
    """max(a, 0) in a's dtype. The 0 is a 0-d array of that dtype: a Python 0 costs
    NumPy a conversion per call, as much as the max itself on small arrays."""
    zero = _ZEROS.get(a.dtype)
    if zero is None:
        zero = np.zeros((), a.dtype)
        zero.flags.writeable = False
        _ZEROS[a.dtype] = zero
    return np.maximum(a, zero)


def _unary(name, forward, vjp, jvp, node_name=None):
    return defop(name, forward, vjp=(vjp,), jvp=jvp, node_name=node_name)


NEG = _unary("neg", np.negative, lambda F, g: -g, lambda F, t: -t[0])
EXP = _unary("exp", np.exp, lambda F, g, result: g * F.conj(result),
             lambda F, t, result: t[0] * result)
LOG = _unary("log", np.log, lambda F, g, self: g / F.conj(self), lambda F, t, self: t[0] / self)
LOG1P = _unary("log1p", np.log1p, lambda F, g, self: g / F.conj(self + 1),
               lambda F, t, self: t[0] / (self + 1))
EXPM1 = _unary("expm1", np.expm1, lambda F, g, result: g * F.conj(result + 1),
               lambda F, t, result: t[0] * (result + 1))
SQRT = _unary("sqrt", np.sqrt, lambda F, g, result: g / (2 * F.conj(result)),
              lambda F, t, result: t[0] / (2 * result))
RSQRT = _unary("rsqrt", lambda a: 1 / np.sqrt(a),
               lambda F, g, result: g * F.conj(-0.5 * result * result * result),
               lambda F, t, result: t[0] * (-0.5 * result * result * result))
SIN = _unary("sin", np.sin, lambda F, g, self: g * F.conj(F.cos(self)),
             lambda F, t, self: t[0] * F.cos(self))
COS = _unary("cos", np.cos, lambda F, g, self: -g * F.conj(F.sin(self)),
             lambda F, t, self: -t[0] * F.sin(self))
TAN = _unary("tan", np.tan, lambda F, g, result: g * F.conj(1 + result * result),
             lambda F, t, result: t[0] * (1 + result * result))
TANH = _unary("tanh", np.tanh, lambda F, g, result: g * F.conj(1 - result * result),
              lambda F, t, result: t[0] * (1 - result * result))
SIGMOID = _unary("sigmoid", lambda a: _sigmoid(a),
                 lambda F, g, result: g * F.conj(result * (1 - result)),
                 lambda F, t, result: t[0] * (result * (1 - result)))
RELU = _unary("relu", _relu_forward,
              lambda F, g, result: g * (result > 0), lambda F, t, result: t[0] * (result > 0))
ERF = _unary("erf", _erf, lambda F, g, self: g * F.erf_prime(self),
             lambda F, t, self: t[0] * F.erf_prime(self))
ABS = _unary("abs", np.abs, lambda F, g, self: g * F.sgn(self),
             lambda F, t, self: F.real(F.conj(F.sgn(self)) * t[0]) if F.is_complex(self)
             else t[0] * F.sgn(self))
SIGN = _unary("sign", np.sign, lambda F, g: g * 0, lambda F, t: t[0] * 0)
SGN = _unary("sgn", lambda a: _sgn(a), lambda F, g, self, result: F.sgn_grad(g, self, result),
             lambda F, t, self, result: F.sgn_jvp(t[0], self, result))
CONJ = _unary("conj", np.conj, lambda F, g: F.conj(g), lambda F, t: F.conj(t[0]))
REAL = _unary("real", np.real, lambda F, g: g, lambda F, t: F.real(t[0]))   # views
IMAG = _unary("imag", np.imag, lambda F, g: g * 1j, lambda F, t: F.imag(t[0]))
RSUB = defop("rsub", lambda a, b, alpha: b - a if alpha == 1 else b - alpha * a,
             inputs=("self", "other"), attrs=("alpha",), node_name="RsubBackward1",
             vjp=(lambda F, g, alpha: -g if alpha == 1 else -g * F.conj_scalar(alpha),
                  lambda F, g: g),
             jvp=lambda F, t, alpha: t[1] - alpha * t[0])
POW_SCALAR_BASE = defop("pow_scalar_base", lambda e, base: np.power(base, e), inputs=("exponent",),
                        attrs=("base",), node_name="PowBackward2",
                        vjp=(lambda F, g, result, base:
                             g * F.conj(F.pow_grad_scalar_base(result, base)),),
                        jvp=lambda F, t, result, base: t[0] * F.pow_grad_scalar_base(result, base))
ANGLE = _unary("angle", lambda a: np.angle(a).astype(np.real(a).dtype, copy=False),
               lambda F, g, self: F.angle_grad(g, self),
               lambda F, t, self: F.angle_jvp(t[0], self))
CLAMP = defop("clamp", lambda a, min, max: _clamp(a, min, max), attrs=("min", "max"),
              node_name="ClampBackward1",
              vjp=(lambda F, g, self, min, max: g * F.clamp_mask(self, min, max),),
              jvp=lambda F, t, self, min, max: t[0] * F.clamp_mask(self, min, max))
CLAMP_TENSOR = defop("clamp_tensor", lambda a, lo, hi: np.minimum(np.maximum(a, lo), hi),
                     inputs=("self", "min", "max"), node_name="ClampBackward0",
                     vjp=(lambda F, g, self, min, max: g * ((self >= min) * (self <= max)),
                          lambda F, g, self, min, max: g * ((self < min) * (min <= max)),
                          lambda F, g, self, min, max: g * ((self > max) + (min > max))),
                     jvp=lambda F, t, self, min, max: t[0] * ((self >= min) * (self <= max))
                     + t[1] * ((self < min) * (min <= max)) + t[2] * ((self > max) + (min > max)))
FLOOR = _unary("floor", np.floor, lambda F, g: g * 0, lambda F, t: t[0] * 0)
CEIL = _unary("ceil", np.ceil, lambda F, g: g * 0, lambda F, t: t[0] * 0)
ROUND = _unary("round", np.round, lambda F, g: g * 0, lambda F, t: t[0] * 0)
TRUNC = _unary("trunc", np.trunc, lambda F, g: g * 0, lambda F, t: t[0] * 0)
TO = defop("to_copy", lambda a, dtype: a.astype(dtype.np), attrs=("dtype",),
           node_name="ToCopyBackward0", vjp=(lambda F, g: g,), jvp=lambda F, t: t[0])
CLONE = _unary("clone", np.copy, lambda F, g: g, lambda F, t: t[0])


@array_fn("sigmoid")
def _sigmoid(a):
    if a.dtype.kind == "c":
        return 1 / (1 + np.exp(-a))
    out = np.empty_like(a)
    pos = a >= 0
    np.divide(1, 1 + np.exp(-a, where=pos, out=np.zeros_like(a)), out=out, where=pos)
    ea = np.exp(a, where=~pos, out=np.zeros_like(a))
    np.divide(ea, 1 + ea, out=out, where=~pos)
    return out


@array_fn("sgn")
def _sgn(a):
    if a.dtype.kind != "c":
        return np.sign(a)
    mag = np.abs(a)
    return np.where(mag == 0, 0, a / np.where(mag == 0, 1, mag))


def _clamp(a, lo, hi):
    out = a
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    return np.asarray(out, dtype=a.dtype)


# --- public functions ---------------------------------------------------------------
@public
def add(input, other, *, alpha=1):
    """Elementwise ``input + alpha * other`` (with broadcasting).

    >>> import chainrule as cr
    >>> cr.add(cr.tensor([1., 2.]), cr.tensor([10., 20.]), alpha=2).tolist()
    [21.0, 42.0]
    """
    return apply_binary(ADD, input, other, {"alpha": alpha})


@public
def sub(input, other, *, alpha=1):
    """Elementwise ``input - alpha * other``.

    >>> import chainrule as cr
    >>> cr.sub(cr.tensor([5.]), cr.tensor([1.])).tolist()
    [4.0]
    """
    return apply_binary(SUB, input, other, {"alpha": alpha})


subtract = public(sub, name="subtract")


@public
def mul(input, other):
    """Elementwise product.

    >>> import chainrule as cr
    >>> cr.mul(cr.tensor([2., 3.]), 4).tolist()
    [8.0, 12.0]
    """
    return apply_binary(MUL, input, other)


multiply = public(mul, name="multiply")


@public
def div(input, other, *, rounding_mode=None):
    """Elementwise true division; ``rounding_mode`` "trunc" or "floor" rounds.

    >>> import chainrule as cr
    >>> cr.div(cr.tensor([7.]), 2, rounding_mode="floor").tolist()
    [3.0]
    """
    if rounding_mode is None:
        a, b = _true_div_operands(input, other)
        return apply_binary(DIV, a, b)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    return apply_binary(DIV_ROUNDED, input, other, {"rounding_mode": rounding_mode})


divide = public(div, name="divide")
true_divide = public(lambda input, other: div(input, other), name="true_divide")


def _true_div_operands(a, b):
    """Integer operands of true division become the default float dtype."""
    a, b = promote(a, b)
    if a._data.dtype.kind in "biu":
        a, b = float_input(a), float_input(b)
    return a, b


@public
def pow(input, exponent):
    """``input ** exponent`` elementwise (either may be a Python number).

    >>> import chainrule as cr
    >>> cr.pow(cr.tensor([2., 3.]), 2).tolist()
    [4.0, 9.0]
    """
    if not isinstance(input, Tensor):
        base, exp = promote(input, exponent)
        return apply_binary(POW, base, exp)
    if isinstance(exponent, Tensor):
        return apply_binary(POW, input, exponent)
    (base,) = [input] if _keeps_dtype(input, exponent) else promote(input, exponent)[:1]
    if base._data.dtype.kind in "iu" and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return apply_op(POW_SCALAR, (base,), {"exponent": exponent})


def _keeps_dtype(t, scalar):
    return _dtypes.scalar_category(scalar) <= t.dtype.category


for _name, _op, _doc in [
        ("neg", NEG, "-x"), ("exp", EXP, "e**x"), ("log", LOG, "natural logarithm"),
        ("log1p", LOG1P, "log(1 + x)"), ("expm1", EXPM1, "e**x - 1"), ("sqrt", SQRT, "square root"),
        ("rsqrt", RSQRT, "1 / sqrt(x)"), ("sin", SIN, "sine"), ("cos", COS, "cosine"),
        ("tan", TAN, "tangent"), ("tanh", TANH, "hyperbolic tangent"),
        ("sigmoid", SIGMOID, "logistic sigmoid 1 / (1 + e**-x)"), ("erf", ERF, "error function"),
        ("abs", ABS, "absolute value (magnitude for complex)"), ("sign", SIGN, "sign (-1, 0, 1)"),
        ("sgn", SGN, "sign, z / |z| for complex"), ("relu", RELU, "max(x, 0)"),
        ("floor", FLOOR, "floor"), ("ceil", CEIL, "ceiling"), ("round", ROUND, "round half to even"),
        ("trunc", TRUNC, "round toward zero")]:
    def _make(op=_op, name=_name, doc=_doc, floating=_name not in ("neg", "abs", "sign", "sgn",
                                                                    "relu", "floor", "ceil",
                                                                    "round", "trunc")):
        def fn(input):
            t = float_input(input) if floating else input
            return apply_op(op, (t,), EMPTY)
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = (f"Elementwise {doc}.\n\n    >>> import chainrule as cr\n"
                      f"    >>> cr.{name}(cr.tensor([0.5])).shape\n    chainrule.Size([1])\n")
        return fn
    _fn = public(_make(), name=_name)
    if Tensor.__dict__.get(_name) is _fn:
        accelerable(_name, "unary", _op, EMPTY, _fn)      # Note [method slot]



@public
def clamp(input, min=None, max=None):
    """Limit values to ``[min, max]`` (numbers or tensors; either may be None).

    >>> import chainrule as cr
    >>> cr.clamp(cr.tensor([-2., 0.5, 3.]), min=0, max=1).tolist()
    [0.0, 0.5, 1.0]
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = min if min is not None else _fill_like(input, -np.inf)
        hi = max if max is not None else _fill_like(input, np.inf)
        a, lo, hi = promote(input, lo, hi)
        return apply_op(CLAMP_TENSOR, (a, lo, hi), EMPTY)
    return apply_op(CLAMP, (input,), {"min": min, "max": max})


clip = public(clamp, name="clip")


def _fill_like(t, value):
    return Tensor._wrap(np.full((), value, dtype=t._data.dtype if t._data.dtype.kind in "fc"
                                else np.float64))


@public
def maximum(input, other):
    """Elementwise maximum of two tensors.

    >>> import chainrule as cr
    >>> cr.maximum(cr.tensor([1., 5.]), cr.tensor([3., 2.])).tolist()
    [3.0, 5.0]
    """
    return apply_binary(MAXIMUM, input, other)


@public
def minimum(input, other):
    """Elementwise minimum of two tensors.

    >>> import chainrule as cr
    >>> cr.minimum(cr.tensor([1., 5.]), cr.tensor([3., 2.])).tolist()
    [1.0, 2.0]
    """
    return apply_binary(MINIMUM, input, other)


@public(method=False)
def where(condition, input=None, other=None):
    """Pick from ``input`` where ``condition`` holds, else from ``other``.

    >>> import chainrule as cr
    >>> x = cr.tensor([1., -2.])
    >>> cr.where(x > 0, x, cr.zeros(2)).tolist()
    [1.0, 0.0]
    """
    if input is None and other is None:
        return tuple(Tensor._wrap(i) for i in np.nonzero(condition._data))
    cond = as_tensor_arg(condition, "condition")
    if cond._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {cond.dtype.name.capitalize()}")
    a, b = promote(input, other)
    return apply_op(WHERE, (cond, a, b), EMPTY)


@public
def remainder(input, other):
    """Python-style modulus (the result has the sign of ``other``).

    >>> import chainrule as cr
    >>> cr.remainder(cr.tensor([-3., 5.]), 2).tolist()
    [1.0, 1.0]
    """
    return apply_binary(REMAINDER, input, other)


@public
def floor_divide(input, other):
    """Elementwise floor division.

    >>> import chainrule as cr
    >>> cr.floor_divide(cr.tensor([7., -7.]), 2).tolist()
    [3.0, -4.0]
    """
    return apply_binary(FLOOR_DIVIDE, input, other)


@public(method=False)
def real(input):
    """The real part, a view sharing memory (for real input, the input itself); also
    the attribute ``z.real``, which can be assigned to.

    >>> import chainrule as cr
    >>> z = cr.tensor([1 + 2j]); cr.real(z).tolist(), z.real.tolist()
    ([1.0], [1.0])
    """
    if not input.is_complex():
        return input
    return make_view(REAL, input, EMPTY, _part_view_fn(real, np.real))


@public(method=False)
def imag(input):
    """The imaginary part of a complex tensor, a view sharing memory; also ``z.imag``.

    >>> import chainrule as cr
    >>> cr.tensor([1 + 2j]).imag.tolist()
    [2.0]
    """
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return make_view(IMAG, input, EMPTY, _part_view_fn(imag, np.imag))


def _part_view_fn(public_fn, array_fn):
    return lambda x: public_fn(x) if isinstance(x, Tensor) else array_fn(x)


def _set_part(getter):
    def setter(self, value):
        getter(self).copy_(value)
    return setter


Tensor.real = property(real, _set_part(real))
Tensor.imag = property(imag, _set_part(imag))


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (the reflected subtraction, RsubBackward1)."""
    return apply_binary(RSUB, input, other, {"alpha": alpha})


def pow_scalar_base(base, exponent):
    """``base ** exponent`` for a Python number ``base`` (PowBackward2)."""
    exponent = float_input(exponent) if isinstance(base, float) else exponent
    (exp,) = [exponent] if _keeps_dtype(exponent, base) else promote(exponent, base)[:1]
    return apply_op(POW_SCALAR_BASE, (exp,), {"base": base})


@method("where")
def where_method(self, condition, y):
    """``x.where(condition, y)`` is ``where(condition, x, y)``.

    >>> import chainrule as cr
    >>> x = cr.tensor([1., 2.]); x.where(x > 1, cr.zeros(2)).tolist()
    [0.0, 2.0]
    """
    return where(condition, self, y)


@public
def conj(input):
    """Complex conjugate (the input itself for real tensors).

    >>> import chainrule as cr
    >>> cr.conj(cr.tensor([1 + 2j])).tolist()
    [(1-2j)]
    """
    if not input.is_complex():
        return input
    return apply_op(CONJ, (input,), EMPTY)


@public
def angle(input):
    """The argument of each element (0 or pi for real input).

    >>> import chainrule as cr
    >>> round(cr.angle(cr.tensor([1j])).item(), 4)
    1.5708
    """
    return apply_op(ANGLE, (float_input(input),), EMPTY)


@public
def clone(input, *, memory_format=None):
    """A copy that stays in the graph (gradients flow back to ``input``).

    >>> import chainrule as cr
    >>> x = cr.ones(2, requires_grad=True)
    >>> cr.clone(x).grad_fn.name()
    'CloneBackward0'
    """
    return apply_op(CLONE, (input,), EMPTY)


def to_dtype(t, dtype):
    """A differentiable dtype cast (records ToCopyBackward0)."""
    dtype = _dtypes.to_dtype(dtype)
    if t._data.dtype == dtype.np:
        return t
    return apply_op(TO, (t,), {"dtype": dtype})


public(FUNCTIONS["neg"], name="negative")
public(FUNCTIONS["abs"], name="absolute")
