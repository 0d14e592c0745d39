"""NumPy ufuncs on DeviceArrays (Note [device array protocols] in _array.py).

Type resolution is NumPy's own (``ufunc.resolve_dtypes``, Python scalars weak as in
NEP 50), cached per ufunc and operand dtypes; operands are cast to the loop dtype
(cr_copy) and broadcast by stride 0, then one kernel computes the result.
"""
import functools
import math

import numpy as np

import chainrule as cr
from chainrule._tensor import mixed_device_error

from . import _kernels as K
from . import _streams
from ._array import DeviceArray, new

try:
    import scipy.special as _sp
except ImportError:          # scipy is optional: its ufuncs then never reach here
    _sp = None

# NumPy ufunc name -> unary kernel name
UNARY = {"negative": "neg", "absolute": "abs", "sign": "sign", "exp": "exp", "exp2": "exp2",
         "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
         "sqrt": "sqrt", "square": "square", "reciprocal": "reciprocal", "sin": "sin",
         "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
         "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh",
         "arccosh": "acosh", "arctanh": "atanh", "floor": "floor", "ceil": "ceil",
         "trunc": "trunc", "rint": "round", "isnan": "isnan", "isinf": "isinf",
         "isfinite": "isfinite", "signbit": "signbit", "logical_not": "logical_not",
         "invert": "bitwise_not", "conjugate": "conj",
         # scipy.special
         "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "gammaln": "lgamma",
         "psi": "digamma"}
BINARY = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
          "floor_divide": "floor_divide", "remainder": "remainder", "fmod": "fmod",
          "power": "pow", "float_power": "pow", "maximum": "maximum", "minimum": "minimum",
          "fmax": "fmax", "fmin": "fmin", "arctan2": "atan2", "hypot": "hypot",
          "copysign": "copysign", "nextafter": "nextafter", "logaddexp": "logaddexp",
          "logaddexp2": "logaddexp2", "equal": "eq", "not_equal": "ne", "less": "lt",
          "less_equal": "le", "greater": "gt", "greater_equal": "ge",
          "logical_and": "logical_and", "logical_or": "logical_or",
          "logical_xor": "logical_xor", "bitwise_and": "bitwise_and",
          "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
          "left_shift": "left_shift", "right_shift": "right_shift", "xlogy": "xlogy"}
# On bool operands NumPy's bitwise ops are the logical ones (the kernels take ints).
BOOL_TWINS = {"bitwise_not": "logical_not", "bitwise_and": "logical_and",
              "bitwise_or": "logical_or", "bitwise_xor": "logical_xor",
              "add": "logical_or", "mul": "logical_and", "maximum": "logical_or",
              "minimum": "logical_and"}
# unary ufuncs that are a scalar multiple
SCALED = {"deg2rad": math.pi / 180, "radians": math.pi / 180, "rad2deg": 180 / math.pi,
          "degrees": 180 / math.pi}


def _device_of(inputs):
    for x in inputs:
        if type(x) is DeviceArray:
            return x._index
    raise TypeError("no device array among the operands")


def operand(x, index):
    """A ufunc operand: a DeviceArray on ``index``'s device, a Python scalar, or a host
    value that may join (0-d); anything else is the mixed-device error."""
    if type(x) is DeviceArray:
        if x._index != index:
            raise mixed_device_error(cr.device("cuda", index), x.device)
        return x
    if type(x) in (bool, int, float, complex):
        return x                                 # weak, as in NEP 50
    if isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.ndim == 0):
        return DeviceArray.from_host(np.asarray(x), index)
    if isinstance(x, np.ndarray):
        raise mixed_device_error(cr.device("cuda", index), cr.device("cpu"))
    if isinstance(x, (list, tuple)):
        raise mixed_device_error(cr.device("cuda", index), cr.device("cpu"))
    return NotImplemented


def _signature(x):
    return x.dtype if type(x) is DeviceArray else type(x)


@functools.lru_cache(maxsize=4096)
def _resolve(ufunc, signature):
    return ufunc.resolve_dtypes(signature + (None,) * ufunc.nout)


