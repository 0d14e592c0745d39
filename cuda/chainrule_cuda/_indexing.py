"""Indexing DeviceArrays with NumPy's rules: basic indexing (ints, slices, None, ...)
gives views; advanced indexing (integer and boolean arrays) gathers through element
offsets; assignment and ``ufunc.at`` scatter through them.

Note [indexing by offsets]
    An advanced index is turned into one int64 array of element offsets (relative to
    the view's first element) with the result's shape: the index arrays, wrapped and
    scaled by their dims' strides, plus each remaining dim's ``arange * stride``, all
    broadcast into place. A gather over the 1-D span of memory the view covers then
    reads the result, and a scatter-add writes it, whatever the view's layout.
    Boolean masks become integer arrays (their nonzero positions, by the nonzero
    kernel; only their count is read back, as the result's shape depends on it).
    Integer and boolean index arrays on the host are copied over (the reference takes
    CPU indices too).
"""
import numpy as np

import chainrule as cr
from chainrule._tensor import mixed_device_error

from . import _kernels as K
from ._array import DeviceArray, zeros


def _normalize(a, key):
    """(items, advanced): the key as a list of int/slice/None/index arrays with the
    Ellipsis expanded."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        if isinstance(k, list):
            k = np.asarray(k)
        if isinstance(k, np.ndarray) and k.dtype.kind not in "biu":
            if k.size == 0:
                k = k.astype(np.int64)
            else:
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
        if isinstance(k, (np.ndarray, DeviceArray)) and k.dtype == np.bool_:
            items.extend(_nonzero(k, a._index))
            continue
        if isinstance(k, np.ndarray):
            k = DeviceArray.from_host(k.astype(np.int64, copy=False), a._index)
        elif type(k) is DeviceArray:
            if k._index != a._index:
                raise mixed_device_error(a.device, k.device)
            if k.dtype.kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
        items.append(k)
    used = sum(1 for k in items if k is not None and k is not Ellipsis)
    if any(k is Ellipsis for k in items):
        at = next(i for i, k in enumerate(items) if k is Ellipsis)
        items[at:at + 1] = [slice(None)] * (a.ndim - used)
    elif used < a.ndim:
        items += [slice(None)] * (a.ndim - used)
    if sum(1 for k in items if k is not None) > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but "
                         f"{sum(1 for k in items if k is not None)} were indexed")
    return items


def _nonzero(mask, index):
    """A boolean mask's positions: the nonzero kernel for a device mask; a host mask's
    (host data) found on the host and copied over, as integer host indices are."""
    if type(mask) is DeviceArray:
        if mask._index != index:
            raise mixed_device_error(cr.device("cuda", index), mask.device)
        return list(np.nonzero(mask))
    return [DeviceArray.from_host(p.astype(np.int64), index) for p in np.nonzero(mask)]


def _basic(a, items):
    """The view the basic part of the key selects, and [(view dim, index array)] for
    the advanced part (those dims are kept whole in the view)."""
    shape, est, offset, advanced = [], [], 0, []
    dim = 0
    for k in items:
        if k is None:
            shape.append(1)
            est.append(0)
        elif isinstance(k, slice):
            n, s = a.shape[dim], a._est[dim]
            start, stop, step = k.indices(n)
            count = len(range(start, stop, step))
            offset += start * s if count else 0
            shape.append(count)
            est.append(s * step)
            dim += 1
        elif type(k) is DeviceArray:
            advanced.append((len(shape), k, a.shape[dim]))
            shape.append(a.shape[dim])
            est.append(a._est[dim])
            dim += 1
        else:
            i = int(k)
            n = a.shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            offset += (i + n if i < 0 else i) * a._est[dim]
            dim += 1
    return a._restride(tuple(shape), tuple(est), offset), advanced


def getitem(a, key):
    view, advanced = _basic(a, _normalize(a, key))
    if not advanced:
        return view
    offsets, shape = _offsets(view, advanced)
    out = DeviceArray.empty(shape, a.dtype, a._index)
    if out.size:
        flat, start = _span(view)
        K.gather(out.reshape(-1), flat, 0, offsets.reshape(-1) - start if start else
                 offsets.reshape(-1))
    return out


def _span(view):
    """The 1-D memory span the view covers (stride 1) and the offset of its first
    element relative to the view's element [0, ...] (<= 0)."""
    lo = sum(min(0, (n - 1) * s) for n, s in zip(view.shape, view._est) if n)
    hi = sum(max(0, (n - 1) * s) for n, s in zip(view.shape, view._est) if n)
    flat = DeviceArray._view(view._mem, view._ptr + lo * view.itemsize, (hi - lo + 1,), (1,),
                             view.dtype, view._index)
    return flat, lo


def _checked(index, n, axis):
    """``index`` wrapped into [0, n), raising NumPy's IndexError when out of range."""
    bad = np.logical_or(index < -n, index >= n)
    if index.size and bad.any().item():
        value = index.get()[bad.get()].reshape(-1)[0]
        raise IndexError(f"index {value} is out of bounds for axis {axis} with size {n}")
    return np.where(index < 0, index + n, index)


