"""NumPy functions on DeviceArrays (``__array_function__``; Note [device array
protocols] in _array.py): shape functions as views, the rest over kernels. A function
with no entry here raises NumPy's TypeError naming it.

Note [host-run functions]
    The LAPACK-type functions of ``np.linalg`` have no device kernel: inv, det, slogdet,
    solve, cholesky, qr, svd (svdvals), eigh, eig, eigvals, eigvalsh, lstsq, pinv and
    matrix_rank (and np.fft's fftn, ifftn, rfftn and irfftn, the fft ops' engines) copy
    their operands to the host, run NumPy and copy the results back
    (``on_host``), synchronising the stream. They are listed in HOST_RUN, so tests and
    users can tell; the table ops that reach them (the linalg decompositions, solves,
    and their gradients; matrix_exp's Padé solve) are listed in cuda/tests/
    test_ops_cuda.py's HOST_RUN_OPS, which the tests hold exact. Nothing else copies
    data through the host: sort, argsort and nonzero (so boolean-mask indexing and
    masked_select) run their kernels, nonzero reading back only its count, as the
    reference does; unique, bincount, searchsorted and isin are built on them (and
    the scatter-add); other functions without a device implementation raise NumPy's
    TypeError rather than run on the host.
"""
import itertools
import math

import numpy as np

import chainrule as cr
from chainrule._tensor import mixed_device_error

from . import _kernels as K
from . import _reductions as R
from ._array import DeviceArray, _axis, contiguous_strides, full, zeros

HANDLED = {}


def implements(*funcs):
    def register(fn):
        for f in funcs:
            HANDLED[f] = fn
        return fn
    return register


def array_function(func, types, args, kwargs, like=None):
    if like is not None:
        _LIKE[0] = like._index          # creation functions called with like=
    fn = HANDLED.get(func)
    if fn is None:
        host = HOST_RUN.get(func)
        if host is None:
            return NotImplemented
        return on_host(func, *args, **kwargs)
    kwargs = {k: v for k, v in kwargs.items() if k != "like"}
    return fn(*args, **kwargs)


def _index_of(values):
    for v in values:
        if type(v) is DeviceArray:
            return v._index
        if isinstance(v, (list, tuple)):
            found = _index_of(v)
            if found is not None:
                return found
    return None


def on_host(func, *args, **kwargs):
    """Note [host-run functions]: ``func`` on host copies, results copied back."""
    index = _index_of(list(args) + list(kwargs.values()))
    to_host = _mapper(lambda a: a.get())
    result = func(*to_host(args), **{k: to_host(v) for k, v in kwargs.items()})
    return _mapper(lambda a: DeviceArray.from_host(a, index), np.ndarray)(result) \
        if index is not None else result


def _mapper(fn, kind=DeviceArray):
    def walk(x):
        if type(x) is kind or (kind is np.ndarray and isinstance(x, (np.ndarray, np.generic))):
            return fn(x)
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*[walk(v) for v in x])
        if isinstance(x, (list, tuple)):
            return type(x)(walk(v) for v in x)
        return x
    return walk


HOST_RUN = {f: True for f in [
    np.linalg.inv, np.linalg.det, np.linalg.slogdet, np.linalg.solve, np.linalg.cholesky,
    np.linalg.qr, np.linalg.svd, np.linalg.eigh, np.linalg.eig, np.linalg.eigvals,
    np.linalg.eigvalsh, np.linalg.lstsq, np.linalg.pinv, np.linalg.matrix_rank]
    + ([np.linalg.svdvals] if hasattr(np.linalg, "svdvals") else [])}
# the n-D transforms behind the fft ops (no cuFFT binding yet): pocketfft on the host
HOST_RUN.update({f: True for f in [np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn]})


def operand(x, index):
    """A DeviceArray for ``x`` (a device array, a scalar or a 0-d host value)."""
    from ._ufuncs import operand as ufunc_operand, as_device
    x = ufunc_operand(x, index)
    if type(x) is DeviceArray:
        return x
    return as_device(x, np.result_type(x), index)