def resolve(ufunc, operands, dtype=None):
    """The loop dtypes (inputs..., outputs...) NumPy would use."""
    signature = tuple(_signature(x) for x in operands)
    if dtype is not None:
        return (np.dtype(dtype),) * (ufunc.nin + ufunc.nout)
    try:
        return _resolve(ufunc, signature)
    except TypeError as e:
        raise TypeError(f"ufunc '{ufunc.__name__}' not supported for the input types "
                        f"{signature}") from e


def as_device(x, dtype, index):
    """``x`` (a DeviceArray or scalar) as a DeviceArray of ``dtype``."""
    if type(x) is DeviceArray:
        return x if x.dtype == dtype else x.astype(dtype)
    out = DeviceArray.empty((), dtype, index)
    out.fill(x)
    return out


def broadcast_shape(*shapes):
    return np.broadcast_shapes(*shapes)


def elementwise(kernel, operands, loop, out_dtype, out=None, arg=0.0):
    """Run one element-wise kernel: operands cast to the loop dtype, broadcast to the
    result shape; the result is ``out`` when given."""
    index = _device_of(operands)
    arrays = [as_device(x, d, index) for x, d in zip(operands, loop)]
    shape = broadcast_shape(*[a.shape for a in arrays])
    result = _output(out, shape, out_dtype, index)
    target = result if result.dtype == out_dtype else DeviceArray.empty(shape, out_dtype, index)
    if target.size:
        arrays = [a.broadcast_to(shape) for a in arrays]
        kernel(target, *arrays, arg) if arg is not None else kernel(target, *arrays)
    if target is not result and result.size:
        K.copy(result, target)
    return result


def _output(out, shape, dtype, index):
    if out is None:
        return DeviceArray.empty(shape, dtype, index)
    if type(out) is not DeviceArray:
        raise mixed_device_error(cr.device("cuda", index), cr.device("cpu"))
    if out.shape != tuple(shape):
        raise ValueError(f"non-broadcastable output operand with shape {out.shape} doesn't "
                         f"match the broadcast shape {tuple(shape)}")
    return out


def _kernel_name(name, dtype):
    kernel = UNARY.get(name) or BINARY.get(name)
    if dtype == np.bool_ and kernel in BOOL_TWINS:
        return BOOL_TWINS[kernel]
    return kernel


def call(ufunc, inputs, out=None, dtype=None, **kwargs):
    """``ufunc(*inputs)`` on the device."""
    where = kwargs.pop("where", True)
    if where is not True:
        result = call(ufunc, inputs, None, dtype, **kwargs)
        if out is None:
            return result
        np.copyto(out, result, where=where)
        return out
    name = ufunc.__name__
    index = _device_of(inputs + ((out,) if out is not None else ()))
    operands = [operand(x, index) for x in inputs]
    if any(x is NotImplemented for x in operands):
        return NotImplemented
    if name == "matmul":
        from ._functions import matmul
        return matmul(*operands, out=out)
    special = SPECIAL.get(name)
    if special is not None:
        return special(*operands, out=out)
    loop = resolve(ufunc, operands, dtype)
    ins, outs = loop[:ufunc.nin], loop[ufunc.nin:]
    if name in SCALED:
        return elementwise(lambda o, a, arg: K.unary("mul_scalar", o, a, arg), operands, ins,
                           outs[0], out, SCALED[name])
    if ins[0].kind == "c" and name in COMPLEX_FORMULAS:
        result = COMPLEX_FORMULAS[name](as_device(operands[0], ins[0], index))
        return result if out is None else np.copyto(out, result) or out
    kernel = _kernel_name(name, ins[0])
    if kernel is None:
        raise NotImplementedError(f"chainrule-cuda: no kernel for the ufunc '{name}'")
    if ufunc.nin == 1:
        return elementwise(lambda o, a, arg: K.unary(kernel, o, a, arg), operands, ins,
                           outs[0], out, 0.0)
    return elementwise(lambda o, a, b: K.binary(kernel, o, a, b), operands, ins, outs[0], out,
                       None)


def _heaviside(x, h, out=None):
    """heaviside(x, h): 0 below 0, h at 0, 1 above (from comparisons and where)."""
    x, h = (a if type(a) is DeviceArray else a for a in (x, h))
    step = (x > 0).astype(np.result_type(_signature(x), _signature(h)))
    return np.where(x == 0, h, step) if out is None else np.copyto(out, np.where(x == 0, h, step))


