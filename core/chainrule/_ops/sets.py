"""Set and counting functions: unique, unique_consecutive, bincount, bucketize,
searchsorted, isin, and mode.

Their integer outputs (indices, counts, positions) carry no gradient. ``mode``'s values
are gathered from the input at the computed indices, so gradients reach the input
(through gather and squeeze nodes, where the reference records one ModeBackward0).
``unique``'s values come back without history: the reference records a node whose
backward raises "not implemented"; here the values simply do not require grad.
"""
import numpy as np

from .. import _dtypes, return_types
from .._batched import refuse_dynamic_shape
from .._tensor import Tensor, asarray, on_device_of, zeros_on
from ._common import FUNCTIONS, as_tensor_arg, kernel_error, public, require_tensor, wrap_dims
from .reduction import _write_out
from . import _cpu_select as _select

F = FUNCTIONS


def _wrap(arr):
    arr = asarray(arr)                  # device arrays stay (Note [device arrays])
    return Tensor._wrap(arr if arr.flags.c_contiguous else arr.copy())


def _int64(arr):
    return _wrap(asarray(arr, np.dtype(np.int64)))


def _with_extras(values, inverse, counts, return_inverse, return_counts):
    out = (values,) + ((inverse,) if return_inverse else ()) + \
        ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def _real_only(a, kernel):
    """``a``, unless complex: the reference's sets have no complex kernel (Note [kernels
    without a dtype])."""
    if a.dtype.kind == "c":
        raise kernel_error(kernel)(a.dtype)
    return a


@public
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (sorted), optionally with each element's position among them
    (``return_inverse``) and how often each occurs (``return_counts``); with ``dim``,
    the distinct slices along it.

    >>> import chainrule as cr
    >>> cr.unique(cr.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    refuse_dynamic_shape(input, "aten::_unique2" if dim is None else "aten::unique_dim")
    a = _real_only(input._data, "unique")
    if dim is None:
        values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(a.shape)
    else:
        d = wrap_dims(dim, a.ndim)[0]
        values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1)
    return _with_extras(_wrap(values.astype(a.dtype, copy=False)), _int64(inverse),
                        _int64(counts), return_inverse, return_counts)


@public
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse each run of equal consecutive values (or slices along ``dim``) to one.

    >>> import chainrule as cr
    >>> cr.unique_consecutive(cr.tensor([1, 1, 2, 2, 3, 1, 1]))
    tensor([1, 2, 3, 1])
    """
    refuse_dynamic_shape(input, "aten::unique_consecutive")
    a = _real_only(input._data, "unique")
    if dim is None:
        flat, axis = a.reshape(-1), 0
    else:
        flat, axis = a, wrap_dims(dim, a.ndim)[0]
    n = flat.shape[axis]
    moved = np.moveaxis(flat, axis, 0).reshape(n, -1)
    starts = zeros_on((n,), bool, moved)
    starts[:1] = True
    starts[1:] = np.any(moved[1:] != moved[:-1], axis=1)
    run = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    values = np.take(flat, first, axis=axis)
    counts = np.diff(np.concatenate([first, zeros_on((1,), first.dtype, first) + n]))
    inverse = run.reshape(a.shape) if dim is None else run
    return _with_extras(_wrap(values), _int64(inverse), _int64(counts), return_inverse,
                        return_counts)


@public
def bincount(input, weights=None, minlength=0):
    """Occurrences of each value 0..max in a 1-D non-negative integer tensor, or the sum
    of ``weights`` at them; at least ``minlength`` bins.

    >>> import chainrule as cr
    >>> cr.bincount(cr.tensor([0, 1, 1, 3]))
    tensor([1, 2, 0, 1])
    """
    if weights is not None:
        require_tensor(weights, "bincount", "weights", 2)
    a = input._data
    if a.dtype.kind not in "iu":
        raise kernel_error("bincount_cpu")(a.dtype)
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _int64(np.bincount(a, minlength=minlength))
    w = weights._data
    if w.shape != a.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out_dtype = w.dtype if w.dtype.kind == "f" and w.dtype.itemsize >= 4 else np.float64
    return _wrap(np.bincount(a, weights=w, minlength=minlength).astype(out_dtype))


def _sorted_positions(boundaries, values, right, out_int32, side, sorter, name):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{name}(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{name}(): side and right can't be set to opposites, got "
                               f"side of left while right was True")
        right = side == "right"
    b = boundaries._data
    if b.dtype.kind == "b":
        raise kernel_error("searchsorted_out_cpu")(b.dtype)
    v = values._data if isinstance(values, Tensor) else np.asarray(values)
    if b.dtype.kind == "c" or v.dtype.kind == "c":     # no complex kernel (for the common dtype)
        common = _dtypes.promote_types(_dtypes.from_numpy_dtype(b.dtype),
                                       _dtypes.from_numpy_dtype(v.dtype))
        raise kernel_error("searchsorted_out_cpu")(common.np)
    how = "right" if right else "left"
    if b.ndim <= 1:
        order = None if sorter is None else sorter._data
        pos = np.searchsorted(b, v, side=how, sorter=order)
    else:
        if b.shape[:-1] != v.shape[:-1]:
            raise RuntimeError(f"{name}(): boundaries tensor should be 1 dimension or the first "
                               f"N-1 dimensions of boundaries tensor and input value tensor "
                               f"must match, but we got boundaries tensor {list(b.shape)} and "
                               f"input value tensor {list(v.shape)}")
        rows_b, rows_v = b.reshape(-1, b.shape[-1]), v.reshape(-1, v.shape[-1])
        pos = np.stack([np.searchsorted(rb, rv, side=how) for rb, rv in zip(rows_b, rows_v)])
        pos = pos.reshape(v.shape)
    return _wrap(asarray(pos, np.dtype(np.int32 if out_int32 else np.int64)))


@public(method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Where each value of ``input`` would go in ``sorted_sequence`` (its innermost
    dimension) to keep it sorted: the first such place, or the last with
    ``right=True`` / ``side="right"``.

    >>> import chainrule as cr
    >>> cr.searchsorted(cr.tensor([1, 3, 5, 7, 9]), cr.tensor([3, 6, 9]))
    tensor([1, 3, 4])
    """
    result = _sorted_positions(sorted_sequence, input, right, out_int32, side, sorter,
                               "searchsorted")
    return result if out is None else _write_out(result, out, "searchsorted")


