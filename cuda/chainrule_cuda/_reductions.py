"""Reductions, scans and the ufunc methods (reduce, accumulate, at, outer) on
DeviceArrays, each one kernel (cr_reduce, cr_arg_reduce, cr_scan) over the reduced
dims given as a mask; dtypes follow NumPy's (integer sums in int64, means in float)."""
import numpy as np

from . import _kernels as K
from ._array import DeviceArray, _axis


def axes_of(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted({_axis(a, ndim) for a in axis}))
    return (_axis(axis, ndim),)


def _kept_shape(shape, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _finish(result, shape, axes, keepdims, out):
    if not keepdims:
        result = result.reshape(tuple(n for i, n in enumerate(shape) if i not in axes))
    if out is not None:
        np.copyto(out, result)
        return out
    return result


def _sum_dtype(dtype):
    if dtype.kind == "b" or dtype.kind == "i":
        return np.dtype(np.int64)
    if dtype.kind == "u":
        return np.dtype(np.uint64) if dtype.itemsize == 8 else np.dtype(np.int64)
    return dtype


def _mean_dtype(dtype):
    return np.dtype(np.float64) if dtype.kind in "biu" else dtype


def reduce(kernel, a, axis=None, dtype=None, out=None, keepdims=False, arg=0.0,
           result_dtype=None, compute_dtype=None):
    """One reduction kernel over ``axis``: the input cast to ``compute_dtype`` first."""
    a = as_array(a)
    axes = axes_of(axis, a.ndim)
    compute = np.dtype(dtype) if dtype is not None else (compute_dtype or a.dtype)
    src = a if a.dtype == compute else a.astype(compute)
    res_dtype = np.dtype(result_dtype) if result_dtype is not None else compute
    result = DeviceArray.empty(_kept_shape(a.shape, axes), res_dtype, a._index)
    if result.size:
        K.reduce(kernel, result, src, axes if a.ndim else (), arg)
    return _finish(result, a.shape, axes, keepdims, out)


def as_array(a):
    if type(a) is not DeviceArray:
        raise TypeError(f"expected a DeviceArray, got {type(a).__name__}")
    return a


def _check_identity(a, axes, name):
    if any(a.shape[i] == 0 for i in axes) or (not a.ndim and a.size == 0):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")


def sum_(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if initial not in (None, 0):
        return sum_(a, axis, dtype, None, keepdims) + initial
    return reduce("sum", a, axis, dtype, out, keepdims, compute_dtype=_sum_dtype(a.dtype))


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return reduce("prod", a, axis, dtype, out, keepdims, compute_dtype=_sum_dtype(a.dtype))


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    if initial is not None:
        return _with_initial(np.maximum, amax, a, axis, out, keepdims, initial)
    _check_identity(a, axes_of(axis, a.ndim), "maximum")
    if a.dtype == np.bool_:
        return reduce("any", a, axis, None, out, keepdims)
    return reduce("amax", a, axis, None, out, keepdims)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    if initial is not None:
        return _with_initial(np.minimum, amin, a, axis, out, keepdims, initial)
    _check_identity(a, axes_of(axis, a.ndim), "minimum")
    if a.dtype == np.bool_:
        return reduce("all", a, axis, None, out, keepdims)
    return reduce("amin", a, axis, None, out, keepdims)


def _with_initial(ufunc, reduction, a, axis, out, keepdims, initial):
    """max/min with ``initial`` (also the result of an empty reduction)."""
    axes = axes_of(axis, a.ndim)
    if any(a.shape[i] == 0 for i in axes):
        shape = _kept_shape(a.shape, axes)
        result = _finish(full_array(shape, initial, a), a.shape, axes, keepdims, None)
    else:
        result = ufunc(reduction(a, axis, None, keepdims), initial).astype(a.dtype, copy=False)
    if out is not None:
        np.copyto(out, result)
        return out
    return result


def full_array(shape, value, like):
    from ._array import full
    return full(shape, value, like.dtype, like._index)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    return reduce("mean", a, axis, dtype, out, keepdims, compute_dtype=_mean_dtype(a.dtype))


def _real_dtype(dtype):
    return np.dtype(np.float32 if dtype == np.complex64 else np.float64) \
        if dtype.kind == "c" else dtype


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True, mean=None,
        correction=None):
    ddof = ddof if correction is None else correction
    compute = _mean_dtype(a.dtype) if dtype is None else np.dtype(dtype)
    return reduce("var", a, axis, None, out, keepdims, float(ddof),
                  result_dtype=_real_dtype(compute), compute_dtype=compute)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True, mean=None,
        correction=None):
    ddof = ddof if correction is None else correction
    compute = _mean_dtype(a.dtype) if dtype is None else np.dtype(dtype)
    return reduce("std", a, axis, None, out, keepdims, float(ddof),
                  result_dtype=_real_dtype(compute), compute_dtype=compute)


