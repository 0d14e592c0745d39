"""Derivative table: elementwise ops.

Each entry: the forward on ndarrays, then one VJP per input, then the JVP (tangent
``t`` of each input, in order), written for both namespaces (Note [one formula, two
namespaces] in _registry.py). Complex inputs follow the conjugate-Wirtinger
convention: for a holomorphic f, the VJP is ``g * conj(f'(z))``.
"""
import math

import numpy as np

from .. import _dtypes, _layout
from .._backends import move_array as _move_array
from .._batched import refuse_dynamic_shape
from .._tensor import Tensor, asarray, on_device_of
from ._common import (BOOL_KIND, COMPLEX_KIND, EMPTY, FUNCTIONS, INTEGER_KINDS, apply_binary,
                      apply_real_binary, as_tensor_arg, binary_operands, commit_inplace,
                      complex_half_error, float_input, kernel_error, method, promote, public,
                      raising, refusing, require_tensors)
from ._formula_helpers import helper
from ._method_slot import accelerable
from ._namespaces import array_fn
from .views import make_view
from ._registry import NONDIFF, NOT_IMPLEMENTED, apply_op, defop
from . import _special


@array_fn("erf")
def _erf(x):
    return _special.in_float64("erf", x)            # Note [optional scipy] in _special.py


# --- binary arithmetic --------------------------------------------------------------
def _int_trunc_div(a, b):
    q = np.floor_divide(a, b)
    return q + ((q < 0) & (q * b != a))


def _integer_division(np_fn, kernel):
    """``np_fn`` as the reference's integer division kernels run it: no bool kernel, and
    a zero divisor of integers raises where NumPy would give 0 (Note [kernels without a
    dtype])."""
    def forward(a, b, *args):
        if a.dtype.kind in "iu" and np.any(b == 0):
            raise RuntimeError("ZeroDivisionError")
        return np_fn(a, b, *args)
    return refusing(forward, {BOOL_KIND: kernel_error(kernel)})


def _div_rounded(a, b, rounding_mode):
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    if a.dtype.kind in "fc":
        return np.trunc(a / b).astype(np.result_type(a, b))
    return _int_trunc_div(a, b)


_DIV_ROUNDED_KERNELS = {"floor": _integer_division(_div_rounded, "div_floor_cpu"),
                        "trunc": _integer_division(_div_rounded, "div_trunc_cpu")}


def _bool_power(a, exponent):
    """A bool tensor to a bool power stays bool, as in the reference: x ** True is x,
    x ** False is True."""
    return a.copy() if exponent else np.ones_like(a)


def _power_of_number(base, e):
    """``base ** e`` in e's dtype (NumPy computes bfloat16 powers in float32)."""
    return np.power(base, e).astype(e.dtype, copy=False)


def _complex_refused(name):
    """maximum, minimum, fmax, fmin: the reference orders no complex numbers."""
    return raising(RuntimeError, f"{name} not implemented for complex tensors.")


_CLAMP_COMPLEX = raising(NotImplementedError, "clamp is not supported for complex types")


def _power(a, b):
    """``a ** b``; integers to negative tensor powers as the reference's kernel gives
    them (1 and -1 keep their powers, other bases go to 0) where NumPy raises."""
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and np.any(b < 0):
        safe = np.power(a, np.abs(b))
        unit = np.where(b % 2 == 0, np.abs(a), a)          # 1 ** b, (-1) ** b
        return np.where(b < 0, np.where(np.abs(a) == 1, unit, 0), safe).astype(safe.dtype)
    out = np.power(a, b)
    if out.dtype.kind == "c":           # the reference's exp(b log a): nan for 0 ** 0
        undefined = (a == 0) & (b == 0)
        if undefined.any():
            out = np.where(undefined, np.array(complex("nan+nanj"), out.dtype), out)
    return out


ADD = defop("add", lambda a, b, alpha: a + b if alpha == 1 else a + alpha * b,
            inputs=("self", "other"), attrs=("alpha",),
            vjp=(lambda F, g: g,
                 lambda F, g, alpha: g if alpha == 1 else g * F.conj_scalar(alpha)),
            jvp=lambda F, t, alpha: t[0] + t[1] if alpha == 1 else t[0] + alpha * t[1])
SUB = defop("sub", lambda a, b, alpha: a - b if alpha == 1 else a - alpha * b,
            inputs=("self", "other"), attrs=("alpha",),
            vjp=(lambda F, g: g,
                 lambda F, g, alpha: -g if alpha == 1 else -g * F.conj_scalar(alpha)),
            jvp=lambda F, t, alpha: t[0] - t[1] if alpha == 1 else t[0] - alpha * t[1])
MUL = defop("mul", np.multiply, inputs=("self", "other"),
            vjp=(lambda F, g, other: g * F.conj(other),
                 lambda F, g, self: g * F.conj(self)),
            jvp=lambda F, t, self, other: t[0] * other + self * t[1])
DIV = defop("div", np.true_divide, inputs=("self", "other"),
            vjp=(lambda F, g, other: g / F.conj(other),
                 lambda F, g, self, other: -g * F.conj(self / (other * other))),
            jvp=lambda F, t, self, other: t[0] / other - t[1] * self / (other * other))
# the reference's div.Scalar (DivBackward1) and mul.Scalar (MulBackward1): a tensor
# divided or multiplied by a number inside a composite (soft-target cross_entropy's
# mean, label smoothing's mix); Python's ``t / 2`` and ``t * 2`` wrap the number
# instead and record DIV and MUL (DivBackward0, MulBackward0)
DIV_SCALAR = defop("div_scalar", lambda a, other: np.true_divide(a, other), attrs=("other",),
                   node_name="DivBackward1", vjp=(lambda F, g, other: g / other,),
                   jvp=lambda F, t, other: t[0] / other)
MUL_SCALAR = defop("mul_scalar", lambda a, other: np.multiply(a, other), attrs=("other",),
                   node_name="MulBackward1", vjp=(lambda F, g, other: g * other,),
                   jvp=lambda F, t, other: t[0] * other)
DIV_ROUNDED = defop("div_rounded",
                    lambda a, b, rounding_mode: _DIV_ROUNDED_KERNELS[rounding_mode](
                        a, b, rounding_mode),
                    inputs=("self", "other"), attrs=("rounding_mode",), node_name="DivBackward2",
                    vjp=(lambda F, g: g * 0, lambda F, g: g * 0), jvp=lambda F, t: t[0] * 0)
POW = defop("pow", refusing(_power, {BOOL_KIND: kernel_error("pow")}), inputs=("self", "exponent"),
            node_name="PowBackward1",
            vjp=(lambda F, g, self, exponent: g * F.conj(F.pow_grad_base(self, exponent)),
                 lambda F, g, self, exponent, result:
                     g * F.conj(F.pow_grad_exponent(self, exponent, result))),
            jvp=lambda F, t, self, exponent, result: t[0] * F.pow_grad_base(self, exponent)
                + t[1] * F.pow_grad_exponent(self, exponent, result))
POW_SCALAR = defop("pow_scalar", lambda a, exponent: _bool_power(a, exponent)
                   if exponent.__class__ is bool and a.dtype.kind == "b" else
                   np.power(a, exponent).astype(a.dtype, copy=False),   # bfloat16 stays
                   attrs=("exponent",),
                   node_name="PowBackward0",
                   vjp=(lambda F, g, self, exponent:
                        g * F.conj(F.pow_grad_base_scalar(self, exponent)),),
                   jvp=lambda F, t, self, exponent: t[0] * F.pow_grad_base_scalar(self, exponent))