def _isposinf(x, out=None):
    return np.logical_and(np.isinf(x), x > 0, out=out)


def _isneginf(x, out=None):
    return np.logical_and(np.isinf(x), x < 0, out=out)


SPECIAL = {"heaviside": _heaviside}

# The inverse trigonometric functions of complex numbers (no kernels take complex
# dtypes for them), from their logarithmic forms: the principal branches NumPy uses.
COMPLEX_FORMULAS = {
    "arcsin": lambda z: -1j * np.log(1j * z + np.sqrt(1 - z * z)),
    "arccos": lambda z: math.pi / 2 + 1j * np.log(1j * z + np.sqrt(1 - z * z)),
    "arctan": lambda z: 0.5j * (np.log(1 - 1j * z) - np.log(1 + 1j * z)),
    "arcsinh": lambda z: np.log(z + np.sqrt(z * z + 1)),
    "arccosh": lambda z: np.log(z + np.sqrt(z + 1) * np.sqrt(z - 1)),
    "arctanh": lambda z: 0.5 * (np.log(1 + z) - np.log(1 - z)),
}


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """DeviceArray.__array_ufunc__: the fast paths of Note [ufunc fast paths], else
    :func:`general`."""
    if method == "__call__" and not kwargs:
        if len(inputs) == 1:
            plan = _UNARY_PLANS.get((ufunc, self.dtype))
            if plan is None:
                plan = _UNARY_PLANS[(ufunc, self.dtype)] = _unary_plan(ufunc, self.dtype)
            if plan:
                return _run_unary(plan, self)
        elif len(inputs) == 2:
            result = _fast_binary(ufunc, inputs[0], inputs[1])
            if result is not None:
                return result
    return general(ufunc, method, inputs, kwargs)


def general(ufunc, method, inputs, kwargs):
    """Every ufunc call and method (out=, where=, dtype=, reduce, at, ...)."""
    out = kwargs.pop("out", None)
    if out is not None:
        if len(out) != 1:
            return NotImplemented
        out = out[0]
    if method == "__call__":
        return call(ufunc, inputs, out=out, **kwargs)
    from . import _reductions
    handler = getattr(_reductions, "ufunc_" + method, None)
    if handler is None:
        return NotImplemented
    return handler(ufunc, inputs, out=out, **kwargs)


# Note [ufunc fast paths]
#     Most ufunc calls of a training step or a backward pass are ``f(a)`` or
#     ``f(a, b)`` without keywords, on arrays that already have the loop dtype, or with
#     a Python scalar or a 0-d host constant as the other operand. For those,
#     ``array_ufunc`` finds a plan cached per (ufunc, operand dtypes or scalar types):
#     the kernel's op code, the loop dtype and the result dtype, all from the same type
#     resolution and kernel tables as :func:`call` (a plan exists only where
#     :func:`call` would run exactly that one kernel without casting the arrays). The
#     kernels broadcast the operands themselves (cr_cuda.h), so no views are made;
#     scalars and 0-d host constants become cached 0-d device constants. Anything
#     else (casts, out=, where=, mixed devices, special ufuncs) takes :func:`call`.
_UNARY_PLANS = {}
_BINARY_PLANS = {}
_BROADCAST = {}
_CONSTANTS = {}
_PY_SCALARS = (bool, int, float, complex)


def _unary_plan(ufunc, dtype):
    """(op code, result dtype) of ``ufunc(a)`` for an ``a`` of ``dtype``, or False."""
    name = ufunc.__name__
    if ufunc.nin != 1 or ufunc.nout != 1 or name in SCALED or name in SPECIAL:
        return False
    try:
        loop = _resolve(ufunc, (dtype,))
    except TypeError:
        return False
    if loop[0] != dtype or (dtype.kind == "c" and name in COMPLEX_FORMULAS):
        return False
    return _kernel_plan("unary", name, loop)


def _kernel_plan(family, name, loop):
    kernel = _kernel_name(name, loop[0])
    if kernel is None:
        return False
    try:
        return K.op_code(family, kernel), loop[0], loop[-1]
    except NotImplementedError:
        return False