# -- creation ----------------------------------------------------------------------------
def _device(like):
    return like._index if type(like) is DeviceArray else 0


@implements(np.empty_like)
def empty_like(a, dtype=None, order="K", subok=True, shape=None, device=None):
    return DeviceArray.empty(a.shape if shape is None else _shape(shape),
                             a.dtype if dtype is None else dtype, a._index)


@implements(np.zeros_like)
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, device=None):
    return full_like(a, 0, dtype, shape=shape)


@implements(np.ones_like)
def ones_like(a, dtype=None, order="K", subok=True, shape=None, device=None):
    return full_like(a, 1, dtype, shape=shape)


@implements(np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, device=None):
    out = empty_like(a, dtype, shape=shape)
    _fill(out, fill_value)
    return out


def _fill(out, value):
    if type(value) is DeviceArray:
        np.copyto(out, value)
    else:
        out.fill(value)


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)


HANDLED[np.zeros] = lambda shape, dtype=None, order="C", **k: \
    full(_shape(shape), 0, np.float64 if dtype is None else dtype, _LIKE[0])
HANDLED[np.ones] = lambda shape, dtype=None, order="C", **k: \
    full(_shape(shape), 1, np.float64 if dtype is None else dtype, _LIKE[0])
HANDLED[np.empty] = lambda shape, dtype=None, order="C", **k: \
    DeviceArray.empty(_shape(shape), np.float64 if dtype is None else dtype, _LIKE[0])
HANDLED[np.full] = lambda shape, fill_value, dtype=None, order="C", **k: \
    full(_shape(shape), fill_value, np.result_type(fill_value) if dtype is None else dtype,
         _LIKE[0])
_LIKE = [0]      # the device of the last like= array (creation functions)


@implements(np.arange)
def arange(start, stop=None, step=1, dtype=None, **kwargs):
    return DeviceArray.from_host(np.arange(start, stop, step, dtype), _LIKE[0])


@implements(np.eye)
def eye(n, m=None, k=0, dtype=float, order="C", **kwargs):
    return DeviceArray.from_host(np.eye(n, m, k, dtype), _LIKE[0])


@implements(np.array, np.asarray, np.asanyarray)
def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, **kwargs):
    if type(obj) is DeviceArray:
        out = obj if dtype is None else obj.astype(dtype, copy=False)
        return out.copy() if copy is True and out is obj else out
    return DeviceArray.from_host(np.asarray(obj, dtype), _LIKE[0])


@implements(np.ascontiguousarray)
def ascontiguousarray(a, dtype=None, **kwargs):
    a = a if dtype is None else a.astype(dtype, copy=False)
    return a if a.flags.c_contiguous else a.copy()


@implements(np.copy)
def copy(a, order="K", subok=False):
    return a.copy()