MAXIMUM = defop("maximum", refusing(np.maximum, {COMPLEX_KIND: _complex_refused("maximum")}),
                inputs=("self", "other"),
                vjp=(lambda F, g, self, other: F.where(self == other, g / 2, g * (self > other)),
                     lambda F, g, self, other: F.where(self == other, g / 2, g * (other > self))),
                jvp=lambda F, t, self, other: F.where(self >= other, t[0], t[1]))
MINIMUM = defop("minimum", refusing(np.minimum, {COMPLEX_KIND: _complex_refused("minimum")}),
                inputs=("self", "other"),
                vjp=(lambda F, g, self, other: F.where(self == other, g / 2, g * (self < other)),
                     lambda F, g, self, other: F.where(self == other, g / 2, g * (other < self))),
                jvp=lambda F, t, self, other: F.where(self <= other, t[0], t[1]))
# remainder with a number (RemainderBackward0, whose only edge is self's) or a tensor
# (RemainderBackward1), as the reference names its two overloads' nodes
REMAINDER, REMAINDER_TENSOR = (
    defop(name, _integer_division(np.remainder, "remainder_cpu"), inputs=("self", "other"),
          vjp=(lambda F, g: g, other_vjp), jvp=jvp, node_name=node)
    for name, node, other_vjp, jvp in (
        ("remainder", "RemainderBackward0", NONDIFF, lambda F, t: t[0]),
        ("remainder_tensor", "RemainderBackward1",
         lambda F, g, self, other: -g * F.floor(self / other),
         lambda F, t, self, other: t[0] - t[1] * F.floor(self / other))))
FLOOR_DIVIDE = defop("floor_divide", _integer_division(np.floor_divide, "div_floor_cpu"),
                     inputs=("self", "other"),
                     vjp=(NOT_IMPLEMENTED, NOT_IMPLEMENTED), jvp=NOT_IMPLEMENTED)
WHERE = defop("where", lambda c, a, b: np.where(c, a, b), inputs=("condition", "self", "other"),
              vjp=(NONDIFF,
                   lambda F, g, condition: F.where(condition, g, g * 0),
                   lambda F, g, condition: F.where(condition, g * 0, g)),
              jvp=lambda F, t, condition: F.where(condition, t[1], t[2]))


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


def _rounding(np_fn, name):
    """floor, ceil, trunc: integers are their own value; no bool or complex kernel
    (Note [kernels without a dtype])."""
    complex_error = raising(NotImplementedError, f"{name} is not supported for complex inputs")
    return refusing(np_fn, {BOOL_KIND: kernel_error(f"{name}_vml_cpu"),
                            COMPLEX_KIND: complex_error})


def _sign_forward(a):
    """The sign of real numbers; a bool is its own sign (Note [kernels without a dtype])."""
    if a.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    return a.copy() if a.dtype.kind == "b" else np.sign(a)