def _binary_plan(ufunc, sig_a, sig_b):
    """(op code, loop dtype, result dtype) of ``ufunc(a, b)`` for operands of these
    signatures (a dtype, or a Python scalar's type), or False."""
    name = ufunc.__name__
    if ufunc.nin != 2 or ufunc.nout != 1 or name == "matmul" or name in SPECIAL:
        return False
    try:
        loop = _resolve(ufunc, (sig_a, sig_b))
    except TypeError:
        return False
    if loop[0] != loop[1] or any(type(s) is not type and s != loop[0] for s in (sig_a, sig_b)):
        return False
    return _kernel_plan("binary", name, loop)


def _run_unary(plan, a):
    code, _, out_dtype = plan
    out = new(a.shape, out_dtype, a._index)
    if out._mem.nbytes:
        rc = K._LIB[0].cr_unary(code, K.describe(out), a._desc or K.describe(a), 0.0,
                                _streams.current_handle())
        if rc:
            K.check(rc)
    return out


def _fast_binary(ufunc, a, b):
    """``ufunc(a, b)`` by a plan (Note [ufunc fast paths]), or None."""
    ta, tb = type(a), type(b)
    if ta is DeviceArray:
        index = a._index
        if tb is DeviceArray:
            if b._index != index:
                return None
            sig_b = b.dtype
        else:
            sig_b = _scalar_signature(b)
            if sig_b is None:
                return None
        sig_a = a.dtype
    elif tb is DeviceArray:
        index = b._index
        sig_a, sig_b = _scalar_signature(a), b.dtype
        if sig_a is None:
            return None
    else:
        return None
    key = (ufunc, sig_a, sig_b)
    plan = _BINARY_PLANS.get(key)
    if plan is None:
        plan = _BINARY_PLANS[key] = _binary_plan(ufunc, sig_a, sig_b)
    if not plan:
        return None
    if ta is not DeviceArray:
        a = _constant(a, plan[1], index)
    elif tb is not DeviceArray:
        b = _constant(b, plan[1], index)
    shape = a.shape
    if shape != b.shape:
        shape = _broadcast(shape, b.shape)
    out = new(shape, plan[2], index)
    if out._mem.nbytes:
        rc = K._LIB[0].cr_binary(plan[0], K.describe(out), a._desc or K.describe(a),
                                 b._desc or K.describe(b), _streams.current_handle())
        if rc:
            K.check(rc)
    return out


def _scalar_signature(x):
    """A fast-path operand other than a DeviceArray: a Python scalar (weak: its type),
    a NumPy scalar or 0-d host array (its dtype); else None."""
    t = type(x)
    if t in _PY_SCALARS:
        return t
    if (t is np.ndarray and x.ndim == 0) or isinstance(x, np.generic):
        return x.dtype if x.dtype in K.DTYPE_CODES else None
    return None


def _broadcast(a, b):
    key = (a, b)
    shape = _BROADCAST.get(key)
    if shape is None:
        shape = broadcast_shape(a, b)           # raises NumPy's ValueError
        if len(_BROADCAST) < 4096:
            _BROADCAST[key] = shape
    return shape


def _constant(x, dtype, index):
    """A 0-d device array of ``x`` (a Python scalar, NumPy scalar or 0-d host array) in
    ``dtype``, as :func:`call` makes it; cached by value, so a loop's constant is
    copied to the device once. Zeros and NaNs (whose sign or payload a key of equal
    values would lose) are made afresh."""
    t = type(x)
    if t in _PY_SCALARS:
        if t is complex or not x or x != x:
            return as_device(x, dtype, index)
        key = (t, x, dtype, index)
    else:
        key = (x.dtype, x.tobytes(), dtype, index)
    c = _CONSTANTS.get(key)
    if c is None:
        c = as_device(x if t in _PY_SCALARS else DeviceArray.from_host(np.asarray(x), index),
                      dtype, index)
        if len(_CONSTANTS) < 1024:
            c._writeable = False
            _streams.synchronize_current()      # usable from any stream from now on
            _CONSTANTS[key] = c
    return c