@public(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each value given sorted 1-D ``boundaries`` (``searchsorted`` with
    the arguments swapped).

    >>> import chainrule as cr
    >>> cr.bucketize(cr.tensor([1, 5, 9]), cr.tensor([1, 3, 5, 7, 9]))
    tensor([0, 2, 4])
    """
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    result = _sorted_positions(boundaries, input, right, out_int32, None, None, "bucketize")
    return result if out is None else _write_out(result, out, "bucketize")


@public(method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element occurs in ``test_elements`` (either may be a scalar).

    >>> import chainrule as cr
    >>> cr.isin(cr.tensor([1, 2, 3, 4]), cr.tensor([2, 4]))
    tensor([False,  True, False,  True])
    """
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _wrap(np.isin(a, b, assume_unique=assume_unique, invert=invert))


@public
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (ties: the smallest) and the index of its
    last occurrence, as a named tuple ``(values, indices)``; gradients flow to the
    chosen entries.

    >>> import chainrule as cr
    >>> cr.mode(cr.tensor([[1., 2., 2., 3.], [4., 4., 1., 1.]])).indices
    tensor([2, 3])
    """
    input = as_tensor_arg(input)
    a = _real_only(input._data, "mode_cpu")
    d = wrap_dims(dim, a.ndim)[0] if a.ndim else 0
    n = a.shape[d] if a.ndim else 1
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    rows = np.moveaxis(a.reshape(a.shape or (1,)), d, -1)
    index = _mode_indices(rows.reshape(-1, n)).reshape(rows.shape[:-1])
    index = np.expand_dims(index, d) if a.ndim else index.reshape(())
    index = _select.with_reference_ties(                  # Note [ties on the CPU]
        a, d, index, lambda ranks: [_select.mode_row(ranks)])
    if not a.ndim:
        return return_types.mode(input.clone(), _int64(index))
    values = F["gather"](input, d, _int64(index))
    if not keepdim:
        values, index = F["squeeze"](values, d), np.squeeze(index, d)
    return return_types.mode(values, _int64(index))


def _mode_indices(rows):
    """Per row: the index of the last occurrence of the most frequent value (ties: the
    smallest value), found from one stable sort of every row."""
    r, n = rows.shape
    order = np.argsort(rows, axis=1, kind="stable")
    s = np.take_along_axis(rows, order, 1)
    starts = zeros_on((r, n), bool, rows)
    starts[:, :1] = True
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    row = on_device_of(np.arange(r), rows)
    run = np.cumsum(starts, axis=1) - 1 + row[:, None] * n
    counts = np.bincount(run.reshape(-1), minlength=r * n)[run]
    first = np.argmax(counts, axis=1)               # start of the first longest run
    last = first + counts[row, first] - 1           # stable sort: its last original index
    return order[row, last]
