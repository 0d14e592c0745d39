"""Python operators on Tensor (``+ - * / // % ** @``, unary ``-``, comparisons)
and the in-place forms of the elementwise ops."""
import numpy as np

from .. import _dtypes, _legacy_slots, _torch_function
from .._grad_mode import STATE as _MODE
from .._batched import BatchedTensor, raw_batched
from .._tensor import Tensor
from ..autograd import saved_hooks as _saved_hooks
from ..autograd.node import CPP_NAMESPACE
from ._method_slot import accelerable
from . import _registry
from ._registry import apply_op, defop
from .elementwise import ADD, DIV, MUL, POW_SCALAR, RSUB, SUB, apply_sub, check_complex_bounds, \
    pow_scalar_base
from ._common import FUNCTIONS, apply_binary, as_tensor_arg, binary_operands, broadcast_error, \
    cast_error_first, commit_inplace, method, not_implemented_for, promote, public, \
    require_tensors, wrapped_number

F = FUNCTIONS


# Note [operators and foreign operands]: as in the reference, an operator whose op
# refuses the other operand with a TypeError (a list, a str, None, `t @ 3`) returns
# NotImplemented: Python then tries the other operand's reflected method and raises
# its own "unsupported operand type(s) for +: 'Tensor' and 'list'" (`[1] * t` asks
# `t.__index__`; `t == None` falls back to identity and is False). The try costs
# nothing until something is raised (zero-cost exceptions), so the fast path is as
# before. Dtype problems are RuntimeError/NotImplementedError, never TypeError.
def _operator(fn_name, reflected=False, left=None):
    """``self op other`` as ``F[fn_name](self, other)`` (``F[fn_name](left(other, self),
    self)`` when ``reflected``), NotImplemented on a TypeError (Note [operators and
    foreign operands]); the function is looked up per call, as the method slot may
    replace it."""
    if reflected:
        def operator(self, other):
            try:
                return F[fn_name](left(other, self) if left else other, self)
            except TypeError:
                return _not_implemented(other)
    else:
        def operator(self, other):
            try:
                return F[fn_name](self, other)
            except TypeError:
                return _array_operand(F[fn_name], self, other)
    return operator


def _array_operand(call, self, other):
    """``tensor op ndarray``: the reference computes with the array as a tensor of its
    own dtype (promoted, ``@`` included); ``ndarray op tensor`` stays a TypeError for
    the non-commutative ops (NumPy defers to the tensor, which refuses)."""
    if type(other) is np.ndarray:
        return call(*promote(self, Tensor._wrap(other)))
    return _not_implemented(other)


def _not_implemented(other):
    """NotImplemented for a foreign operand; a tensor-like one raises instead, so that
    the operator's dispatching wrapper gives the call to its ``__torch_function__``
    (Note [torch function slot])."""
    if _torch_function.tensor_like_type(type(other)):
        raise TypeError(f"a tensor-like operand: {type(other).__name__}")
    return NotImplemented


def _binary_operator(op, attrs):
    """``Tensor.__mul__`` and friends: straight to the op (no public-function hop)."""
    def operator(self, other):
        return apply_binary(op, self, other, attrs)
    return operator


def _foreign_operands(op, attrs, apply=apply_binary):
    """``_binary_operator(op, attrs)`` with Note [operators and foreign operands]. Its
    one line is inlined in the ``try`` (no extra frame on the fast path); the C++ engine
    mirrors ``_binary_operator`` and runs the fast cases without Python. ``apply`` is
    apply_sub for the subtractions (Note [bool subtraction])."""
    plain = _binary_operator(op, attrs) if apply is apply_binary else \
        (lambda self, other: apply(op, self, other, attrs))

    def operator(self, other):
        try:
            return apply(op, self, other, attrs)
        except TypeError:
            return _array_operand(plain, self, other)
    return operator


def _neg(self):
    """``-self`` (a bool tensor: the reference's error, from NEG's forward)."""
    return F["neg"](self)


def _invert(self):
    if self._data.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return raw(np.invert, self)


def _install_operator(names, op, attrs, apply=apply_binary):
    fn = _foreign_operands(op, attrs, apply)
    for name in names:
        setattr(Tensor, name, fn)
        accelerable(name, "binary", op, attrs, fn)          # Note [method slot]


