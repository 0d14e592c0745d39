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
from ._array import DeviceArray

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


def array_ufunc(ufunc, method, inputs, kwargs):
    """DeviceArray.__array_ufunc__."""
    out = kwargs.pop("out", None)
    if out is not None:
        if len(out) != 1:
            return NotImplemented
        out = out[0]
    if method == "__call__":
        result = call(ufunc, inputs, out=out, **kwargs)
        return result
    from . import _reductions
    handler = getattr(_reductions, "ufunc_" + method, None)
    if handler is None:
        return NotImplemented
    return handler(ufunc, inputs, out=out, **kwargs)