def _offsets(view, advanced):
    """Note [indexing by offsets]: the offsets array and the result's shape."""
    arrays = [_checked(ix, n, d) for d, ix, n in advanced]
    bshape = np.broadcast_shapes(*[ix.shape for ix in arrays])
    adv_dims = [d for d, _, _ in advanced]
    rest = [d for d in range(view.ndim) if d not in adv_dims]
    adjacent = adv_dims == list(range(adv_dims[0], adv_dims[0] + len(adv_dims)))
    before = [d for d in rest if adjacent and d < adv_dims[0]]
    after = [d for d in rest if d not in before]
    shape = tuple(view.shape[d] for d in before) + bshape + tuple(view.shape[d] for d in after)
    lead, trail = len(before), len(after)
    total = None
    for (d, _, _), ix in zip(advanced, arrays):
        term = ix.astype(np.int64) * view._est[d]
        total = term if total is None else total + term
    total = np.broadcast_to(total, bshape).reshape((1,) * lead + bshape + (1,) * trail)
    for pos, d in enumerate(before + after):
        at = pos if pos < lead else pos + len(bshape)
        step = np.arange(view.shape[d], like=total) * view._est[d]
        total = total + step.reshape(tuple(-1 if i == at else 1 for i in range(len(shape))))
    return np.broadcast_to(total, shape).copy(), shape


def _value(a, value):
    if type(value) is DeviceArray:
        if value._index != a._index:
            raise mixed_device_error(a.device, value.device)
        return value
    if isinstance(value, np.ndarray) and value.ndim:
        raise mixed_device_error(a.device, cr.device("cpu"))
    if isinstance(value, (list, tuple)):
        return DeviceArray.from_host(np.asarray(value, a.dtype), a._index)
    return value


def setitem(a, key, value):
    value = _value(a, value)
    view, advanced = _basic(a, _normalize(a, key))
    if not advanced:
        _assign(view, value)
        return
    offsets, shape = _offsets(view, advanced)
    if not offsets.size:
        return
    flat, start = _span(view)
    offsets = offsets.reshape(-1) - start if start else offsets.reshape(-1)
    values = _broadcast_value(value, shape, a).reshape(-1)
    _scatter_assign(flat, offsets, values)


def _assign(view, value):
    if not view.size:
        return
    if type(value) is DeviceArray:
        K.copy(view, value.broadcast_to(view.shape) if value.shape != view.shape else value)
    else:
        K.fill(view, value)


def _broadcast_value(value, shape, a):
    if type(value) is not DeviceArray:
        out = DeviceArray.empty(shape, a.dtype, a._index)
        out.fill(value)
        return out
    out = DeviceArray.empty(shape, a.dtype, a._index)
    K.copy(out, value.broadcast_to(shape))
    return out


def _as_scatterable(x):
    """bool memory scatters as uint8 (the same bytes)."""
    return x.view(np.uint8) if x.dtype == np.bool_ else x


def _scatter_assign(flat, offsets, values):
    """flat[offsets] = values (no scatter-overwrite kernel: the touched positions and
    the placed values are scattered into zeros, then selected with ``where``; exact,
    infinities and NaNs included)."""
    touched = zeros(flat.shape, np.int32, flat._index)
    ones = DeviceArray.empty(offsets.shape, np.int32, flat._index)
    ones.fill(1)
    K.scatter_add(touched, 0, offsets, ones)
    placed = zeros(flat.shape, flat.dtype, flat._index)
    K.scatter_add(_as_scatterable(placed), 0, offsets, _as_scatterable(values))
    if flat.dtype != np.bool_:      # a position written n times holds n values: their mean
        divide = np.floor_divide if flat.dtype.kind in "iu" else np.true_divide
        placed = np.where(touched > 1, divide(placed, np.maximum(touched, 1)), placed)
    np.copyto(flat, np.where(touched > 0, placed, flat))


def _index_device(*values):
    for v in values:
        for x in (v if isinstance(v, tuple) else (v,)):
            if type(x) is DeviceArray:
                return x.device
    return cr.device("cuda", 0)


def ufunc_at(ufunc, a, key, values=None):
    """``ufunc.at(a, key, values)``: unbuffered in-place updates at the key's elements
    (add through a scatter-add; multiply, maximum, minimum by runs of equal offsets)."""
    if type(a) is not DeviceArray:
        raise mixed_device_error(_index_device(key, values), cr.device("cpu"))
    if ufunc not in (np.add, np.multiply, np.maximum, np.minimum, np.fmax, np.fmin):
        raise TypeError(f"{ufunc.__name__}.at is not supported on DeviceArrays")
    view, advanced = _basic(a, _normalize(a, key))
    if not advanced:
        ufunc(view, values, out=view)
        return None
    offsets, shape = _offsets(view, advanced)
    if offsets.size:
        flat, start = _span(view)
        offsets = offsets.reshape(-1) - start if start else offsets.reshape(-1)
        values = _broadcast_value(_value(a, values), shape, a).reshape(-1)
        if ufunc is np.add:
            K.scatter_add(flat, 0, offsets, values)
        else:
            _reduce_runs_at(ufunc, flat, offsets, values)
    return None


def _reduce_runs_at(ufunc, flat, offsets, values):
    """flat[o] = ufunc(flat[o], every value at offset o), for a commutative ``ufunc``
    with no scatter kernel: the values sorted by offset (the stable sort kernel), each
    run of equal offsets reduced by a log-step inclusive scan (after the step of
    width s, an element holds its run's values from s back), and each run's last
    element, found by the nonzero kernel, combined with its target once."""
    order = np.argsort(offsets)
    keys, run = offsets[order], values[order]
    n, step = keys.shape[0], 1
    while step < n:
        same = keys[step:] == keys[:-step]
        run = np.concatenate([run[:step], np.where(same, ufunc(run[step:], run[:-step]),
                                                   run[step:])])
        step *= 2
    last = np.concatenate([keys[1:] != keys[:-1], np.ones((1,), np.bool_, like=keys)])
    ends = np.nonzero(last)[0]
    targets = keys[ends]
    flat[targets] = ufunc(flat[targets], run[ends])