def _rpow(self, other):
    """``other ** self``: a Python number base goes to pow_scalar_base (PowBackward2)."""
    try:
        if isinstance(other, (int, float, complex)) and not isinstance(other, bool):
            return pow_scalar_base(other, self)
        return F["pow"](other, self)
    except TypeError:                      # Note [operators and foreign operands]
        return _not_implemented(other)


def _rtruediv(self, other):
    """``other / self`` as the reference computes it, ``self.reciprocal() * other``
    (MulBackward0 over ReciprocalBackward0; an integer tensor's reciprocal is float)."""
    try:
        return F["reciprocal"](self) * other
    except TypeError:                      # Note [operators and foreign operands]
        return _not_implemented(other)


def _scalar_like(value, like):
    """A Python number on the left of an operator, as a weak (0-d) operand."""
    if isinstance(value, Tensor):
        return value
    return promote(value, like)[0]


_install_operator(("__add__", "__radd__"), ADD, {"alpha": 1})
_install_operator(("__sub__",), SUB, {"alpha": 1}, apply_sub)
_install_operator(("__rsub__",), RSUB, {"alpha": 1}, apply_sub)
_install_operator(("__mul__", "__rmul__"), MUL, {})
for _name, _fn in (("truediv", "div"), ("floordiv", "floor_divide"), ("mod", "remainder"),
                   ("pow", "pow"), ("matmul", "matmul")):
    setattr(Tensor, f"__{_name}__", _operator(_fn))
    setattr(Tensor, f"__r{_name}__", _operator(_fn, True, None if _fn == "matmul" else
                                               _scalar_like))
Tensor.__rpow__ = _rpow
Tensor.__rtruediv__ = Tensor.__rdiv__ = _rtruediv
accelerable("__pow__", "scalar", POW_SCALAR, {"exponent": None}, Tensor.__pow__)  # ** number
# Note [method slot]: the accelerated cases (float or complex operands of one dtype)
# are those where div's _true_div_operands changes nothing
accelerable("__truediv__", "binary", DIV, {}, Tensor.__truediv__)
Tensor.__neg__ = _neg
Tensor.__pos__ = lambda self: F["positive"](self)
Tensor.__abs__ = lambda self: F["abs"](self)


def raw(fn, *tensors):
    """``fn`` on the tensors' arrays as a tensor (no gradient: comparisons, tests);
    batched tensors go through ``raw_batched`` (Note [batched tensors])."""
    for t in tensors:
        if type(t) is BatchedTensor:
            return raw_batched(fn, tensors)
    return Tensor._wrap(fn(*[t._data for t in tensors]))

# --- comparisons and logical ops (not differentiable) -----------------------------
def _compare(ufunc, name, example="cr.tensor([1., 2.]), 1.5", kernel=None, ordered=False,
             tensors_only=False):
    """The public function ``name``; ``kernel`` names the reference's kernel in its
    NotImplementedError for dtypes the ufunc refuses (bitwise ops on floats);
    ``ordered`` comparisons refuse complex operands, as the reference does;
    ``tensors_only`` ones refuse Python numbers (Note [tensor-only arguments])."""
    def compare(input, other):
        if tensors_only:
            require_tensors(name, ("input", "other"), input, other)
        a, b = binary_operands(wrapped_number(input, other), other)
        if ordered and a._data.dtype.kind == "c":
            raise not_implemented_for(name, a._data.dtype, (input, other))
        try:
            return raw(ufunc, a, b)
        except ValueError:
            raise broadcast_error(a._data.shape, b._data.shape) from None
        except TypeError:
            if kernel is None:
                raise
            raise not_implemented_for(kernel, np.result_type(a._data, b._data),
                                      (input, other)) from None
    compare.__name__ = name
    compare.__doc__ = (f"Elementwise ``{name}`` comparison (a bool tensor).\n\n"
                       f"    >>> import chainrule as cr\n"
                       f"    >>> cr.{name}({example}).dtype\n    chainrule.bool\n")
    return public(compare, name=name)