BOOL_NEGATION = ("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                 "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
NEG = _unary("neg", refusing(np.negative, {BOOL_KIND: raising(RuntimeError, BOOL_NEGATION)}),
             lambda F, g: -g, lambda F, t: -t[0])
EXP = _unary("exp", np.exp, lambda F, g, result: g * F.conj(result),
             lambda F, t, result: t[0] * result)
LOG = _unary("log", np.log, lambda F, g, self: g / F.conj(self), lambda F, t, self: t[0] / self)
LOG1P = _unary("log1p", np.log1p, lambda F, g, self: g / F.conj(self + 1),
               lambda F, t, self: t[0] / (self + 1), node_name="Log1PBackward0")
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
RELU = _unary("relu", refusing(_relu_forward, {
                  BOOL_KIND: raising(RuntimeError, "Boolean inputs not supported for relu"),
                  COMPLEX_KIND: _CLAMP_COMPLEX}),
              lambda F, g, result: g * (result > 0), lambda F, t, result: t[0] * (result > 0))
ERF = _unary("erf", _erf, lambda F, g, self: g * F.erf_prime(self),
             lambda F, t, self: t[0] * F.erf_prime(self))
ABS = _unary("abs", refusing(np.abs, {BOOL_KIND: kernel_error("abs_cpu")}),
             lambda F, g, self: g * F.sgn(self),
             lambda F, t, self: F.real(F.conj(F.sgn(self)) * t[0]) if F.is_complex(self)
             else t[0] * F.sgn(self))
SIGN = _unary("sign", _sign_forward, lambda F, g: g * 0, lambda F, t: t[0] * 0)
SGN = _unary("sgn", lambda a: _sgn(a), lambda F, g, self, result: F.sgn_grad(g, self, result),
             lambda F, t, self, result: F.sgn_jvp(t[0], self, result))
CONJ = _unary("conj", np.conj, lambda F, g: F.conj(g), lambda F, t: F.conj(t[0]))
REAL = _unary("real", np.real, lambda F, g: g, lambda F, t: F.real(t[0]))   # views
IMAG = _unary("imag", np.imag, lambda F, g: g * 1j, lambda F, t: F.imag(t[0]))
# rsub with a number (``2 - x``: RsubBackward1, whose only edge is self's) or a tensor
# (RsubBackward0)
RSUB, RSUB_TENSOR = (
    defop(name, lambda a, b, alpha: b - a if alpha == 1 else b - alpha * a,
          inputs=("self", "other"), attrs=("alpha",), node_name=node,
          vjp=(lambda F, g, alpha: -g if alpha == 1 else -g * F.conj_scalar(alpha), other_vjp),
          jvp=jvp)
    for name, node, other_vjp, jvp in (
        ("rsub", "RsubBackward1", NONDIFF, lambda F, t, alpha: -alpha * t[0]),
        ("rsub_tensor", "RsubBackward0", lambda F, g: g,
         lambda F, t, alpha: t[1] - alpha * t[0])))
POW_SCALAR_BASE = defop("pow_scalar_base", lambda e, base: _power_of_number(base, e),
                        inputs=("exponent",),
                        attrs=("base",), node_name="PowBackward2",
                        vjp=(lambda F, g, result, base:
                             g * F.conj(F.pow_grad_scalar_base(result, base)),),
                        jvp=lambda F, t, result, base: t[0] * F.pow_grad_scalar_base(result, base))
ANGLE = _unary("angle", lambda a: np.angle(a).astype(np.real(a).dtype, copy=False),
               lambda F, g, self: F.angle_grad(g, self),
               lambda F, t, self: F.angle_jvp(t[0], self))
CLAMP = defop("clamp", refusing(lambda a, min, max: _clamp(a, min, max),
                                {COMPLEX_KIND: _CLAMP_COMPLEX}), attrs=("min", "max"),
              node_name="ClampBackward1",
              vjp=(lambda F, g, self, min, max: g * F.clamp_mask(self, min, max),),
              jvp=lambda F, t, self, min, max: t[0] * F.clamp_mask(self, min, max))
CLAMP_TENSOR = defop("clamp_tensor", refusing(
                         lambda a, lo, hi: np.minimum(np.maximum(a, lo), hi),
                         {COMPLEX_KIND: _CLAMP_COMPLEX, BOOL_KIND: kernel_error("clamp_cpu")}),
                     inputs=("self", "min", "max"), node_name="ClampBackward0",
                     vjp=(lambda F, g, self, min, max: g * ((self >= min) * (self <= max)),
                          lambda F, g, self, min, max: g * ((self < min) * (min <= max)),
                          lambda F, g, self, min, max: g * ((self > max) + (min > max))),
                     jvp=lambda F, t, self, min, max: t[0] * ((self >= min) * (self <= max))
                     + t[1] * ((self < min) * (min <= max)) + t[2] * ((self > max) + (min > max)))
FLOOR = _unary("floor", _rounding(np.floor, "floor"), lambda F, g: g * 0, lambda F, t: t[0] * 0)
CEIL = _unary("ceil", _rounding(np.ceil, "ceil"), lambda F, g: g * 0, lambda F, t: t[0] * 0)
ROUND = _unary("round",
               refusing(np.round, {BOOL_KIND + COMPLEX_KIND: kernel_error("round_vml_cpu")}),
               lambda F, g: g * 0, lambda F, t: t[0] * 0)
TRUNC = _unary("trunc", _rounding(np.trunc, "trunc"), lambda F, g: g * 0, lambda F, t: t[0] * 0)


def _to_copy(a, dtype, device, source):
    """The forward of ``to_copy``: a cast and/or a move to another device (``device``
    None: the same device; ``source``, the input's device, takes the gradient back)."""
    out = a if dtype is None or a.dtype == dtype.np else a.astype(dtype.np)
    return out if device is None else _move_array(out, device)


TO = defop("to_copy", _to_copy, attrs=("dtype", "device", "source"),
           node_name="ToCopyBackward0",
           vjp=(lambda F, g, source: g if source is None else F.to_device(g, source),),
           jvp=lambda F, t, device: t[0] if device is None else F.to_device(t[0], device))
CLONE = _unary("clone", lambda a, order="K": np.copy(a, order=order), lambda F, g: g,
               lambda F, t: t[0])       # order "C": memory_format=contiguous_format


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
        return a.copy() if a.dtype.kind == "b" else np.sign(a)
    mag = np.abs(a)
    return np.where(mag == 0, 0, a / np.where(mag == 0, 1, mag))


def _clamp(a, lo, hi):
    if a.dtype.kind == "b":       # bool bounds (a number bound of another kind promotes)
        kernel = "clamp_scalar" if lo is not None and hi is not None else \
            "clamp_min_scalar" if lo is not None else "clamp_max_scalar"
        raise kernel_error(f"{kernel}_cpu")(a.dtype)
    out = a
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    return asarray(out, dtype=a.dtype)


# --- public functions ---------------------------------------------------------------
@public
def add(input, other, *, alpha=1):
    """Elementwise ``input + alpha * other`` (with broadcasting).

    >>> import chainrule as cr
    >>> cr.add(cr.tensor([1., 2.]), cr.tensor([10., 20.]), alpha=2).tolist()
    [21.0, 42.0]
    """
    if alpha.__class__ is not int:
        check_alpha(input, other, alpha)
    return apply_binary(ADD, input, other, {"alpha": alpha})


@public
def sub(input, other, *, alpha=1):
    """Elementwise ``input - alpha * other``.

    >>> import chainrule as cr
    >>> cr.sub(cr.tensor([5.]), cr.tensor([1.])).tolist()
    [4.0]
    """
    return apply_sub(SUB, input, other, {"alpha": alpha})


subtract = public(sub, name="subtract")


# Note [bool subtraction]: the reference refuses ``-`` with a bool operand (a bool
# tensor or a Python bool), whatever the other operand: two bools point to xor, one to
# ``~``. Same-dtype non-bool tensors (the common case) pass binary_operands unchanged
# and so do a float or int scalar meeting a tensor of its kind; every bool case is
# promoted or has a bool dtype.
BOOL_SUBTRACTION = ("Subtraction, the `-` operator, with two bool tensors is not supported. "
                    "Use the `^` or `logical_xor()` operator instead.",
                    "Subtraction, the `-` operator, with a bool tensor is not supported. If "
                    "you are trying to invert a mask, use the `~` or `logical_not()` operator "
                    "instead.")


_WEAK = (float, int)


def _is_bool_operand(value):
    return value.__class__ is bool or (isinstance(value, Tensor) and
                                       value._data.dtype.kind == "b")


def apply_sub(op, a, b, attrs):
    """apply_binary for sub and rsub, with Note [bool subtraction]."""
    x, y = binary_operands(a, b)
    if x is not a or x._data.dtype.kind == "b" or (y is not b and b.__class__ not in _WEAK):
        refuse_bool_subtraction(a, b)
    if attrs["alpha"].__class__ is not int:
        check_alpha(a, b, attrs["alpha"])
    return apply_binary(op, x, y, attrs)


def refuse_bool_subtraction(a, b):
    """Note [bool subtraction]."""
    bools = _is_bool_operand(a) + _is_bool_operand(b)
    if bools:
        raise RuntimeError(BOOL_SUBTRACTION[bools == 1])


def check_alpha(a, b, alpha):
    """The reference's checks of ``alpha`` against the result's kind (add, sub): a bool
    alpha needs a bool result, a float alpha a floating or complex one."""
    kinds = {_operand_kind(a), _operand_kind(b)}
    if alpha.__class__ is bool and kinds != {"b"}:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and kinds <= set("biu"):
        raise RuntimeError("For integral input tensors, argument alpha must not be a "
                           "floating point number.")


def _operand_kind(value):
    if isinstance(value, Tensor):
        return value._data.dtype.kind
    return {bool: "b", int: "i", float: "f", complex: "c"}.get(type(value), "f")


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
        if isinstance(input, Tensor) and input._data.dtype.kind in "fc":
            return apply_binary(DIV, input, other)      # it promotes as ``*`` does
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
    base = _meeting_scalar(input, exponent)
    if base._data.dtype.kind in "iu" and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return apply_op(POW_SCALAR, (base,), {"exponent": exponent})


if Tensor.__dict__.get("pow") is pow:
    # Note [method slot]: ``x.pow(number)`` of a float or complex tensor
    accelerable("pow", "scalar", POW_SCALAR, {"exponent": None}, pow)


def _keeps_dtype(t, scalar):
    return _dtypes.scalar_category(scalar) <= t.dtype.category


def _meeting_scalar(t, scalar):
    """``t`` as an op with the Python number ``scalar`` sees it: itself, or promoted when
    the number is of a higher category (an integer tensor and a float)."""
    return t if _keeps_dtype(t, scalar) else promote(t, scalar)[0]


for _name, _op, _doc in [
        ("neg", NEG, "-x"), ("exp", EXP, "e**x"), ("log", LOG, "natural logarithm"),
        ("log1p", LOG1P, "log(1 + x)"), ("expm1", EXPM1, "e**x - 1"), ("sqrt", SQRT, "square root"),
        ("rsqrt", RSQRT, "1 / sqrt(x)"), ("sin", SIN, "sine"), ("cos", COS, "cosine"),
        ("tan", TAN, "tangent"), ("tanh", TANH, "hyperbolic tangent"),
        ("sigmoid", SIGMOID, "logistic sigmoid 1 / (1 + e**-x)"), ("erf", ERF, "error function"),
        ("abs", ABS, "absolute value (magnitude for complex)"), ("sign", SIGN, "sign (-1, 0, 1)"),
        ("sgn", SGN, "sign, z / |z| for complex"), ("relu", RELU, "max(x, 0)"),
        ("floor", FLOOR, "floor"), ("ceil", CEIL, "ceiling"),
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
    check_complex_bounds(input, (min, max))
    for bound in (min, max):           # an integer tensor meets a float bound: promoted
        if bound is not None:
            input = _meeting_scalar(input, bound)
    dtype = input._data.dtype                # Note [checked integer conversion]
    min, max = (_dtypes.checked_integer(b, dtype) for b in (min, max))
    return apply_op(CLAMP, (input,), {"min": min, "max": max})


clip = public(clamp, name="clip")


def check_complex_bounds(input, bounds):
    """clamp's number bounds are read as doubles for a floating tensor: a complex one
    fails there, before any promotion (an integer tensor promotes to complex, refused)."""
    if input._data.dtype.kind in "fV" and any(b.__class__ is complex for b in bounds):
        raise RuntimeError("value cannot be converted to type double without overflow")


def _fill_like(t, value):
    """A missing clamp bound (+-inf) as a 0-d of ``t``'s dtype, so it does not take part
    in the type promotion (an integer tensor's extreme value)."""
    dtype = t._data.dtype
    if dtype.kind == "b":
        value = value > 0
    elif dtype.kind in "iu":
        value = np.iinfo(dtype).max if value > 0 else np.iinfo(dtype).min
    return Tensor._wrap(np.full((), value, dtype=dtype))


# Note [tensor-only arguments]: the binary ops without a Scalar overload
_INPUT_OTHER = ("input", "other")


@public
def maximum(input, other):
    """Elementwise maximum of two tensors.

    >>> import chainrule as cr
    >>> cr.maximum(cr.tensor([1., 5.]), cr.tensor([3., 2.])).tolist()
    [3.0, 5.0]
    """
    require_tensors("maximum", _INPUT_OTHER, input, other)
    return apply_binary(MAXIMUM, input, other)


@public
def minimum(input, other):
    """Elementwise minimum of two tensors.

    >>> import chainrule as cr
    >>> cr.minimum(cr.tensor([1., 5.]), cr.tensor([3., 2.])).tolist()
    [1.0, 2.0]
    """
    require_tensors("minimum", _INPUT_OTHER, input, other)
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
        refuse_dynamic_shape(condition, "aten::where")
        return tuple(Tensor._wrap(i) for i in np.nonzero(condition._data))
    cond = as_tensor_arg(condition, "condition")
    if cond._data.dtype == np.uint8:        # the reference's deprecated byte condition
        cond = Tensor._wrap(cond._data.astype(bool))
    elif cond._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {_dtypes.scalar_type_name(cond._data.dtype)}")
    a, b = promote(input, other)
    return apply_op(WHERE, (cond, a, b), EMPTY)


@public
def remainder(input, other):
    """Python-style modulus (the result has the sign of ``other``).

    >>> import chainrule as cr
    >>> cr.remainder(cr.tensor([-3., 5.]), 2).tolist()
    [1.0, 1.0]
    """
    op = REMAINDER_TENSOR if isinstance(other, Tensor) else REMAINDER
    return apply_real_binary(op, "remainder", input, other)


@public
def floor_divide(input, other):
    """Elementwise floor division.

    >>> import chainrule as cr
    >>> cr.floor_divide(cr.tensor([7., -7.]), 2).tolist()
    [3.0, -4.0]
    """
    return apply_real_binary(FLOOR_DIVIDE, "div_floor", input, other)


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
    """``other - alpha * input`` (the reflected subtraction)."""
    return apply_sub(RSUB_TENSOR if isinstance(other, Tensor) else RSUB, input, other,
                     {"alpha": alpha})


def pow_scalar_base(base, exponent):
    """``base ** exponent`` for a Python number ``base`` (PowBackward2)."""
    exponent = float_input(exponent) if isinstance(base, float) else exponent
    exp = _meeting_scalar(exponent, base)
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
    >>> cr.ones(3, 2).t().clone(memory_format=cr.contiguous_format).stride()
    (3, 1)
    """
    if memory_format is _layout.contiguous_format:
        return apply_op(CLONE, (input,), {"order": "C"})
    return apply_op(CLONE, (input,), EMPTY)


def to_dtype(t, dtype):
    """A differentiable dtype cast (records ToCopyBackward0)."""
    dtype = _dtypes.to_dtype(dtype)
    if t._data.dtype == dtype.np:
        return t
    return apply_op(TO, (t,), {"dtype": dtype, "device": None, "source": None})


public(FUNCTIONS["neg"], name="negative")
public(FUNCTIONS["abs"], name="absolute")


# --- inverse and hyperbolic trig, logs, special functions ---------------------------
_LN2, _LN10 = math.log(2.0), math.log(10.0)
_SQRT_PI_2 = math.sqrt(math.pi) / 2

array_fn("trunc")(np.trunc)
array_fn("digamma")(lambda x: _special.in_float64("digamma", x))
array_fn("polygamma")(lambda n, x: _special.in_float64("polygamma", x, n))


def _quiet(ufunc):
    """A forward that, like the reference, returns nan/inf outside the domain silently."""
    def forward(a):
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return ufunc(a)
    return forward


def _special_forward(name):
    return lambda a: _special.in_float64(name, a)     # Note [optional scipy] in _special.py


ASIN = _unary("asin", _quiet(np.arcsin), lambda F, g, self: g * F.conj(1 / F.sqrt(1 - self * self)),
              lambda F, t, self: t[0] / F.sqrt(1 - self * self))
ACOS = _unary("acos", _quiet(np.arccos),
              lambda F, g, self: -g * F.conj(1 / F.sqrt(1 - self * self)),
              lambda F, t, self: -t[0] / F.sqrt(1 - self * self))
ATAN = _unary("atan", np.arctan, lambda F, g, self: g * F.conj(1 / (1 + self * self)),
              lambda F, t, self: t[0] / (1 + self * self))
SINH = _unary("sinh", _quiet(np.sinh), lambda F, g, self: g * F.conj(F.cosh(self)),
              lambda F, t, self: t[0] * F.cosh(self))
COSH = _unary("cosh", _quiet(np.cosh), lambda F, g, self: g * F.conj(F.sinh(self)),
              lambda F, t, self: t[0] * F.sinh(self))
ASINH = _unary("asinh", np.arcsinh, lambda F, g, self: g * F.conj(1 / F.sqrt(self * self + 1)),
               lambda F, t, self: t[0] / F.sqrt(self * self + 1))
# 1 / (sqrt(z - 1) sqrt(z + 1)): the derivative of arccosh on its principal branch also
# for complex z (1 / sqrt(z**2 - 1) differs from it by a sign where Re z < 0)
ACOSH = _unary("acosh", _quiet(np.arccosh),
               lambda F, g, self: g * F.conj(1 / (F.sqrt(self - 1) * F.sqrt(self + 1))),
               lambda F, t, self: t[0] / (F.sqrt(self - 1) * F.sqrt(self + 1)))
ATANH = _unary("atanh", _quiet(np.arctanh), lambda F, g, self: g * F.conj(1 / (1 - self * self)),
               lambda F, t, self: t[0] / (1 - self * self))
LOG2 = _unary("log2", _quiet(np.log2), lambda F, g, self: g / (F.conj(self) * _LN2),
              lambda F, t, self: t[0] / (self * _LN2))
LOG10 = _unary("log10", _quiet(np.log10), lambda F, g, self: g / (F.conj(self) * _LN10),
               lambda F, t, self: t[0] / (self * _LN10))
EXP2 = _unary("exp2", _quiet(np.exp2), lambda F, g, result: g * F.conj(result) * _LN2,
              lambda F, t, result: t[0] * result * _LN2)
RECIPROCAL = _unary("reciprocal", _quiet(np.reciprocal),
                    lambda F, g, result: -g * F.conj(result * result),
                    lambda F, t, result: -t[0] * (result * result))
ERFC = _unary("erfc", _special_forward("erfc"), lambda F, g, self: -g * F.erf_prime(self),
              lambda F, t, self: -t[0] * F.erf_prime(self))
ERFINV = _unary("erfinv", _special_forward("erfinv"),
                lambda F, g, result: g * _SQRT_PI_2 * F.exp(result * result),
                lambda F, t, result: t[0] * _SQRT_PI_2 * F.exp(result * result))
LGAMMA = _unary("lgamma", _special_forward("lgamma"), lambda F, g, self: g * F.digamma(self),
                lambda F, t, self: t[0] * F.digamma(self))
DIGAMMA = _unary("digamma", _special_forward("digamma"),
                 lambda F, g, self: g * F.polygamma(1, self),
                 lambda F, t, self: t[0] * F.polygamma(1, self))
POLYGAMMA = defop("polygamma", lambda a, n: _special.in_float64("polygamma", a, n), attrs=("n",),
                  vjp=(lambda F, g, self, n: g * F.polygamma(n + 1, self),),
                  jvp=lambda F, t, self, n: t[0] * F.polygamma(n + 1, self))
MVLGAMMA = defop("mvlgamma", lambda a, p: _mvlgamma_forward(a, p), attrs=("p",),
                 vjp=(lambda F, g, self, p: g * F.mvdigamma(self, p),),
                 jvp=lambda F, t, self, p: t[0] * F.mvdigamma(self, p))
LOGIT = defop("logit", refusing(lambda a, eps: _logit_forward(a, eps),
                                {COMPLEX_KIND: kernel_error("logit_cpu")}), attrs=("eps",),
              vjp=(lambda F, g, self, eps: g * F.logit_prime(self, eps),),
              jvp=lambda F, t, self, eps: t[0] * F.logit_prime(self, eps))
SINC = _unary("sinc", lambda a: _sinc_forward(a),
              lambda F, g, self, result: g * F.conj(F.sinc_prime(self, result)),
              lambda F, t, self, result: t[0] * F.sinc_prime(self, result))
FRAC = _unary("frac", refusing(lambda a: a - np.trunc(a),
                              {BOOL_KIND + INTEGER_KINDS + COMPLEX_KIND: kernel_error("frac_cpu")}),
              lambda F, g: g, lambda F, t: t[0])
NAN_TO_NUM = defop("nan_to_num", lambda a, nan, posinf, neginf:
                   np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf),
                   attrs=("nan", "posinf", "neginf"),
                   vjp=(lambda F, g, self: g * ((self - self) == 0),),       # finite self
                   jvp=lambda F, t, self: t[0] * ((self - self) == 0))
ROUND_DECIMALS = defop("round_decimals", refusing(lambda a, decimals: np.round(a, decimals),
                                                  {BOOL_KIND + INTEGER_KINDS + COMPLEX_KIND:
                                                   kernel_error("round_cpu")}),
                       attrs=("decimals",), node_name="RoundBackward1",
                       vjp=(lambda F, g: g * 0,), jvp=lambda F, t: t[0] * 0)
RAD2DEG = _unary("rad2deg", refusing(np.rad2deg, {COMPLEX_KIND: raising(
                     RuntimeError, "rad2deg is not supported for complex tensors.")}),
                 lambda F, g: g * (180 / math.pi),
                 lambda F, t: t[0] * (180 / math.pi), node_name="Rad2DegBackward0")
DEG2RAD = _unary("deg2rad", refusing(np.deg2rad, {COMPLEX_KIND: raising(
                     RuntimeError, "deg2rad is not supported for complex tensors.")}),
                 lambda F, g: g * (math.pi / 180),
                 lambda F, t: t[0] * (math.pi / 180), node_name="Deg2RadBackward0")
CLAMP_MIN = defop("clamp_min", refusing(lambda a, min: np.maximum(a, asarray(min, a.dtype)),
                                        {COMPLEX_KIND: _CLAMP_COMPLEX,
                                         BOOL_KIND: kernel_error("clamp_min_scalar_cpu")}),
                  attrs=("min",), vjp=(lambda F, g, self, min: g * (self >= min),),
                  jvp=lambda F, t, self, min: t[0] * (self >= min))
CLAMP_MAX = defop("clamp_max", refusing(lambda a, max: np.minimum(a, asarray(max, a.dtype)),
                                        {COMPLEX_KIND: _CLAMP_COMPLEX,
                                         BOOL_KIND: kernel_error("clamp_max_scalar_cpu")}),
                  attrs=("max",), vjp=(lambda F, g, self, max: g * (self <= max),),
                  jvp=lambda F, t, self, max: t[0] * (self <= max))
CLAMP_MIN_TENSOR = defop("clamp_min_tensor", refusing(np.maximum, {
                             COMPLEX_KIND: kernel_error("maximum_cpu")}),
                         inputs=("self", "min"),
                         node_name="ClampMinBackward1",
                         vjp=(lambda F, g, self, min: g * (self >= min),
                              lambda F, g, self, min: g * (self < min)),
                         jvp=lambda F, t, self, min: t[0] * (self >= min) + t[1] * (self < min))
CLAMP_MAX_TENSOR = defop("clamp_max_tensor", refusing(np.minimum, {
                             COMPLEX_KIND: kernel_error("minimum_cpu")}),
                         inputs=("self", "max"),
                         node_name="ClampMaxBackward1",
                         vjp=(lambda F, g, self, max: g * (self <= max),
                              lambda F, g, self, max: g * (self > max)),
                         jvp=lambda F, t, self, max: t[0] * (self <= max) + t[1] * (self > max))


def _mvlgamma_forward(a, p):
    out = np.full(a.shape, p * (p - 1) / 4 * math.log(math.pi), a.dtype)
    out = on_device_of(out, a)
    for j in range(p):
        out += _special.in_float64("lgamma", a - a.dtype.type(j / 2))
    return out


def _logit_forward(a, eps):
    if eps is not None:
        a = np.clip(a, eps, 1 - eps)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.log(a / (1 - a))


def _sinc_forward(a):
    # half precision is computed in float32, as the reference does: pi * x rounded to
    # float16 would leave sinc(1) far from 0
    wide = a.astype(np.float32) if a.dtype.kind in "fV" and a.dtype.itemsize == 2 else a
    with np.errstate(invalid="ignore"):
        return np.sinc(wide).astype(a.dtype, copy=False)


@helper
def mvdigamma(F, self, p):
    """d mvlgamma(x, p) / dx: the sum of digamma(x - j/2), j < p."""
    total = F.digamma(self)
    for j in range(1, p):
        total = total + F.digamma(self - j / 2)
    return total


@helper
def logit_prime(F, self, eps):
    """1 / (x (1 - x)), and 0 where ``eps`` clamped x (outside [eps, 1 - eps])."""
    prime = 1 / (self * (1 - self))
    if eps is None:
        return prime
    return F.where((self < eps) + (self > 1 - eps), prime * 0, prime)


@helper
def sinc_prime(F, self, result):
    """(cos(pi x) - sinc(x)) / x, and 0 at x = 0."""
    zero = self == 0
    return F.where(zero, self * 0, (F.cos(self * math.pi) - result) / F.where(zero, 1, self))


# --- binary ops ------------------------------------------------------------------------
def _binary(name, forward, vjp, jvp, node_name=None):
    return defop(name, forward, inputs=("self", "other"), vjp=vjp, jvp=jvp, node_name=node_name)


ATAN2 = _binary("atan2", refusing(np.arctan2, {COMPLEX_KIND: kernel_error("atan2_cpu")}),
                (lambda F, g, self, other: g * other / (self * self + other * other),
                 lambda F, g, self, other: -g * self / (self * self + other * other)),
                lambda F, t, self, other: (t[0] * other - t[1] * self) / (self * self + other * other))
HYPOT = _binary("hypot", refusing(np.hypot, {COMPLEX_KIND: kernel_error("hypot_cpu")}),
                (lambda F, g, self, result: g * self / result,
                 lambda F, g, other, result: g * other / result),
                lambda F, t, self, other, result: (t[0] * self + t[1] * other) / result)
COPYSIGN = _binary("copysign", refusing(np.copysign, {
                       COMPLEX_KIND: kernel_error("copysign_cpu")}),
                   (lambda F, g, self, result: g * F.copysign_ratio(self, result),
                    lambda F, g: g * 0),
                   lambda F, t, self, result: t[0] * F.copysign_ratio(self, result))
FMOD = _binary("fmod", refusing(lambda a, b: _fmod_forward(a, b),
                                {BOOL_KIND + COMPLEX_KIND: kernel_error("fmod_cpu")}),
               (lambda F, g: g, lambda F, g, self, other: -g * F.trunc(self / other)),
               lambda F, t, self, other: t[0] - t[1] * F.trunc(self / other),
               node_name="FmodBackward1")
LOGADDEXP = _binary("logaddexp", lambda a, b: _logaddexp_forward(a, b),
                    (lambda F, g, self, other: g * F.conj(F.sigmoid(self - other)),
                     lambda F, g, self, other: g * F.conj(F.sigmoid(other - self))),
                    lambda F, t, self, other: t[0] * F.sigmoid(self - other)
                    + t[1] * F.sigmoid(other - self))
LOGADDEXP2 = _binary("logaddexp2",
                     refusing(np.logaddexp2, {COMPLEX_KIND: kernel_error("logaddexp2_cpu")}),
                     (lambda F, g, self, other: g * F.sigmoid((self - other) * _LN2),
                      lambda F, g, self, other: g * F.sigmoid((other - self) * _LN2)),
                     lambda F, t, self, other: t[0] * F.sigmoid((self - other) * _LN2)
                     + t[1] * F.sigmoid((other - self) * _LN2))
XLOGY = _binary("xlogy", refusing(lambda a, b: _xlogy_forward(a, b),
                                  {COMPLEX_KIND: kernel_error("xlogy_cpu")}),
                (lambda F, g, self, other: g * F.xlogy_prime(self, other),
                 lambda F, g, self, other: g * self / other),
                lambda F, t, self, other: t[0] * F.xlogy_prime(self, other) + t[1] * self / other)
# fmax/fmin: NaN loses; a tie sends the whole gradient to self (the reference's rule)
FMAX = _binary("fmax", refusing(np.fmax, {COMPLEX_KIND: _complex_refused("fmax")}),
               (lambda F, g, self, other: g * ((self >= other) + (other != other)),
                lambda F, g, self, other: g * (((self < other) + (self != self)) * (other == other))),
               lambda F, t, self, other: F.where((self >= other) + (other != other), t[0], t[1]))
FMIN = _binary("fmin", refusing(np.fmin, {COMPLEX_KIND: _complex_refused("fmin")}),
               (lambda F, g, self, other: g * ((self <= other) + (other != other)),
                lambda F, g, self, other: g * (((self > other) + (self != self)) * (other == other))),
               lambda F, t, self, other: F.where((self <= other) + (other != other), t[0], t[1]))
LERP = defop("lerp", lambda a, b, weight: _lerp_forward(a, b, weight), inputs=("self", "end"),
             attrs=("weight",), node_name="LerpBackward0",
             vjp=(lambda F, g, weight: g * F.conj_scalar(1 - weight),
                  lambda F, g, weight: g * F.conj_scalar(weight)),
             jvp=lambda F, t, weight: t[0] * (1 - weight) + t[1] * weight)
LERP_TENSOR = defop("lerp_tensor", lambda a, b, w: _lerp_forward(a, b, w),
                    inputs=("self", "end", "weight"), node_name="LerpBackward1",
                    vjp=(lambda F, g, weight: g * F.conj(1 - weight),
                         lambda F, g, weight: g * F.conj(weight),
                         lambda F, g, self, end: g * F.conj(end - self)),
                    jvp=lambda F, t, self, end, weight: t[0] * (1 - weight) + t[1] * weight
                    + t[2] * (end - self))


def _fmod_forward(a, b):
    if a.dtype.kind in "iu" and np.any(b == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.fmod(a, b)


def _logaddexp_forward(a, b):
    """log(exp(a) + exp(b)); for complex numbers from the operand of larger real part, as
    the reference computes it (NumPy's ufunc has no complex loop)."""
    if a.dtype.kind != "c":
        return np.logaddexp(a, b)
    a, b = np.broadcast_arrays(a, b)
    big = np.where(a.real >= b.real, a, b)
    small = np.where(a.real >= b.real, b, a)
    with np.errstate(over="ignore", invalid="ignore"):
        return big + np.log1p(np.exp(small - big))


def _xlogy_forward(a, b):
    with np.errstate(invalid="ignore", divide="ignore"):
        out = a * np.log(b)
    return np.where((a == 0) & ~np.isnan(b), np.zeros((), out.dtype), out)


def _lerp_forward(a, b, w):
    """a + w (b - a) for |w| < 1/2, else b - (b - a)(1 - w): exact at both ends."""
    diff = b - a
    out = np.where(np.abs(w) < 0.5, a + w * diff, b - diff * (1 - w))
    return out.astype(a.dtype, copy=False)          # bfloat16 with a number weight stays


@helper
def copysign_ratio(F, self, result):
    """d copysign(x, y) / dx: result / x (+-1), and 0 at x = 0."""
    zero = self == 0
    return F.where(zero, self * 0, result / F.where(zero, 1, self))


@helper
def xlogy_prime(F, self, other):
    """d (x log y) / dx: log(y), and 0 where x = 0 (unless y is NaN)."""
    return F.where((self == 0) * (other == other), other * 0, F.log(other))


# --- public functions of the ops above ----------------------------------------------------
def _floating_unary(name, op, doc):
    """``name(input)``: the op on ``input`` (integer and bool inputs become the default
    floating dtype)."""
    def fn(input):
        return apply_op(op, (float_input(input),), EMPTY)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {doc}.\n\n    >>> import chainrule as cr\n"
                  f"    >>> cr.{name}(cr.tensor([0.5])).shape\n    chainrule.Size([1])\n")
    return public(fn, name=name)


for _name, _op, _doc in [
        ("asin", ASIN, "arcsine"), ("acos", ACOS, "arccosine"), ("atan", ATAN, "arctangent"),
        ("sinh", SINH, "hyperbolic sine"), ("cosh", COSH, "hyperbolic cosine"),
        ("asinh", ASINH, "inverse hyperbolic sine"), ("acosh", ACOSH, "inverse hyperbolic cosine"),
        ("atanh", ATANH, "inverse hyperbolic tangent"), ("log2", LOG2, "base-2 logarithm"),
        ("log10", LOG10, "base-10 logarithm"), ("exp2", EXP2, "2**x"),
        ("reciprocal", RECIPROCAL, "1 / x"), ("erfc", ERFC, "complementary error function"),
        ("erfinv", ERFINV, "inverse error function"),
        ("lgamma", LGAMMA, "log of the absolute value of the gamma function"),
        ("digamma", DIGAMMA, "digamma function (the derivative of lgamma)"),
        ("sinc", SINC, "normalized sinc, sin(pi x) / (pi x) (1 at 0)"),
        ("rad2deg", RAD2DEG, "radians to degrees"), ("deg2rad", DEG2RAD, "degrees to radians")]:
    _floating_unary(_name, _op, _doc)


@public
def frac(input):
    """Elementwise fractional part, ``x - trunc(x)``, of a floating tensor.

    >>> import chainrule as cr
    >>> cr.frac(cr.tensor([1.5, -2.25])).tolist()
    [0.5, -0.25]
    """
    return apply_op(FRAC, (input,), EMPTY)


for _alias, _name in [("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
                      ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"),
                      ("fix", "trunc")]:
    public(FUNCTIONS[_name], name=_alias)


@public
def round(input, *, decimals=0):
    """Round half to even, to ``decimals`` decimal places (negative: to tens, hundreds,
    ...). The gradient is zero.

    >>> import chainrule as cr
    >>> cr.round(cr.tensor([2.5, 1.2345], dtype=cr.float64), decimals=2).tolist()
    [2.5, 1.23]
    """
    if decimals == 0:
        return apply_op(ROUND, (input,), EMPTY)
    return apply_op(ROUND_DECIMALS, (input,), {"decimals": int(decimals)})


@public(method=False)
def polygamma(n, input):
    """The ``n``-th derivative of digamma (``n = 0``: digamma itself); also the method
    ``x.polygamma(n)``.

    >>> import chainrule as cr
    >>> round(cr.polygamma(1, cr.tensor([1.], dtype=cr.float64)).item(), 6)  # pi**2 / 6
    1.644934
    """
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    input = float_input(input)
    if n == 0:
        return apply_op(DIGAMMA, (input,), EMPTY)
    return apply_op(POLYGAMMA, (input,), {"n": int(n)})


@method("polygamma")
def polygamma_method(self, n):
    """``x.polygamma(n)`` is ``polygamma(n, x)``.

    >>> import chainrule as cr
    >>> cr.tensor([1.]).polygamma(0).item() == cr.digamma(cr.tensor([1.])).item()
    True
    """
    return polygamma(n, self)


@public
def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension ``p`` (defined for elements
    greater than ``(p - 1) / 2``; at or below, the reference's formula gives inf or
    lgamma's values, which this returns too).

    >>> import chainrule as cr
    >>> round(cr.mvlgamma(cr.tensor([2.5]), 1).item(), 4)  # lgamma for p = 1
    0.2847
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    kind = input._data.dtype.kind
    if kind == BOOL_KIND:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if kind == COMPLEX_KIND:
        raise kernel_error("arange_cpu")(input._data.dtype)
    return apply_op(MVLGAMMA, (float_input(input),), {"p": int(p)})


@public
def logit(input, eps=None):
    """``log(x / (1 - x))``; with ``eps``, x is first clamped to ``[eps, 1 - eps]`` (and the
    gradient is 0 where it was clamped).

    >>> import chainrule as cr
    >>> cr.logit(cr.tensor([0.5, 0.0]), eps=0.25).tolist()[0]
    0.0
    """
    return apply_op(LOGIT, (float_input(input),), {"eps": None if eps is None else float(eps)})


@public
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the
    dtype's largest and lowest finite values). No gradient flows to the replaced ones.

    >>> import chainrule as cr
    >>> cr.nan_to_num(cr.tensor([float("nan"), 1.0, float("inf")]), posinf=9.0).tolist()
    [0.0, 1.0, 9.0]
    """
    return apply_op(NAN_TO_NUM, (input,), {"nan": nan, "posinf": posinf, "neginf": neginf})


def _min_max_tensor(input, bound, scalar_op, tensor_op, key):
    if isinstance(bound, Tensor):
        a, b = promote(input, bound)
        return apply_op(tensor_op, (a, b), EMPTY)
    a = _meeting_scalar(input, bound)
    return apply_op(scalar_op, (a,), {key: bound})


@public
def clamp_min(input, min):
    """``max(input, min)`` with clamp's gradient rule (``min`` a number or a tensor).

    >>> import chainrule as cr
    >>> cr.clamp_min(cr.tensor([-1., 2.]), 0).tolist()
    [0.0, 2.0]
    """
    return _min_max_tensor(input, min, CLAMP_MIN, CLAMP_MIN_TENSOR, "min")


@public
def clamp_max(input, max):
    """``min(input, max)`` with clamp's gradient rule (``max`` a number or a tensor).

    >>> import chainrule as cr
    >>> cr.clamp_max(cr.tensor([-1., 2.]), cr.tensor(1.)).tolist()
    [-1.0, 1.0]
    """
    return _min_max_tensor(input, max, CLAMP_MAX, CLAMP_MAX_TENSOR, "max")


# Binary kernels without integer loops: the reference refuses integers rather than
# computing in floating point (Note [kernels without a dtype]).
_NO_INTEGER_KERNEL = {"hypot": "hypot_cpu", "logaddexp": "logaddexp_cpu",
                      "logaddexp2": "logaddexp2_cpu"}


# the binary ops that take a Python number too (Note [tensor-only arguments])
_SCALAR_OVERLOAD = frozenset(("copysign", "fmod", "xlogy"))


def _public_binary(name, op, doc, example):
    """``name(input, other)``: tensors or numbers, promoted (integers to the default
    floating dtype, except for the ops that keep integers: fmod, fmax, fmin)."""
    keeps_integers = name in ("fmod", "fmax", "fmin")
    integer_kernel = _NO_INTEGER_KERNEL.get(name)
    tensors_only = name not in _SCALAR_OVERLOAD

    def fn(input, other):
        if tensors_only:
            require_tensors(name, _INPUT_OTHER, input, other)
        try:
            if keeps_integers:
                return apply_binary(op, as_tensor_arg(input), other)
            if integer_kernel:
                a, b = promote(input, other)
                if a._data.dtype.kind in BOOL_KIND + INTEGER_KINDS:
                    raise kernel_error(integer_kernel)(a._data.dtype)
            return apply_op(op, _true_div_operands(input, other), EMPTY)
        except NotImplementedError as error:       # Note [ComplexHalf stands in as complex64]
            raise complex_half_error(error, (input, other)) from None
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {doc}.\n\n    >>> import chainrule as cr\n"
                  f"    >>> cr.{name}(cr.tensor([{example[0]}]), cr.tensor([{example[1]}])).tolist()"
                  f"\n    [{example[2]}]\n")
    return public(fn, name=name)


for _name, _op, _doc, _example in [
        ("atan2", ATAN2, "arctangent of input / other in the right quadrant", ("0.", "1.", "0.0")),
        ("hypot", HYPOT, "sqrt(input**2 + other**2)", ("3.", "4.", "5.0")),
        ("copysign", COPYSIGN, "magnitude of input with the sign of other", ("2.", "-1.", "-2.0")),
        ("fmod", FMOD, "C-style remainder (the sign of input)", ("-3.", "2.", "-1.0")),
        ("logaddexp", LOGADDEXP, "log(exp(input) + exp(other))", ("0.", "-inf", "0.0")),
        ("logaddexp2", LOGADDEXP2, "log2(2**input + 2**other)", ("1.", "1.", "2.0")),
        ("xlogy", XLOGY, "input * log(other), 0 where input is 0", ("0.", "0.", "0.0")),
        ("fmax", FMAX, "maximum that ignores NaN", ("float('nan')", "1.", "1.0")),
        ("fmin", FMIN, "minimum that ignores NaN", ("float('nan')", "1.", "1.0"))]:
    _public_binary(_name, _op, _doc, _example)

# its own function, not atan2's: the reference's messages name the one called
_public_binary("arctan2", ATAN2, "alias of atan2", ("0.", "1.", "0.0"))


@public
def lerp(input, end, weight):
    """``input + weight * (end - input)``; ``weight`` a number or a tensor.

    >>> import chainrule as cr
    >>> cr.lerp(cr.tensor([0., 10.]), cr.tensor([10., 20.]), 0.25).tolist()
    [2.5, 12.5]
    """
    end = as_tensor_arg(end, "end")
    if end._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected dtype {_dtypes.cpp_type_name(input._data.dtype)} for "
                           f"`end` but got dtype {_dtypes.cpp_type_name(end._data.dtype)}")
    if input._data.dtype.kind in BOOL_KIND + INTEGER_KINDS:     # floating kernels only
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise kernel_error(kernel)(input._data.dtype)
    if isinstance(weight, Tensor):
        a, b, w = promote(input, end, weight)
        return apply_op(LERP_TENSOR, (a, b, w), EMPTY)
    a, b = promote(input, end)
    return apply_op(LERP, (a, b), {"weight": weight})


@public
def square(input):
    """``input * input`` (``input ** 2``, recorded as PowBackward0).

    >>> import chainrule as cr
    >>> cr.square(cr.tensor([-3., 2.])).tolist()
    [9.0, 4.0]
    """
    return apply_op(POW_SCALAR, (_meeting_scalar(input, 2),), {"exponent": 2})   # bool: int64


@public
def float_power(input, exponent):
    """``input ** exponent`` computed in double precision (float64, or complex128 when
    either operand is complex).

    >>> import chainrule as cr
    >>> cr.float_power(cr.tensor([2], dtype=cr.int32), 2).dtype
    chainrule.float64
    """
    complex_ = any(isinstance(v, complex) or (isinstance(v, Tensor) and v.is_complex())
                   for v in (input, exponent))
    target = _dtypes.complex128 if complex_ else _dtypes.float64
    input = to_dtype(as_tensor_arg(input), target)
    if isinstance(exponent, Tensor):
        exponent = to_dtype(exponent, target)
    return pow(input, exponent)


@public
def positive(input):
    """The input itself (unary ``+``).

    >>> import chainrule as cr
    >>> x = cr.ones(2); cr.positive(x) is x
    True
    """
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# --- more of the reference's elementwise names ------------------------------------------
# heaviside has no derivative in the reference either (its backward raises)
HEAVISIDE = _binary("heaviside", lambda a, b: np.heaviside(a, b).astype(a.dtype, copy=False),
                    (NOT_IMPLEMENTED, NOT_IMPLEMENTED),
                    NOT_IMPLEMENTED)


@public
def heaviside(input, values):
    """The Heaviside step: 0 below 0, 1 above, ``values`` at 0 (same dtypes required).

    >>> import chainrule as cr
    >>> cr.heaviside(cr.tensor([-1., 0., 2.]), cr.tensor([0.5])).tolist()
    [0.0, 0.5, 1.0]
    """
    require_tensors("heaviside", ("input", "values"), input, values)
    if "c" in (input._data.dtype.kind, values._data.dtype.kind):
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return apply_binary(HEAVISIDE, input, values)


@public
def ldexp(input, other):
    """``input * 2 ** other``.

    >>> import chainrule as cr
    >>> cr.ldexp(cr.tensor([1., 3.]), cr.tensor([2, -1])).tolist()
    [4.0, 1.5]
    """
    require_tensors("ldexp", _INPUT_OTHER, input, other)
    if other._data.dtype.kind == BOOL_KIND and input._data.dtype.kind in "fV":
        # the reference's floating ldexp kernel takes integer exponents, but not bool
        raise kernel_error("ldexp_cpu_exp")(other._data.dtype)
    mantissa, exponent = _true_div_operands(input, other)                 # one dtype
    return mantissa * pow_scalar_base(2.0, exponent)


def _integer_binary(name, ufunc, example):
    def fn(input, other):
        require_tensors(name, _INPUT_OTHER, input, other)
        a, b = promote(input, other)
        if a._data.dtype.kind not in INTEGER_KINDS:
            raise kernel_error(f"{name}_cpu")(a._data.dtype)
        return Tensor._wrap(ufunc(a._data, b._data))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise ``{name}`` of integer tensors.\n\n    >>> import chainrule as cr\n"
                  f"    >>> cr.{name}(cr.tensor([4, 6]), cr.tensor([6, 9])).tolist()\n"
                  f"    {example}\n")
    return public(fn, name=name)


_integer_binary("gcd", np.gcd, "[2, 3]")
_integer_binary("lcm", np.lcm, "[12, 18]")


@public
def bitwise_not(input):
    """Bitwise not of an integer or bool tensor (logical not for bool).

    >>> import chainrule as cr
    >>> cr.bitwise_not(cr.tensor([0, 5])).tolist()
    [-1, -6]
    """
    if input._data.dtype.kind not in "biu":
        raise kernel_error("bitwise_not_cpu")(input._data.dtype)
    return Tensor._wrap(np.invert(input._data))


@public
def nextafter(input, other):
    """The next floating value after ``input`` towards ``other`` (not differentiable).

    >>> import chainrule as cr
    >>> cr.nextafter(cr.tensor([1.], dtype=cr.float64), cr.tensor([2.], dtype=cr.float64)).item()
    1.0000000000000002
    """
    require_tensors("nextafter", _INPUT_OTHER, input, other)
    a, b = promote(input, other)
    if a._data.dtype.kind in BOOL_KIND + INTEGER_KINDS + COMPLEX_KIND:
        raise kernel_error("nextafter_cpu")(a._data.dtype)
    return Tensor._wrap(np.nextafter(a._data, b._data))


@public
def frexp(input):
    """Mantissa in [0.5, 1) and int32 exponent with ``input = mantissa * 2 ** exponent``:
    a named tuple ``(mantissa, exponent)``.

    >>> import chainrule as cr
    >>> m, e = cr.frexp(cr.tensor([8., 0.3])); m.tolist(), e.tolist()
    ([0.5, 0.6000000238418579], [4, -1])
    """
    from .. import return_types
    if input._data.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(input._data)
    return return_types.frexp(Tensor._wrap(mantissa.astype(input._data.dtype, copy=False)),
                              Tensor._wrap(exponent.astype(np.int32)))


# add(Tensor, Scalar): the reference's internal ``self + scalar`` records AddBackward1 (a
# node with the tensor's edge only); pairwise_distance's ``x1 - x2 + eps`` is one.
ADD_SCALAR = defop("add_scalar", lambda a, other: a + other, attrs=("other",),
                   node_name="AddBackward1", vjp=(lambda F, g: g,), jvp=lambda F, t: t[0])