def all_(a, axis=None, out=None, keepdims=False, where=True):
    return reduce("all", a, axis, None, out, keepdims, result_dtype=np.bool_)


def any_(a, axis=None, out=None, keepdims=False, where=True):
    return reduce("any", a, axis, None, out, keepdims, result_dtype=np.bool_)


def count_nonzero(a, axis=None, keepdims=False):
    return reduce("count_nonzero", (a != 0), axis, None, None, keepdims,
                  compute_dtype=np.dtype(np.int64))


def _arg(kernel, a, axis, out, keepdims):
    a = as_array(a)
    if axis is None:
        flat = a.reshape(-1)
        result = _arg(kernel, flat, 0, None, False)
        return result.reshape((1,) * a.ndim) if keepdims else result
    axis = _axis(axis, a.ndim)
    if a.shape[axis] == 0:
        raise ValueError(f"attempt to get {kernel} of an empty sequence")
    shape = _kept_shape(a.shape, (axis,))
    values = DeviceArray.empty(shape, a.dtype, a._index)
    indices = DeviceArray.empty(shape, np.int64, a._index)
    src = a if a.dtype != np.bool_ else a.astype(np.uint8)
    if src is not a:
        values = DeviceArray.empty(shape, src.dtype, a._index)
    if indices.size:
        K.arg_reduce(kernel, values, indices, src, axis)
    return _finish(indices, a.shape, (axis,), keepdims, out)


def argmax(a, axis=None, out=None, keepdims=False):
    return _arg("argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    return _arg("argmin", a, axis, out, keepdims)


def scan(kernel, a, axis=None, dtype=None, out=None):
    a = as_array(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _axis(axis, a.ndim) if a.ndim else 0
    src = a.reshape(1) if not a.ndim else a
    compute = np.dtype(dtype) if dtype is not None else \
        (_sum_dtype(a.dtype) if kernel in ("cumsum", "cumprod") else a.dtype)
    src = src if src.dtype == compute else src.astype(compute)
    result = DeviceArray.empty(src.shape, compute, a._index)
    if result.size and kernel in ("cummax", "cummin"):     # values and their positions
        K.scan_with_indices(kernel, result, DeviceArray.empty(src.shape, np.int64, a._index),
                            src, axis)
    elif result.size:
        K.scan(kernel, result, src, axis)
    result = result.reshape(a.shape)
    if out is not None:
        np.copyto(out, result)
        return out
    return result


def cumsum(a, axis=None, dtype=None, out=None):
    return scan("cumsum", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    return scan("cumprod", a, axis, dtype, out)


_REDUCE = {"add": sum_, "multiply": prod, "maximum": amax, "minimum": amin,
           "logical_and": all_, "logical_or": any_}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax",
               "minimum": "cummin", "logaddexp": "logcumsumexp"}


def ufunc_reduce(ufunc, inputs, out=None, axis=0, dtype=None, keepdims=False, initial=None,
                 where=True):
    fn = _REDUCE.get(ufunc.__name__)
    if fn is None or len(inputs) != 1:
        return NotImplemented
    a = inputs[0]
    if ufunc.__name__ in ("logical_and", "logical_or"):
        return fn(a, axis, out, keepdims)
    if ufunc.__name__ in ("maximum", "minimum"):
        return fn(a, axis, out, keepdims, initial)
    return fn(a, axis, dtype, out, keepdims, initial)


def ufunc_accumulate(ufunc, inputs, out=None, axis=0, dtype=None):
    kernel = _ACCUMULATE.get(ufunc.__name__)
    if kernel is None:
        return NotImplemented
    return scan(kernel, inputs[0], axis, dtype, out)


def ufunc_outer(ufunc, inputs, out=None, **kwargs):
    a, b = inputs
    a_shape = getattr(a, "shape", ())
    b_ndim = len(getattr(b, "shape", ()))
    a = a.reshape(tuple(a_shape) + (1,) * b_ndim) if hasattr(a, "reshape") else a
    return ufunc(a, b, **({"out": out} if out is not None else {}))


def ufunc_at(ufunc, inputs, out=None):
    from ._indexing import ufunc_at
    return ufunc_at(ufunc, *inputs)