_BOOL_EXAMPLE = "cr.tensor([True]), cr.tensor([False])"
eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
lt = _compare(np.less, "lt", ordered=True)
le = _compare(np.less_equal, "le", ordered=True)
gt = _compare(np.greater, "gt", ordered=True)
ge = _compare(np.greater_equal, "ge", ordered=True)
logical_and = _compare(np.logical_and, "logical_and", _BOOL_EXAMPLE, tensors_only=True)
logical_or = _compare(np.logical_or, "logical_or", _BOOL_EXAMPLE, tensors_only=True)
logical_xor = _compare(np.logical_xor, "logical_xor", _BOOL_EXAMPLE, tensors_only=True)
bitwise_and = _compare(np.bitwise_and, "bitwise_and", _BOOL_EXAMPLE, "bitwise_and")
bitwise_or = _compare(np.bitwise_or, "bitwise_or", _BOOL_EXAMPLE, "bitwise_or")
bitwise_xor = _compare(np.bitwise_xor, "bitwise_xor", _BOOL_EXAMPLE, "bitwise_xor")
for _names, _fn in ((("__eq__",), "eq"), (("__ne__",), "ne"), (("__lt__",), "lt"),
                    (("__le__",), "le"), (("__gt__",), "gt"), (("__ge__",), "ge"),
                    (("__and__", "__rand__"), "bitwise_and"),
                    (("__or__", "__ror__"), "bitwise_or"),
                    (("__xor__", "__rxor__"), "bitwise_xor")):
    for _name in _names:                     # Note [operators and foreign operands]
        setattr(Tensor, _name, _operator(_fn))
Tensor.__hash__ = object.__hash__


@public
def logical_not(input):
    """Elementwise logical not (a bool tensor).

    >>> import chainrule as cr
    >>> cr.logical_not(cr.tensor([True, False])).tolist()
    [False, True]
    """
    return raw(np.logical_not, input)


Tensor.__invert__ = _invert


@public
def isnan(input):
    """Elementwise NaN test.

    >>> import chainrule as cr
    >>> cr.isnan(cr.tensor([float("nan"), 1.])).tolist()
    [True, False]
    """
    return raw(np.isnan, input)


@public
def isfinite(input):
    """Elementwise finiteness test.

    >>> import chainrule as cr
    >>> cr.isfinite(cr.tensor([float("inf"), 1.])).tolist()
    [False, True]
    """
    return raw(np.isfinite, input)


@public
def isinf(input):
    """Elementwise infinity test.

    >>> import chainrule as cr
    >>> cr.isinf(cr.tensor([float("inf"), 1.])).tolist()
    [True, False]
    """
    return raw(np.isinf, input)


def _real_only(input, name):
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"{name} does not support complex inputs.")
    return input._data


@public
def isposinf(input):
    """Elementwise test for +inf.

    >>> import chainrule as cr
    >>> cr.isposinf(cr.tensor([float("inf"), -float("inf")])).tolist()
    [True, False]
    """
    return Tensor._wrap(np.isposinf(_real_only(input, "isposinf")))


@public
def isneginf(input):
    """Elementwise test for -inf.

    >>> import chainrule as cr
    >>> cr.isneginf(cr.tensor([float("inf"), -float("inf")])).tolist()
    [False, True]
    """
    return Tensor._wrap(np.isneginf(_real_only(input, "isneginf")))


@public
def signbit(input):
    """Elementwise test of the sign bit (True for -0.0 too).

    >>> import chainrule as cr
    >>> cr.signbit(cr.tensor([-0.0, 0.0, -1.0])).tolist()
    [True, False, True]
    """
    if input._data.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    return raw(np.signbit, input)


@public
def isreal(input):
    """Elementwise test that the imaginary part is 0 (all True for real tensors).

    >>> import chainrule as cr
    >>> cr.isreal(cr.tensor([1 + 0j, 1j])).tolist()
    [True, False]
    """
    if input._data.dtype.kind != "c":
        return Tensor._wrap(np.ones(input._data.shape, bool))
    return Tensor._wrap(input._data.imag == 0)