@implements(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    if where is not True:
        np.copyto(dst, np.where(where, src, dst))
        return
    src = operand(src, dst._index) if type(src) is not DeviceArray else src
    if src._index != dst._index:
        raise mixed_device_error(dst.device, src.device)
    if dst.size:
        K.copy(dst, src.broadcast_to(dst.shape) if src.shape != dst.shape else src)


# -- shape -------------------------------------------------------------------------------
@implements(np.reshape)
def reshape(a, shape=None, order="C", newshape=None, copy=None):
    return a.reshape(shape if shape is not None else newshape)


@implements(np.transpose)
def transpose(a, axes=None):
    return a.transpose(axes)


@implements(np.swapaxes)
def swapaxes(a, axis1, axis2):
    return a.swapaxes(axis1, axis2)


@implements(np.moveaxis)
def moveaxis(a, source, destination):
    source = [_axis(s, a.ndim) for s in np.atleast_1d(source).tolist()] \
        if not isinstance(source, int) else [_axis(source, a.ndim)]
    destination = [_axis(d, a.ndim) for d in np.atleast_1d(destination).tolist()] \
        if not isinstance(destination, int) else [_axis(destination, a.ndim)]
    order = [n for n in range(a.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return a.transpose(order)


@implements(np.expand_dims)
def expand_dims(a, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = a.ndim + len(axes)
    axes = sorted(_axis(x, ndim) for x in axes)
    shape, est = list(a.shape), list(a._est)
    for x in axes:
        shape.insert(x, 1)
        est.insert(x, 0)
    return a._restride(tuple(shape), tuple(est))


@implements(np.squeeze)
def squeeze(a, axis=None):
    return a.squeeze(axis)


@implements(np.broadcast_to)
def broadcast_to(a, shape, subok=False):
    return a.broadcast_to(_shape(shape))


@implements(np.broadcast_arrays)
def broadcast_arrays(*args, subok=False):
    shape = np.broadcast_shapes(*[a.shape for a in args])
    return [a.broadcast_to(shape) for a in args]


@implements(np.ravel)
def ravel(a, order="C"):
    return a.reshape(-1)


@implements(np.atleast_1d)
def atleast_1d(*arys):
    out = [a.reshape(1) if a.ndim == 0 else a for a in arys]
    return out[0] if len(out) == 1 else out


@implements(np.flip)
def flip(a, axis=None):
    axes = R.axes_of(axis, a.ndim)
    offset = sum((a.shape[x] - 1) * a._est[x] for x in axes if a.shape[x])
    est = tuple(-s if i in axes else s for i, s in enumerate(a._est))
    return a._restride(a.shape, est, offset)


@implements(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    axis1, axis2 = _axis(axis1, a.ndim), _axis(axis2, a.ndim)
    n1, n2 = a.shape[axis1], a.shape[axis2]
    start = (offset * a._est[axis2]) if offset >= 0 else (-offset * a._est[axis1])
    count = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    keep = [i for i in range(a.ndim) if i not in (axis1, axis2)]
    shape = tuple(a.shape[i] for i in keep) + (count,)
    est = tuple(a._est[i] for i in keep) + (a._est[axis1] + a._est[axis2],)
    return a._restride(shape, est, start if count else 0)


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return R.sum_(diagonal(a, offset, axis1, axis2), -1, dtype, out)


@implements(np.concatenate)
def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    index = _index_of(arrays)
    arrays = [operand(x, index) for x in arrays]
    if axis is None:
        arrays, axis = [x.reshape(-1) for x in arrays], 0
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, first.ndim)
    result_dtype = np.result_type(*[x.dtype for x in arrays]) if dtype is None else dtype
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in arrays)
    for x in arrays:
        if x.ndim != first.ndim or any(x.shape[i] != first.shape[i]
                                       for i in range(x.ndim) if i != axis):
            raise ValueError("all the input array dimensions except for the concatenation "
                             f"axis must match exactly, but along dimension "
                             f"{next(i for i in range(x.ndim) if i != axis and x.shape[i] != first.shape[i]) if x.ndim == first.ndim else 0}, "
                             f"the array at index 0 has size {first.shape} and another "
                             f"has size {x.shape}")
    result = DeviceArray.empty(shape, result_dtype, index) if out is None else out
    at = 0
    for x in arrays:
        n = x.shape[axis]
        if n and x.size:
            key = (slice(None),) * axis + (slice(at, at + n),)
            K.copy(result[key], x)
        at += n
    return result


@implements(np.stack)
def stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    index = _index_of(arrays)
    arrays = [operand(x, index) for x in arrays]
    shapes = {x.shape for x in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    axis = _axis(axis, arrays[0].ndim + 1)
    return concatenate([expand_dims(x, axis) for x in arrays], axis, out, dtype)


@implements(np.split, np.array_split)
def split(a, indices_or_sections, axis=0):
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        size, extra = divmod(n, sections)
        bounds = list(itertools.accumulate([size + 1] * extra + [size] * (sections - extra)))
        bounds = [0] + bounds
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    return [a[(slice(None),) * axis + (slice(lo, hi),)] for lo, hi in zip(bounds, bounds[1:])]


@implements(np.tile)
def tile(a, reps):
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    ndim = max(a.ndim, len(reps))
    a = a.reshape((1,) * (ndim - a.ndim) + a.shape)
    reps = (1,) * (ndim - len(reps)) + reps
    expanded = a.reshape(tuple(x for n in a.shape for x in (1, n)))
    shape = tuple(x for r, n in zip(reps, a.shape) for x in (r, n))
    return expanded.broadcast_to(shape).copy().reshape(tuple(r * n for r, n in zip(reps, a.shape)))


@implements(np.repeat)
def repeat(a, repeats, axis=None):
    if not isinstance(repeats, (int, np.integer)):
        return _repeat_each(a, repeats, axis)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _axis(axis, a.ndim)
    e = expand_dims(a, axis + 1)
    shape = list(e.shape)
    shape[axis + 1] = int(repeats)
    out_shape = list(a.shape)
    out_shape[axis] *= int(repeats)
    return e.broadcast_to(tuple(shape)).copy().reshape(tuple(out_shape))


def _repeat_each(a, repeats, axis):
    """np.repeat with one count per element: the repeated positions computed on the
    device from the counts (core's repeat_interleave helper), then taken."""
    from chainrule._ops.shape import _repeated_positions
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _axis(axis, a.ndim)
    counts = operand(repeats, a._index) if type(repeats) is DeviceArray else \
        DeviceArray.from_host(np.asarray(repeats, np.int64), a._index)
    counts = counts.astype(np.int64, copy=False).reshape(-1).broadcast_to((a.shape[axis],))
    return take(a, _repeated_positions(counts), axis)


@implements(np.roll)
def roll(a, shift, axis=None):
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for s, x in zip(shifts, axes):
        x = _axis(x, a.ndim)
        n = a.shape[x]
        if n:
            s %= n
            pre = (slice(None),) * x
            a = concatenate([a[pre + (slice(n - s, n),)], a[pre + (slice(0, n - s),)]], x)
    return a


@implements(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    k %= 4
    a0, a1 = axes
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return flip(m, a1).transpose(perm) if k == 1 else flip(m.transpose(perm), a1)


@implements(np.pad)
def pad(array, pad_width, mode="constant", constant_values=0, **kwargs):
    if mode != "constant":
        return _pad_by_index(array, pad_width, mode)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (array.ndim, 2)).tolist()
    shape = tuple(n + lo + hi for n, (lo, hi) in zip(array.shape, widths))
    out = full(shape, constant_values, array.dtype, array._index)
    if array.size:
        K.copy(out[tuple(slice(lo, lo + n) for n, (lo, _) in zip(array.shape, widths))], array)
    return out


def _pad_by_index(array, pad_width, mode):
    """np.pad's edge/reflect/symmetric/wrap modes: along each axis, the source position
    of every output element (np.pad of a host arange: shapes only) taken on the device."""
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"np.pad mode '{mode}' is not supported on DeviceArrays")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (array.ndim, 2)).tolist()
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            source = np.pad(np.arange(array.shape[axis]), (lo, hi), mode=mode)
            array = take(array, DeviceArray.from_host(source, array._index), axis)
    return array


# -- sets and counting (sort, nonzero and scatter-add kernels) ---------------------------
@implements(np.unique)
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):
    """np.unique of the flattened array: sorted, the first of each run of equal values
    kept (their count is the one value read back)."""
    if axis is not None or return_index:
        raise NotImplementedError("np.unique(axis=, return_index=) is not supported on "
                                  "DeviceArrays")
    flat = ar.reshape(-1)
    order = argsort(flat)
    ordered = flat[order]
    starts = _run_starts(ordered, equal_nan)
    values = ordered[starts]
    if not (return_inverse or return_counts):
        return values
    out = [values]
    if return_inverse:
        inverse = DeviceArray.empty(flat.shape, np.int64, ar._index)
        inverse[order] = R.cumsum(starts.astype(np.int64)) - 1
        out.append(inverse.reshape(ar.shape))
    if return_counts:
        first = np.flatnonzero(starts)
        out.append(np.diff(concatenate([first, full((1,), flat.size, np.int64, ar._index)])))
    return tuple(out)


def _run_starts(ordered, equal_nan):
    """Where each run of equal values of a sorted 1-D array starts (NaNs one run)."""
    if not ordered.size:
        return zeros((0,), np.bool_, ordered._index)
    differ = ordered[1:] != ordered[:-1]
    if equal_nan and ordered.dtype.kind in "fcV":
        differ = np.logical_and(differ, np.logical_not(np.logical_and(
            np.isnan(ordered[1:]), np.isnan(ordered[:-1]))))
    return concatenate([full((1,), True, np.bool_, ordered._index), differ])


@implements(np.diff)
def diff(a, n=1, axis=-1, prepend=None, append=None):
    if prepend is not None or append is not None:
        a = concatenate([x for x in (prepend, a, append) if x is not None], axis)
    axis = _axis(axis, a.ndim)
    for _ in range(n):
        upper = (slice(None),) * axis + (slice(1, None),)
        lower = (slice(None),) * axis + (slice(None, -1),)
        a = np.not_equal(a[upper], a[lower]) if a.dtype == np.bool_ else a[upper] - a[lower]
    return a


@implements(np.bincount)
def bincount(x, weights=None, minlength=0):
    """Counts (or summed weights) per value by the scatter-add kernel; the size, from
    the largest value, is the one value read back."""
    size = max(int(R.amax(x).item()) + 1 if x.size else 0, int(minlength))
    if weights is None:
        out = zeros((size,), np.int64, x._index)
        np.add.at(out, x, 1)
    else:
        out = zeros((size,), np.float64, x._index)
        np.add.at(out, x, weights.astype(np.float64, copy=False))
    return out


@implements(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    """Insertion positions in the sorted 1-D ``a``: per value, how many elements of
    ``a`` are below it (at or below: side="right"), counted by one broadcast compare."""
    index = _index_of([a, v])
    a = operand(a, index) if sorter is None else operand(a, index)[operand(sorter, index)]
    v = operand(v, index)
    below = np.less_equal if side == "right" else np.less
    flat = v.reshape(-1)
    passed = below(a.reshape(1, -1), flat.reshape(-1, 1)) if a.size else \
        zeros((flat.size, 0), np.bool_, index)
    return R.sum_(passed, 1, np.int64).reshape(v.shape)


@implements(np.isin)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    index = _index_of([element, test_elements])
    tests = np.sort(operand(test_elements, index).reshape(-1))
    element = operand(element, index)
    if not tests.size:
        found = zeros(element.shape, np.bool_, index)
    else:
        at = np.minimum(searchsorted(tests, element), tests.size - 1)
        found = np.equal(tests[at], element)
    return np.logical_not(found) if invert else found


# -- element-wise ------------------------------------------------------------------------
@implements(np.where)
def where(condition, x=None, y=None):
    if x is None and y is None:
        return nonzero(condition)
    index = _index_of([condition, x, y])
    cond = operand(condition, index)
    cond = cond if cond.dtype == np.bool_ else cond.astype(np.bool_)
    # arrays by dtype, Python scalars by value: weak, as NumPy's np.where (NEP 50)
    dtype = np.result_type(*[v.dtype if isinstance(v, (np.ndarray, DeviceArray)) else v
                             for v in (x, y)])
    a, b = operand(x, index).astype(dtype, copy=False), operand(y, index).astype(dtype, copy=False)
    shape = np.broadcast_shapes(cond.shape, a.shape, b.shape)
    out = DeviceArray.empty(shape, dtype, index)
    if out.size:
        K.ternary("where", out, cond.broadcast_to(shape), a.broadcast_to(shape),
                  b.broadcast_to(shape))
    return out


@implements(np.nonzero)
def nonzero(a):
    """The index arrays of ``a``'s nonzero elements, from the nonzero kernel; their
    count, which sizes the result, is the one value read back (the reference reads it
    too)."""
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    coords = argwhere(a)
    return tuple(coords[:, d] for d in range(a.ndim))


@implements(np.argwhere)
def argwhere(a):
    """(n, ndim) int64 coordinates of the nonzero elements (n read back)."""
    if a.ndim == 0:
        return zeros((int(bool(a)), 0), np.int64, a._index)
    count = int(R.count_nonzero(a).item()) if a.size else 0
    coords = DeviceArray.empty((count, a.ndim), np.int64, a._index)
    if count:
        K.nonzero(coords, a)
    return coords


@implements(np.flatnonzero)
def flatnonzero(a):
    return nonzero(a.reshape(-1))[0]


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """The stable sort kernel (NaN last, like NumPy's)."""
    return _sorted(a, axis, want_values=True)


@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """The stable sort kernel's indices (NumPy's kind="stable" order for any kind)."""
    return _sorted(a, axis, want_values=False)


def _sorted(a, axis, want_values):
    if axis is None:
        a, axis = a.reshape(-1), 0
    if a.ndim == 0:
        return a.copy() if want_values else zeros((), np.int64, a._index)
    axis = _axis(axis, a.ndim)
    out = DeviceArray.empty(a.shape, a.dtype if want_values else np.int64, a._index)
    if a.size:
        K.sort(out if want_values else None, None if want_values else out, a, axis)
    return out


@implements(np.clip)
def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    result = a
    if a_min is not None:
        result = np.maximum(result, a_min)
    if a_max is not None:
        result = np.minimum(result, a_max)
    if out is not None:
        np.copyto(out, result)
        return out
    return result if result is not a else a.copy()


@implements(np.real)
def real(val):
    return val.real


@implements(np.imag)
def imag(val):
    return val.imag


@implements(np.conj, np.conjugate)
def conj(x):
    return np.conjugate(x)


@implements(np.angle)
def angle(z, deg=False):
    out = DeviceArray.empty(z.shape, z.real.dtype if z.dtype.kind == "c" else
                            (z.dtype if z.dtype.kind == "f" else np.float64), z._index)
    src = z if z.dtype.kind in "fc" else z.astype(np.float64)
    if out.size:
        K.unary("angle", out, src)
    return out * (180 / math.pi) if deg else out


@implements(np.round, np.around)
def round_(a, decimals=0, out=None):
    if decimals:
        scale = 10.0 ** decimals
        return np.rint(a * scale) / scale
    return np.rint(a) if out is None else np.rint(a, out=out)


@implements(np.sinc)
def sinc(x):
    y = np.where(x == 0, 1.0e-20, x) * math.pi
    return np.where(x == 0, 1.0, np.sin(y) / y).astype(np.result_type(x.dtype, np.float16))


@implements(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if x.dtype.kind not in "fc":
        return x.copy() if copy else x
    info = np.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = np.where(np.isnan(x), nan, x)
    out = np.where(np.logical_and(np.isinf(out), out > 0), posinf, out)
    return np.where(np.logical_and(np.isinf(out), out < 0), neginf, out).astype(x.dtype)


@implements(np.isposinf)
def isposinf(x, out=None):
    return np.logical_and(np.isinf(x), x > 0, out=out)


@implements(np.isneginf)
def isneginf(x, out=None):
    return np.logical_and(np.isinf(x), x < 0, out=out)


@implements(np.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = np.abs(a - b) <= atol + rtol * np.abs(b)
    return np.logical_or(close, np.logical_and(np.isnan(a), np.isnan(b))) if equal_nan else close


@implements(np.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.all(isclose(a, b, rtol, atol, equal_nan)).item())


def _triangle(lower):
    def tri(m, k=0):
        rows = np.arange(m.shape[-2], like=m).reshape(-1, 1)
        cols = np.arange(m.shape[-1], like=m).reshape(1, -1)
        keep = (cols - rows <= k) if lower else (cols - rows >= k)
        return np.where(keep, m, zeros((), m.dtype, m._index))
    return tri


HANDLED[np.tril], HANDLED[np.triu] = _triangle(True), _triangle(False)


# -- products ----------------------------------------------------------------------------
def matmul(a, b, out=None):
    """np.matmul over cr_matmul (batch dims broadcast; 1-D operands promoted)."""
    index = _index_of([a, b])
    a, b = operand(a, index), operand(b, index)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    from ._ufuncs import resolve
    dtype = resolve(np.matmul, [a, b])[-1]
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {b2.shape[-2]} "
                         f"is different from {a2.shape[-1]})")
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    shape = batch + (a2.shape[-2], b2.shape[-1])
    result = DeviceArray.empty(shape, dtype, index)
    if result.size:
        if a2.shape[-1] == 0:
            result.fill(0)
        else:
            K.matmul(result, a2.astype(dtype, copy=False), b2.astype(dtype, copy=False))
    if a.ndim == 1:
        result = result.reshape(result.shape[:-2] + result.shape[-1:])
    if b.ndim == 1:
        result = result.reshape(result.shape[:-1])
    if out is not None:
        np.copyto(out, result)
        return out
    return result


@implements(np.dot)
def dot(a, b, out=None):
    if getattr(a, "ndim", 0) == 0 or getattr(b, "ndim", 0) == 0:
        return np.multiply(a, b, out=out)
    if b.ndim > 2:
        return tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))
    return matmul(a, b, out)


@implements(np.vdot)
def vdot(a, b):
    return matmul(np.conjugate(a.reshape(-1)), b.reshape(-1))


@implements(np.inner)
def inner(a, b):
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


@implements(np.outer)
def outer(a, b, out=None):
    return np.multiply(a.reshape(-1, 1), b.reshape(1, -1), out=out)


@implements(np.tensordot)
def tensordot(a, b, axes=2):
    if isinstance(axes, int):
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        axes_a, axes_b = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                          [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
    axes_a = [_axis(x, a.ndim) for x in axes_a]
    axes_b = [_axis(x, b.ndim) for x in axes_b]
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    k = math.prod(a.shape[i] for i in axes_a)
    left = a.transpose(free_a + axes_a).reshape(-1, k)
    right = b.transpose(axes_b + free_b).reshape(k, -1)
    shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
    return matmul(left, right).reshape(shape)


@implements(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
    return np.moveaxis(out, -1, axisc)


@implements(np.einsum)
def einsum(subscripts, *operands, out=None, optimize=False, **kwargs):
    """Each operand laid out over all the subscript's letters (views: permuted, new
    axes of size 1), multiplied with broadcasting, then summed over the letters the
    output does not keep; repeated letters in one operand take its diagonal."""
    index = _index_of(operands)
    operands = [operand(x, index) for x in operands]
    inputs, output = _parse_einsum(subscripts, operands)
    letters = sorted(set("".join(inputs)), key=lambda c: ("".join(inputs) + output).index(c))
    letters = list(output) + [c for c in letters if c not in output]
    product = None
    for spec, x in zip(inputs, operands):
        x, spec = _einsum_diagonals(x, spec)
        order = [spec.index(c) for c in letters if c in spec]
        x = x.transpose(order)
        present = [c for c in letters if c in spec]
        shape = tuple(x.shape[present.index(c)] if c in spec else 1 for c in letters)
        x = x.reshape(shape)
        product = x if product is None else product * x
    summed = tuple(range(len(output), len(letters)))
    result = R.sum_(product, summed) if summed else product.copy()
    result = result if result.ndim == len(output) else result.reshape(result.shape[:len(output)])
    if out is not None:
        np.copyto(out, result)
        return out
    return result


def _parse_einsum(subscripts, operands):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, output = subscripts.split("->")
    else:
        lhs = subscripts
        counts = {c: lhs.count(c) for c in lhs if c.isalpha()}
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    inputs = lhs.split(",")
    if "..." in subscripts:
        spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in subscripts]
        width = max(x.ndim - (len(s) - 3) for s, x in zip(inputs, operands) if "..." in s)
        fill = "".join(spare[:width])
        inputs = [s.replace("...", fill[width - (x.ndim - (len(s) - 3)):]) if "..." in s else s
                  for s, x in zip(inputs, operands)]
        output = output.replace("...", fill) if "..." in output else fill + output \
            if "->" not in subscripts else output
    return inputs, output


def _einsum_diagonals(x, spec):
    while len(set(spec)) != len(spec):
        c = next(c for c in spec if spec.count(c) > 1)
        i = spec.index(c)
        j = spec.index(c, i + 1)
        x = diagonal(x, 0, i, j)
        spec = "".join(ch for k, ch in enumerate(spec) if k not in (i, j)) + c
    return x, spec


# -- indexing functions ------------------------------------------------------------------
@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _axis(axis, a.ndim)
    key = (slice(None),) * axis + (indices,)
    result = a[key]
    if out is not None:
        np.copyto(out, result)
        return out
    return result


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis):
    if axis is None:
        arr, axis = arr.reshape(-1), 0
    axis = _axis(axis, arr.ndim)
    indices = _device_index(indices, arr._index)
    shape = np.broadcast_shapes(
        tuple(1 if i == axis else n for i, n in enumerate(arr.shape)),
        tuple(1 if i == axis else n for i, n in enumerate(indices.shape)))
    shape = tuple(indices.shape[i] if i == axis else n for i, n in enumerate(shape))
    indices = indices.broadcast_to(shape)
    src = arr.broadcast_to(tuple(arr.shape[i] if i == axis else n for i, n in enumerate(shape)))
    out = DeviceArray.empty(shape, arr.dtype, arr._index)
    if out.size:
        K.gather(out, src, axis, _wrapped(indices, arr.shape[axis]))
    return out


@implements(np.put_along_axis)
def put_along_axis(arr, indices, values, axis):
    axis = _axis(axis, arr.ndim)
    indices = _wrapped(_device_index(indices, arr._index), arr.shape[axis])
    grids = [np.arange(n, like=arr).reshape(tuple(-1 if i == d else 1 for i in range(arr.ndim)))
             for d, n in enumerate(indices.shape)]
    grids[axis] = indices
    arr[tuple(grids)] = values


def _device_index(indices, index):
    if isinstance(indices, np.ndarray):
        return DeviceArray.from_host(indices.astype(np.int64, copy=False), index)
    return indices if indices.dtype == np.int64 else indices.astype(np.int64)


def _wrapped(indices, n):
    return np.where(indices < 0, indices + n, indices)


@implements(np.may_share_memory, np.shares_memory)
def may_share_memory(a, b, max_work=None):
    return type(a) is DeviceArray and type(b) is DeviceArray and a._mem is b._mem


@implements(np.result_type)
def result_type(*arrays_and_dtypes):
    return np.result_type(*[x.dtype if type(x) is DeviceArray else x for x in arrays_and_dtypes])


@implements(np.iscomplexobj)
def iscomplexobj(x):
    return x.dtype.kind == "c"


@implements(np.isrealobj)
def isrealobj(x):
    return x.dtype.kind != "c"


@implements(np.ndim)
def ndim(a):
    return a.ndim


@implements(np.shape)
def shape(a):
    return a.shape


@implements(np.size)
def size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


# -- reductions --------------------------------------------------------------------------
HANDLED.update({np.sum: R.sum_, np.prod: R.prod, np.max: R.amax, np.amax: R.amax,
                np.min: R.amin, np.amin: R.amin, np.mean: R.mean, np.var: R.var, np.std: R.std,
                np.all: R.all_, np.any: R.any_, np.argmax: R.argmax, np.argmin: R.argmin,
                np.cumsum: R.cumsum, np.cumprod: R.cumprod, np.count_nonzero: R.count_nonzero})

# ndarray methods with a function twin (bound as DeviceArray's methods in _array.py)
METHODS = {"sum": R.sum_, "prod": R.prod, "max": R.amax, "min": R.amin, "mean": R.mean,
           "var": R.var, "std": R.std, "all": R.all_, "any": R.any_, "argmax": R.argmax,
           "argmin": R.argmin, "cumsum": R.cumsum, "cumprod": R.cumprod, "clip": clip,
           "dot": dot, "nonzero": nonzero, "diagonal": diagonal, "trace": trace,
           "round": round_, "take": take, "repeat": repeat,
           "argsort": argsort, "sort": lambda a, *args, **kw: _sort_in_place(a, *args, **kw)}


def _sort_in_place(a, axis=-1, kind=None, order=None, stable=None):
    a[...] = sort(a, axis)