@public
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (infinities equal to
    themselves; NaNs equal only with ``equal_nan``). The dtypes must match.

    >>> import chainrule as cr
    >>> cr.isclose(cr.tensor([1.0, 2.0]), cr.tensor([1.0 + 1e-9, 2.1])).tolist()
    [True, False]
    """
    require_tensors("isclose", ("input", "other"), input, other)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_dtypes.scalar_type_name(input._data.dtype)} did not match "
                           f"{_dtypes.scalar_type_name(other._data.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    with np.errstate(invalid="ignore"):
        return Tensor._wrap(np.isclose(input._data, other._data, rtol, atol, equal_nan))


@public
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when all elements are close (``|a - b| <= atol + rtol * |b|``).

    >>> import chainrule as cr
    >>> cr.allclose(cr.tensor([1.0]), cr.tensor([1.0 + 1e-9]))
    True
    """
    require_tensors("allclose", ("input", "other"), input, other)
    return bool(np.allclose(input._data, other._data, rtol, atol, equal_nan))


@public
def equal(input, other):
    """True when both tensors have the same shape and elements.

    >>> import chainrule as cr
    >>> cr.equal(cr.ones(2), cr.ones(2))
    True
    """
    require_tensors("equal", ("input", "other"), input, other)
    return input._data.shape == other._data.shape and bool(np.all(input._data == other._data))


# --- in-place forms -------------------------------------------------------------------
# Note [in-place fast path]: when nothing is recorded (grad mode off, or no operand
# requires grad) and no saved-tensor machinery is active, add_/sub_/mul_/div_ write
# straight into the tensor's array with a NumPy ufunc (no temporary result). Anything
# unusual (inference tensors, locked or read-only arrays, dtype or shape problems)
# takes the general path, which gives the reference's errors.
_FAST_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}


def _try_fast_inplace(self, ufunc, other, alpha):
    if _registry._dispatch is not None:          # Note [dispatch slot]
        return False
    if _MODE.grad_enabled and (self._requires_grad or getattr(other, "_requires_grad", False)):
        return False
    arr = self._data
    if (self._extra is not None and self._extra.inference) or _saved_hooks.ACTIVE[0] or \
            not arr.flags.writeable:
        return False
    value = other._data if type(other) is Tensor else other
    if not _keeps_kind(arr, value):
        return False
    if ufunc is np.subtract and type(value) is np.ndarray and value.dtype.kind == "b":
        return False                 # the method raises (Note [bool subtraction])
    if alpha != 1:
        value = value * alpha
    try:
        ufunc(arr, value, out=arr, casting="same_kind")
    except (TypeError, ValueError, OverflowError):  # (a Python int beyond the dtype: wrapped
        return False                               # by the method, as the reference does)
    self._bump_version()
    return True


def _keeps_kind(arr, value):
    """Whether ``arr op value`` has ``arr``'s dtype kind (so it can be written back)."""
    if type(value) is np.ndarray and value.dtype == arr.dtype:
        return True                      # the common case, without np.result_type
    if type(value) not in (np.ndarray, float, int):
        return False
    try:
        return np.result_type(arr, value).kind == arr.dtype.kind
    except TypeError:                    # no NumPy common dtype (bfloat16 with int32):
        return False                     # the slow path promotes as the reference does


def _inplace(name, example=None):
    fn = F[name]
    ufunc = _FAST_UFUNCS.get(name)

    def inplace(self, *args, **kwargs):
        if ufunc is not None and len(args) == 1 and set(kwargs) <= {"alpha"} and \
                _try_fast_inplace(self, ufunc, args[0], kwargs.get("alpha", 1)):
            return self
        if name in _SCALAR_BOUNDED:
            _check_scalar_bound_cast(name, self, args, kwargs)
        if name == "abs" and self._data.dtype.kind == "c":
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        try:
            out = fn(self, *args, **kwargs)
        except TypeError:                            # Note [scalar-first slot]
            legacy = _legacy_slots.SCALAR_FIRST and _legacy_slots.SCALAR_FIRST(name, args, 2)
            if not legacy:
                raise
            out = fn(self, legacy[0], alpha=legacy[1])
        except (RuntimeError, NotImplementedError) as error:
            cast_error_first(name, self, args, error)
            raise
        return commit_inplace(self, out, args)
    inplace.__name__ = name + "_"
    if example is None:
        example = ("" if name in _UNARY else "1") + (", 1" if name == "clamp" else "")
    inplace.__doc__ = (f"In-place ``{name}``: writes into this tensor and bumps its version.\n\n"
                       f"    >>> import chainrule as cr\n"
                       f"    >>> x = cr.ones(2); _ = x.{name}_({example}); x._version\n    1\n")
    setattr(Tensor, name + "_", inplace)
    return inplace


_SCALAR_BOUNDED = ("clamp", "clamp_min", "clamp_max", "clip")


def _check_scalar_bound_cast(name, self, args, kwargs):
    """clamp_ with number bounds names the C++ type ("long int") where commit_inplace's
    message names the scalar type ("Long"), as the reference's two kernels do; checked
    before the clamp runs, as the reference checks it before its kernel's dtype, and
    after the bounds are read (a complex one: clamp_min_ and clamp_max_ refuse it)."""
    bounds = [b for b in list(args) + list(kwargs.values()) if b is not None]
    if any(not isinstance(b, (bool, int, float, complex)) for b in bounds):
        return
    if name in ("clamp_min", "clamp_max") and any(b.__class__ is complex for b in bounds):
        raise NotImplementedError("clamp is not supported for complex types")
    check_complex_bounds(self, bounds)
    own = self.dtype
    out = _dtypes.result_type([own] if self._data.ndim else [], [] if self._data.ndim else [own],
                              bounds)
    if _dtypes.can_cast(out, own):
        return
    raise RuntimeError(f"result type {_dtypes.scalar_type_name(out.np)} can't be cast "
                       f"to the desired output type {_dtypes.cpp_type_name(self._data.dtype)}")


_UNARY = {"neg", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
          "sigmoid", "relu", "erf", "abs", "sign", "floor", "ceil", "round", "trunc"}
for _name in sorted(_UNARY | {"add", "sub", "mul", "div", "pow", "clamp", "remainder",
                              "floor_divide"}):
    _inplace(_name)
_UNARY_MORE = ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin",
               "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "log2", "log10", "exp2",
               "square", "reciprocal", "erfc", "erfinv", "lgamma", "digamma", "logit", "sinc",
               "frac", "nan_to_num", "fix", "rad2deg", "deg2rad")
for _name in _UNARY_MORE:
    _inplace(_name, "")
for _name in ("xlogy", "atan2", "arctan2", "hypot", "copysign", "fmod", "clamp_min",
              "clamp_max", "clip", "true_divide"):
    _inplace(_name, "1")
_inplace("lerp", "cr.zeros(2), 0.5")
_inplace("mvlgamma", "1")


@method("polygamma_")
def polygamma_(self, n):
    """In-place ``polygamma(n, self)``.

    >>> import chainrule as cr
    >>> x = cr.ones(2); _ = x.polygamma_(1); x._version
    1
    """
    return commit_inplace(self, F["polygamma"](n, self))


@method("float_power_")
def float_power_(self, exponent):
    """In-place ``float_power``: only for a float64 (complex128) tensor, as the result
    has that dtype.

    >>> import chainrule as cr
    >>> x = cr.ones(2, dtype=cr.float64); _ = x.float_power_(2); x._version
    1
    """
    result = F["float_power"](self, exponent)
    if result._data.dtype != self._data.dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_dtypes.scalar_type_name(self._data.dtype)} but the operation's "
                           f"result requires dtype {_dtypes.scalar_type_name(result._data.dtype)}")
    return commit_inplace(self, result)


def _inplace_operator(name):
    """``x -= y`` and friends: Note [in-place fast path] tried here, one call fewer than
    through the method; otherwise the method itself (the reference's errors)."""
    ufunc = _FAST_UFUNCS[name]

    def operator(self, other):
        if _try_fast_inplace(self, ufunc, other, 1):
            return self
        return getattr(Tensor, name + "_")(self, other)
    return operator


def _not_implemented_on_type_error(fn):
    """``fn`` returning NotImplemented where it raises a TypeError (Note [operators and
    foreign operands])."""
    def operator(self, other):
        try:
            return fn(self, other)
        except TypeError:
            return _not_implemented(other)
    return operator


def _inplace_method_operator(method_name):
    """``x **= y`` and friends: the in-place method (Note [operators and foreign
    operands])."""
    return _not_implemented_on_type_error(lambda self, other:
                                          getattr(Tensor, method_name)(self, other))


# (these four raise the in-place method's TypeError for a foreign operand: the C++
# engine runs _inplace_operator's closure itself, Note [in-place fast methods])
Tensor.__iadd__ = _inplace_operator("add")
Tensor.__isub__ = _inplace_operator("sub")
Tensor.__imul__ = _inplace_operator("mul")
Tensor.__itruediv__ = _inplace_operator("div")
Tensor.__ipow__ = _inplace_method_operator("pow_")
Tensor.__imod__ = _inplace_method_operator("remainder_")
Tensor.__ifloordiv__ = _inplace_method_operator("floor_divide_")


@method("zero_")
def zero_(self):
    """Fill with zeros in place.

    >>> import chainrule as cr
    >>> cr.ones(2).zero_().tolist()
    [0.0, 0.0]
    """
    return commit_inplace(self, apply_op(ZERO, (self,), {}))


# fill with a number or a 0-d tensor, in place (x.fill_) or not (chainrule.fill): four
# nodes in the reference (FillBackward0..3), one forward each way
def _fill_ops(name, number_node, tensor_node):
    number = defop(name, lambda a, value: np.full_like(a, value), attrs=("value",),
                   node_name=number_node, vjp=(lambda F, g: g * 0,), jvp=lambda F, t: t[0] * 0)
    tensor = defop(name + "_tensor", _fill_with_array,
                   inputs=("self", "value"), node_name=tensor_node,
                   vjp=(lambda F, g: g * 0, lambda F, g: F.sum(g)),
                   jvp=lambda F, t: t[0] * 0 + t[1])
    return number, tensor


def _fill_with_array(a, value):
    """``a``'s shape filled with the 0-d ``value`` (one per entry of leading batch dims
    under vmap: its dims align with ``a``'s first)."""
    value = value.reshape(value.shape + (1,) * (a.ndim - value.ndim))
    return np.broadcast_to(value, a.shape).astype(a.dtype)


FILL, FILL_TENSOR = _fill_ops("fill", "FillBackward2", "FillBackward3")
FILL_OUT, FILL_TENSOR_OUT = _fill_ops("fill_out", "FillBackward0", "FillBackward1")
ZERO = defop("zero", lambda a: np.zeros_like(a), vjp=(lambda F, g: g * 0,),
             jvp=lambda F, t: t[0] * 0)
COPY = defop("copy", lambda a, src: np.broadcast_to(src, a.shape).astype(a.dtype),
             inputs=("self", "src"),
             vjp=(lambda F, g: g * 0, lambda F, g: g), jvp=lambda F, t: t[1],
             node_name="CopyBackwards")
COPY.node_cls._name_prefix = CPP_NAMESPACE       # Note [node names]


@method("fill_")
def fill_(self, value):
    """Fill with ``value`` in place (no gradient flows to the old values).

    >>> import chainrule as cr
    >>> cr.zeros(2).fill_(3).tolist()
    [3.0, 3.0]
    """
    return commit_inplace(self, filled(self, value, FILL, FILL_TENSOR))


def filled(input, value, number_op, tensor_op):
    """``input``'s shape and dtype holding ``value`` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        return apply_op(tensor_op, (input, value), {})
    value = _dtypes.checked_integer(value, input._data.dtype)  # Note [checked integer conversion]
    return apply_op(number_op, (input,), {"value": value})


@method("copy_")
def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast to this shape, cast to this dtype) into this tensor;
    gradients flow to ``src``.

    >>> import chainrule as cr
    >>> x = cr.zeros(2); _ = x.copy_(cr.tensor([1., 2.])); x.tolist()
    [1.0, 2.0]
    """
    src = as_tensor_arg(src, "src")
    try:
        np.broadcast_shapes(src._data.shape, self._data.shape)
    except ValueError:
        raise broadcast_error(self._data.shape, src._data.shape) from None
    return commit_inplace(self, apply_op(COPY, (self, src), {}))
