"""Derivative table: indexing (``__getitem__``/``__setitem__``, select, narrow,
index_select, index_add, gather, scatter, scatter_add, masked_fill, index_put).

Note [basic and advanced indexing]
    Like the reference, ``x[key]`` first applies the basic parts of the key, in
    order, as views: an int is ``select`` (SelectBackward0), a slice ``slice``
    (SliceBackward0; steps > 0 only), None ``unsqueeze``, ``...`` skips dims. What is
    left, integer/bool index arrays (Tensors, lists, ndarrays) with full slices
    between them, is one advanced ``index`` op: a copy (IndexBackward0) with NumPy's
    placement rules, whose backward adds the gradient back with ``np.add.at`` so
    repeated indices accumulate. ``x[key] = v`` goes the same way: the basic part
    gives a view that is written with ``copy_``/``fill_`` (the root gets CopySlices,
    Note [rebasing after in-place on a view]); an advanced part is ``index_put_``.
"""
import math

import numpy as np

from .._tensor import asarray, zeros_on
from .. import _grad_mode, _legacy_slots
from .._legacy_slots import ZeroDimIndexError
from .._dtypes import checked_integer, cpp_type_name, scalar_type_name
from .._batched import BatchedTensor, refuse_dynamic_shape, unwrap_all
from .._tensor import Tensor
from ..autograd import saved_hooks as _saved_hooks
from ..autograd import tangent_slot as _tangent_slot
from ..autograd.graph import _before_inplace_mutation
from ..autograd.saved_guard import unlocked_for_inplace
from ._common import (EMPTY, FUNCTIONS, as_tensor_arg, broadcast_error, check_inplace,
                      commit_inplace,
                      formula_helper, method, public, require_tensors, wrap_dim)
from ._formula_helpers import helper
from ._namespaces import array_fn
from ._out import write_out
from ._registry import NONDIFF, apply_op, defop, not_implemented
from .views import check_view_write, make_view, rebase_inplace
from .shape import (_alias, _check_scatter_src, _dual, _expanded_shape, legacy_type_name,
                    select_array, tril, triu, unsqueeze)

# --- the table -----------------------------------------------------------------------
SELECT = defop("select", select_array,
               attrs=("dim", "index"),
               vjp=(lambda F, g, self_shape, dim, index:
                    F.select_backward(g, self_shape, dim, index),),
               jvp=lambda F, t, dim, index: F.select(t[0], dim, index))
SLICE = defop("slice", lambda a, dim, start, end, step: _slice_array(a, dim, start, end, step),
              attrs=("dim", "start", "end", "step"),
              vjp=(lambda F, g, self_shape, dim, start, end, step:
                   F.slice_backward(g, self_shape, dim, start, end, step),),
              jvp=lambda F, t, dim, start, end, step: F._slice(t[0], dim, start, end, step))
INDEX = defop("index", lambda a, key: _index_array(a, key), attrs=("key",),
              vjp=(lambda F, g, self_shape, key:
                   F._index_put(F._new_zeros(g, self_shape), key, g, True),),
              jvp=lambda F, t, key: F._index(t[0], key))
INDEX_PUT = defop("index_put", lambda a, v, key, accumulate, inplace:
                  _index_put_array(a, key, v, accumulate, inplace),
                  inputs=("self", "values"), attrs=("key", "accumulate", "inplace"),
                  vjp=(lambda F, g, key, accumulate: g if accumulate else
                       F._index_put(g, key, F._new_zeros(g, ()), False),
                       lambda F, g, key: F._index(g, key)),
                  jvp=lambda F, t, key, accumulate: F._index_put(t[0], key, t[1], accumulate))
INDEX_SELECT = defop("index_select", lambda a, i, dim: _index_select_array(a, dim, i),
                     inputs=("self", "index"), attrs=("dim",),
                     vjp=(lambda F, g, self_shape, dim, index:
                          F.index_add(F._new_zeros(g, self_shape), dim, index, g), NONDIFF),
                     jvp=lambda F, t, dim, index: F.index_select(t[0], dim, index))
INDEX_ADD = defop("index_add", lambda a, i, s, dim, alpha: index_add_array(a, dim, i, s, alpha),
                  inputs=("self", "index", "source"), attrs=("dim", "alpha"),
                  vjp=(lambda F, g: g, NONDIFF,
                       lambda F, g, dim, index, alpha: F.index_select(g, dim, index)
                       if alpha == 1 else F.index_select(g, dim, index) * F.conj_scalar(alpha)),
                  jvp=lambda F, t, dim, index, alpha:
                  F.index_add(t[0], dim, index, t[2], alpha=alpha))
GATHER = defop("gather", lambda a, i, dim: gather_array(a, dim, i), inputs=("self", "index"),
               attrs=("dim",),
               vjp=(lambda F, g, self_shape, dim, index:
                    F.scatter_add(F._new_zeros(g, self_shape), dim, index, g), NONDIFF),
               jvp=lambda F, t, dim, index: F.gather(t[0], dim, index))
SCATTER_ADD = defop("scatter_add", lambda a, i, s, dim: scatter_add_array(a, dim, i, s),
                    inputs=("self", "index", "src"), attrs=("dim",),
                    vjp=(lambda F, g: g, NONDIFF,
                         lambda F, g, src_shape, dim, index:
                         F.pad_grad(F.gather(g, dim, index), src_shape)),
                    jvp=lambda F, t, dim, index: F.scatter_add(t[0], dim, index, t[2]))
SCATTER = defop("scatter", lambda a, i, s, dim: scatter_array(a, dim, i, s),
                inputs=("self", "index", "src"), attrs=("dim",),
                vjp=(lambda F, g, dim, index: F.scatter(g, dim, index, 0), NONDIFF,
                     lambda F, g, src_shape, dim, index:
                     F.pad_grad(F.gather(g, dim, index), src_shape)),
                jvp=lambda F, t, dim, index: F.scatter(t[0], dim, index, t[2]))
# Like the reference, scatter with reduce="multiply" computes values but has no
# derivative (its backward raises "not implemented").
_NO_SCATTER_DERIVATIVE = not_implemented(aten="scatter")     # reduce="multiply"
SCATTER_MULTIPLY = defop("scatter_multiply",
                         lambda a, i, s, dim: scatter_multiply_array(a, dim, i, s),
                         inputs=("self", "index", "src"), attrs=("dim",),
                         node_name="NotImplemented",
                         vjp=(_NO_SCATTER_DERIVATIVE, NONDIFF, _NO_SCATTER_DERIVATIVE),
                         jvp=_NO_SCATTER_DERIVATIVE)
SCATTER_VALUE = defop("scatter_value", lambda a, i, dim, value: scatter_array(a, dim, i, value),
                      inputs=("self", "index"), attrs=("dim", "value"),
                      node_name="ScatterBackward1",
                      vjp=(lambda F, g, dim, index: F.scatter(g, dim, index, 0), NONDIFF),
                      jvp=lambda F, t, dim, index: F.scatter(t[0], dim, index, 0))
MASKED_FILL = defop("masked_fill", lambda a, m, value: masked_fill_array(a, m, value),
                    inputs=("self", "mask"), attrs=("value",),
                    vjp=(lambda F, g, mask: F.masked_fill(g, mask, 0), NONDIFF),
                    jvp=lambda F, t, mask: F.masked_fill(t[0], mask, 0))
MASKED_FILL_TENSOR = defop("masked_fill_tensor", lambda a, m, v: masked_fill_array(a, m, v),
                           inputs=("self", "mask", "value"), node_name="MaskedFillBackward1",
                           vjp=(lambda F, g, mask: F.masked_fill(g, mask, 0), NONDIFF,
                                lambda F, g, mask:
                                F.sum(F.where(mask, g, F._new_zeros(g, ())))),
                           jvp=lambda F, t, mask: F.where(mask, t[2], t[0]))


@helper
def select_backward(F, g, self_shape, dim, index):
    """Gradient of select: ``g`` written into that slice of zeros."""
    out = F._new_zeros(g, self_shape)
    F._write_into(F.select(out, dim, index), g)
    return out


@helper
def slice_backward(F, g, self_shape, dim, start, end, step):
    out = F._new_zeros(g, self_shape)
    F._write_into(F._slice(out, dim, start, end, step), g)
    return out


@helper
def pad_grad(F, grad, shape):
    """``grad`` zero-padded at the end of each dim up to ``shape`` (src may be larger
    than index in scatter ops; only the index-shaped corner was used)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    corner = tuple(slice(0, n) for n in grad.shape)
    return F._index_put(F._new_zeros(grad, shape), corner, grad, False)


# --- ndarray kernels -----------------------------------------------------------------
def _slice_array(a, dim, start, end, step):
    return a[(slice(None),) * dim + (slice(start, end, step),)]


def _index_select_array(a, dim, index):
    if a.ndim == 0:
        return a.copy()
    return np.take(a, index.reshape(-1), axis=dim)


def _index_array(a, key):
    out = a[key]
    return out.copy() if np.may_share_memory(out, a) else out


def _index_put_array(a, key, values, accumulate, inplace):
    out = a if inplace else a.copy()
    try:
        if accumulate:
            np.add.at(out, key, values)
        else:
            out[key] = values
    except ValueError:
        target = np.empty(a.shape, np.int8)[key].shape
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(values))} "
                           f"cannot be broadcast to indexing result of shape {list(target)}"
                           ) from None
    return out


def index_add_array(a, dim, index, source, alpha=1):
    out = a.copy()
    source = source if alpha == 1 else source * alpha
    if a.ndim == 0:
        out += source.reshape(())
    else:
        np.add.at(out, (slice(None),) * dim + (index.reshape(-1),), source)
    return out


def _corner(a, shape, skip=None):
    """The leading block of ``a`` with ``shape`` (dims other than ``skip``)."""
    return a[tuple(slice(None) if d == skip else slice(0, n) for d, n in enumerate(shape))]


def _scatter_key(index, dim):
    key = list(np.indices(index.shape, sparse=True))
    key[dim] = index
    return tuple(key)


def _copy_to_write(a):
    """A copy of ``a`` that writes can go into (through ``reshape(-1)`` too): an array
    even where ``a`` is a NumPy scalar, what arithmetic on 0-d arrays gives the
    formulas."""
    return asarray(a).copy()


def gather_array(a, dim, index):
    if index.ndim != a.ndim or a.ndim == 0:   # 0-d and 1-d mixed: both are vectors
        return np.take(a.reshape(-1), index)
    return np.take_along_axis(_corner(a, index.shape, dim), index, axis=dim)


def _scatter_target(out, dim, index, src):
    """Where scatter writes in ``out`` and the values (``src``'s used corner)."""
    if getattr(src, "ndim", 0):                 # an ndarray or a device array
        src = _corner(src, index.shape) if src.ndim == index.ndim else src.reshape(-1)[:1]
    if index.ndim != out.ndim or out.ndim == 0:   # 0-d and 1-d mixed: both vectors
        return out.reshape(-1), (index.reshape(-1),), np.reshape(src, -1)
    return out, _scatter_key(index, dim), src


def scatter_add_array(a, dim, index, src):
    out = _copy_to_write(a)
    target, key, values = _scatter_target(out, dim, index, src)
    np.add.at(target, key, values)
    return out


def scatter_multiply_array(a, dim, index, src):
    out = _copy_to_write(a)
    target, key, values = _scatter_target(out, dim, index, src)
    np.multiply.at(target, key, values)
    return out


def scatter_array(a, dim, index, src):
    out = _copy_to_write(a)
    target, key, values = _scatter_target(out, dim, index, src)
    target[key] = values
    return out


def masked_fill_array(a, mask, value):
    value = asarray(value)
    if value.dtype != a.dtype:
        value = value.astype(a.dtype)
    return np.where(mask, value, a)


# ARRAY_NS twins of the functions the formulas call.
array_fn("_slice")(_slice_array)
array_fn("_index")(lambda x, key: x[key])
array_fn("_index_put")(lambda x, key, values, accumulate=False:
                       _index_put_array(x, key, values, accumulate, False))
array_fn("index_select")(lambda x, dim, index: _index_select_array(x, dim, index))
array_fn("index_add")(index_add_array)
array_fn("gather")(gather_array)
array_fn("scatter_add")(scatter_add_array)
array_fn("scatter")(scatter_array)
array_fn("masked_fill")(masked_fill_array)


# --- select, narrow, slice -------------------------------------------------------------
@public
def select(input, dim, index):
    """The slice at ``index`` along ``dim``, that dimension removed (a view).

    >>> import chainrule as cr
    >>> cr.arange(6).view(2, 3).select(1, 0).tolist()
    [0, 3]
    """
    shape = input._data.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    i = index.__index__()
    if not -shape[d] <= i < shape[d]:
        raise IndexError(f"select(): index {i} out of range for tensor of size {list(shape)} "
                         f"at dimension {d}")
    return _select(input, d, i % shape[d])


def _select(input, d, i):
    return make_view(SELECT, input, {"dim": d, "index": i}, _dual(select_array, _select, d, i))


@public
def narrow(input, dim, start, length):
    """Elements ``start .. start + length`` along ``dim`` (a view).

    >>> import chainrule as cr
    >>> cr.arange(5).narrow(0, 1, 3).tolist()
    [1, 2, 3]
    """
    shape = input._data.shape
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    start, length, n = start.__index__(), length.__index__(), shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but "
                         f"got {start})")
    start = start + n if start < 0 else start
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice(input, d, start, start + length, 1)


@formula_helper
def _slice(input, dim, start, end, step):
    """``input[..., start:end:step]`` at ``dim`` (bounds already normalised): a view."""
    attrs = {"dim": dim, "start": start, "end": end, "step": step}
    return make_view(SLICE, input, attrs, _dual(_slice_array, _slice, dim, start, end, step))


# --- __getitem__ -------------------------------------------------------------------------
def _is_int(k):
    if isinstance(k, (bool, np.bool_)):
        return False
    if isinstance(k, (int, np.integer)):
        return True
    return isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu"


def _is_bool_scalar(k):
    if isinstance(k, (bool, np.bool_)):
        return True
    return isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype == np.bool_


def _as_index_array(k):
    """An advanced index as an ndarray of int64 or bool."""
    if not isinstance(k, (Tensor, np.ndarray, list, tuple, range)):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         f"Variables are valid indices (got {type(k).__name__})")
    arr = k._data if isinstance(k, Tensor) else asarray(k)
    if type(k) is BatchedTensor and arr.dtype in (np.bool_, np.uint8):
        raise RuntimeError("vmap: We do not support batching operators that can support "
                           "dynamic shape. Attempting to batch over indexing with a boolean "
                           "mask.")
    if arr.dtype == np.uint8:
        arr = arr.astype(bool)
    if arr.dtype.kind == "f" and arr.size == 0 and not isinstance(k, Tensor):
        arr = arr.astype(np.int64)            # [] is an empty integer index
    if arr.dtype.kind not in "iub" or (isinstance(k, Tensor) and arr.dtype.kind == "i" and
                                        arr.dtype.itemsize < 4):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return arr


def _expand_key(key, ndim):
    """The key as a list, Ellipsis replaced by full slices, checked for length."""
    key = list(key) if isinstance(key, tuple) else [key]
    consumed = 0
    for k in key:
        if k is None or k is Ellipsis or _is_bool_scalar(k):
            continue
        if isinstance(k, (Tensor, np.ndarray, list, range)):    # a range is a list of ints
            arr = _as_index_array(k)
            consumed += arr.ndim if arr.dtype == bool else 1
        else:
            consumed += 1
    ellipses = [i for i, k in enumerate(key) if k is Ellipsis]   # (no ==: keys hold Tensors)
    if len(ellipses) > 1:       # (torch accepts some such keys, inconsistently; NumPy's rule)
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        if ndim == 0:
            raise ZeroDimIndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                             "or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a "
                             "number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if ellipses:
        i = ellipses[0]
        key[i:i + 1] = [slice(None)] * (ndim - consumed)
    return key


def _apply_basic(t, key):
    """Apply the basic parts of ``key`` as views; return the view and what is left for
    the advanced ``index`` op (None when nothing is)."""
    rest, dim, advanced = [], 0, False
    for position, k in enumerate(key):
        if type(k) is slice:                 # the commonest first: one check
            t = _apply_slice(t, dim, k, len(key) == 1)
            rest.append(slice(None))
            dim += 1
        elif _is_int(k):
            n = t._data.shape[dim]
            i = k.__index__()
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {position} with "
                                 f"size {n}")
            t = _select(t, dim, i % n)
        elif isinstance(k, slice):
            t = _apply_slice(t, dim, k, len(key) == 1)
            rest.append(slice(None))
            dim += 1
        elif k is None:
            t = unsqueeze(t, dim)
            rest.append(slice(None))
            dim += 1
        elif _is_bool_scalar(k):
            t = unsqueeze(t, dim)
            rest.append(np.zeros(1 if bool(k) else 0, np.int64))
            dim, advanced = dim + 1, True
        else:
            dim = _append_advanced(rest, _as_index_array(k), t._data.shape, dim)
            advanced = True
    return t, (tuple(rest) if advanced else None)


def _apply_slice(t, dim, k, always):
    n = t._data.shape[dim]
    start, stop, step = k.indices(n) if k.step is None or k.step > 0 else (0, 0, k.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    stop = max(stop, start)
    if not always and start == 0 and stop == n and step == 1:
        return t                              # a full slice inside a tuple: nothing to do
    return _slice(t, dim, start, stop, step)


def _append_advanced(rest, arr, shape, dim):
    if arr.dtype != bool:
        rest.append(arr.astype(np.int64, copy=False))
        return dim + 1
    for j, m in enumerate(arr.shape):
        if dim + j >= len(shape) or shape[dim + j] != m:
            raise IndexError(f"The shape of the mask {list(arr.shape)} at index {j} does not "
                             f"match the shape of the indexed tensor {list(shape)} at index "
                             f"{dim + j}")
    rest.extend(np.nonzero(arr) if arr.ndim else (np.zeros(int(arr), np.int64),))
    return dim + max(arr.ndim, 1)


def _index(input, key):
    """The advanced ``index`` op (a copy; repeated indices accumulate in backward)."""
    while key and isinstance(key[-1], slice):
        key = key[:-1]
    try:
        return apply_op(INDEX, (input,), {"key": key})
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None


formula_helper(_index)


_BASIC_TYPE = frozenset((int, slice, type(None))).__contains__


def _only_basic(key, ndim):
    """Whether ``key`` (a tuple) holds only ints, slices and None, no more than
    ``ndim`` of them indexing: ``_expand_key`` would leave it as it is."""
    return all(map(_BASIC_TYPE, map(type, key))) and len(key) - key.count(None) <= ndim


def getitem(self, key):
    """``self[key]``: basic indexing gives views, advanced indexing a copy (Note
    [basic and advanced indexing]).

    >>> import chainrule as cr
    >>> x = cr.arange(6).view(2, 3)
    >>> x[1, ::2].tolist(), x[:, [2, 2]].tolist()
    ([3, 5], [[2, 2], [5, 5]])
    """
    if type(key) is int and self._data.ndim:       # the most common case, kept short
        n = self._data.shape[0]
        if not -n <= key < n:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {n}")
        return _select(self, 0, key % n)
    if type(key) is slice and self._data.ndim:
        return _apply_slice(self, 0, key, True)
    if type(key) is tuple and _only_basic(key, self._data.ndim):
        view = _apply_basic(self, key)[0]
        return _alias(self) if view is self else view
    try:
        expanded = _expand_key(key, self._data.ndim)
    except ZeroDimIndexError:                        # Note [zero-dim index slot]
        if _legacy_slots.ZERO_DIM_INDEX is None:
            raise
        return _legacy_slots.ZERO_DIM_INDEX(self, key, 2)
    view, rest = _apply_basic(self, expanded)
    if rest is not None:
        return _index(view, rest)
    if view is self:
        return _alias(self)
    return view


Tensor.__getitem__ = getitem


# --- __setitem__ and index_put -----------------------------------------------------------
def setitem(self, key, value):
    """``self[key] = value``: writes in place (version bump); gradients flow to
    ``value`` and, outside the written part, to the old contents.

    >>> import chainrule as cr
    >>> x = cr.zeros(2, 3); x[0, 1:] = 1.0; x[[1, 1], [0, 2]] = cr.tensor([2., 3.])
    >>> x.tolist(), x._version
    ([[0.0, 1.0, 1.0], [2.0, 0.0, 3.0]], 2)
    """
    if type(key) in (int, slice) and type(value) in (int, float, bool) and \
            _plain_write_ok(self):
        _write_plain(self, key, value)
        return
    _refuse_byte_mask_fill(key if isinstance(key, tuple) else (key,), value)
    view, rest = _apply_basic(self, _expand_key(key, self._data.ndim))
    if rest is None:
        if isinstance(value, (bool, int, float, complex, np.number)):
            view.fill_(value)
        else:
            value = _strip_leading_ones(_value_tensor(value, view), view._data.ndim)
            _check_expandable(value, view._data.shape)
            view.copy_(value)
        return
    while rest and isinstance(rest[-1], slice):
        rest = rest[:-1]
    _index_put_inplace(view, rest, _value_tensor(value, view), False)


Tensor.__setitem__ = setitem


def _refuse_byte_mask_fill(indices, value):
    """A lone byte mask with one value: the reference fills through masked_fill_, which
    takes bool masks only (a byte mask still reads, with a deprecation warning)."""
    if len(indices) == 1 and isinstance(indices[0], Tensor) and \
            indices[0]._data.dtype == np.uint8 and \
            (not isinstance(value, Tensor) or value._data.ndim == 0):
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "unsigned char")


def _plain_write_ok(t):
    """Whether ``t[key] = number`` may skip the graph machinery: nothing records, and
    t is a root whose memory may be written directly."""
    return (not t._requires_grad or not _grad_mode.STATE.grad_enabled) and \
        t._base is None and t._data.flags.writeable and t._data.ndim > 0 and \
        not _saved_hooks.ACTIVE[0]


def _write_plain(t, key, value):
    check_inplace(t)
    if type(key) is int:
        n = t._data.shape[0]
        if not -n <= key < n:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {n}")
    elif key.step is not None and key.step <= 0:
        raise ValueError("step must be greater than zero")
    if type(value) is int and not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    t._data[key] = checked_integer(value, t._data.dtype)   # Note [checked integer conversion]
    t._bump_version()


def _value_tensor(value, like):
    if isinstance(value, Tensor):
        return value
    return Tensor._wrap(asarray(value, dtype=like._data.dtype))


def _strip_leading_ones(value, ndim):
    shape = value._data.shape
    lead = 0
    while len(shape) - lead > ndim and shape[lead] == 1:
        lead += 1
    return FUNCTIONS["reshape"](value, shape[lead:]) if lead else value


def _check_expandable(value, shape):
    """The reference's message when ``value`` does not broadcast to the target."""
    have = value._data.shape
    if have != shape:
        lead = len(shape) - len(have)
        if lead < 0:
            raise RuntimeError(f"expand({legacy_type_name(value)}{{{list(have)}}}, size="
                               f"{list(shape)}): the number of sizes provided ({len(shape)}) "
                               "must be greater or equal to the number of dimensions in the "
                               f"tensor ({len(have)})")
        _expanded_shape(have, shape, lead)


def _index_put_inplace(t, key, values, accumulate):
    """index_put_ without copying ``t``: the forward writes into t's memory."""
    if type(t) is BatchedTensor or type(values) is BatchedTensor:   # inside vmap
        return commit_inplace(t, apply_op(INDEX_PUT, (t, values), {
            "key": key, "accumulate": accumulate, "inplace": False}))
    if values._data.dtype != t._data.dtype:
        values = values.to(t.dtype)
    records = _grad_mode.STATE.grad_enabled and (t._requires_grad or values._requires_grad)
    check_inplace(t)
    if _saved_hooks.ACTIVE[0]:
        _before_inplace_mutation(t)
    if t._base is not None or not t._data.flags.writeable:    # views, and a detached one
        check_view_write(t, records)
    attrs = {"key": key, "accumulate": accumulate, "inplace": True}
    try:
        with unlocked_for_inplace(t):           # Note [read-only saved arrays]
            result = apply_op(INDEX_PUT, (t, values), attrs)
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    t._bump_version()
    if result.grad_fn is not None:
        rebase_inplace(t, result)
    if _tangent_slot.SLOT is not None:          # Note [tangent slot]
        _tangent_slot.SLOT.inplace(t, result)
    return t


def _key_from_indices(indices):
    key = []
    for idx in indices:
        if idx is None:
            key.append(slice(None))
            continue
        arr = _as_index_array(idx)
        key.extend(np.nonzero(arr) if arr.dtype == bool else (arr.astype(np.int64, copy=False),))
    return tuple(key)


@public
def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` put at ``indices`` (a tuple of index
    tensors, as in ``input[indices] = values``); ``accumulate`` adds instead.

    >>> import chainrule as cr
    >>> cr.index_put(cr.zeros(3), (cr.tensor([0, 0]),), cr.tensor(1.), True).tolist()
    [2.0, 0.0, 0.0]
    """
    values = as_tensor_arg(values, "values")
    _same_dtype("Index put", input, values)
    _refuse_byte_mask_fill(tuple(indices), values)
    return apply_op(INDEX_PUT, (input, values), {"key": _key_from_indices(indices),
                                                  "accumulate": bool(accumulate),
                                                  "inplace": False})


@method("index_put_")
def index_put_(self, indices, values, accumulate=False):
    """In-place ``index_put`` (bumps the version).

    >>> import chainrule as cr
    >>> cr.zeros(3).index_put_((cr.tensor([2]),), cr.tensor(5.)).tolist()
    [0.0, 0.0, 5.0]
    """
    values = as_tensor_arg(values, "values")
    _same_dtype("Index put", self, values)
    _refuse_byte_mask_fill(tuple(indices), values)
    return _index_put_inplace(self, _key_from_indices(indices), values, bool(accumulate))


def _same_dtype(what, dst, src):
    if dst._data.dtype != src._data.dtype:
        raise RuntimeError(f"{what} requires the source and destination dtypes match, got "
                           f"{scalar_type_name(dst._data.dtype)} for the destination and "
                           f"{scalar_type_name(src._data.dtype)} for the source.")


@formula_helper
def _index_put(input, key, values, accumulate=False):
    """Out-of-place index_put with a ready key (formulas)."""
    if not isinstance(values, Tensor):
        values = Tensor._wrap(asarray(values, input._data.dtype))
    return apply_op(INDEX_PUT, (input, values), {"key": key, "accumulate": accumulate,
                                                  "inplace": False})


# --- index_select, index_add, gather, scatter ----------------------------------------------
def _index_tensor(index, name, allow_matrix=True):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not "
                        f"{type(index).__name__}")
    if index._data.dtype not in (np.int64, np.int32):
        if name == "index_add":
            raise RuntimeError("index_add_(): Expected dtype int32/int64 for index but got: "
                               f"{scalar_type_name(index._data.dtype)}")
        name = _INDEX_CHECK_NAMES.get(name, name)         # the reference's shared checks
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index" if allow_matrix
                           else f"{name}(): Expected dtype int32 or int64 for index")
    return index


_INDEX_CHECK_NAMES = {"scatter_add": "scatter", "scatter_reduce": "scatter"}


def _all_values(index):
    """An index's values for a bounds check: every entry's for a batched index (inside
    vmap), so the check needs no per-entry evaluation."""
    return index._data if type(index) is not BatchedTensor else unwrap_all(index)[0]._data


def _check_bounds(index, n, dim):
    """Indices of gather/scatter/index_add must lie in [0, n) (no negative ones); a
    batched index (inside vmap) is checked on all its entries."""
    idx = _all_values(index)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


@public
def index_select(input, dim, index, *, out=None):
    """The slices at ``index`` (a 1-D integer tensor) along ``dim`` (a copy).

    >>> import chainrule as cr
    >>> cr.arange(5).index_select(0, cr.tensor([4, 0])).tolist()
    [4, 0]
    """
    if out is not None:
        return write_out("index_select", out, (input,), lambda: index_select(input, dim, index))
    index = _index_tensor(index, "index_select", allow_matrix=False)
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d] if input._data.ndim else 1
    if input._data.ndim == 0 and index._data.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index._data.size} value(s)")
    idx = _all_values(index)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    return apply_op(INDEX_SELECT, (input, index), {"dim": d})


@public
def index_add(input, dim, index, source, *, alpha=1):
    """``input`` plus ``alpha * source`` added into the slices ``index`` along ``dim``
    (repeated indices accumulate).

    >>> import chainrule as cr
    >>> cr.zeros(3).index_add(0, cr.tensor([0, 0]), cr.tensor([1., 2.])).tolist()
    [3.0, 0.0, 0.0]
    """
    index = _index_tensor(index, "index_add", allow_matrix=False)
    source = as_tensor_arg(source, "source")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"index_add_(): self ({scalar_type_name(input._data.dtype)}) and "
                           f"source ({scalar_type_name(source._data.dtype)}) must have the "
                           f"same scalar type")
    d = wrap_dim(dim, input._data.ndim)
    n_src = source._data.shape[d] if source._data.ndim else 1
    if index._data.size != n_src:
        raise RuntimeError(f"index_add_(): Number of indices ({index._data.size}) should be "
                           f"equal to source.size(dim): ({n_src}), for dim: {d}")
    shape, src_shape = input._data.shape, source._data.shape
    if len(src_shape) != len(shape) or any(
            a != b for k, (a, b) in enumerate(zip(shape, src_shape)) if k != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(shape)} "
                           f"source.shape = {list(src_shape)}")
    _check_bounds(index, input._data.shape[d] if input._data.ndim else 1, d)
    return apply_op(INDEX_ADD, (input, index, source), {"dim": d, "alpha": alpha})


def _check_gather_shapes(name, input, dim, index, src=None):
    nd = input._data.ndim
    if index._data.ndim != nd and not (nd <= 1 and index._data.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'input' if src is None else 'self'} tensor")
    d = wrap_dim(dim, nd)
    ishape, shape = index._data.shape, input._data.shape
    for k in range(min(nd, index._data.ndim) if nd else index._data.ndim):
        if k != d and ishape[k] > shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(ishape)} to be no larger than self {list(shape)} apart "
                               f"from dimension {d}")
        if src is not None and src._data.ndim in (nd, 0) and \
                ishape[k] > (src._data.shape[k] if src._data.ndim else 1):
            raise RuntimeError(f"Expected index {list(ishape)} to be no larger than self "
                               f"{list(shape)} apart from dimension {d} and to be no larger "
                               f"size than src {list(src._data.shape)}")
    _check_bounds(index, shape[d] if nd else 1, d)
    return d


@public
def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j] = input[index[i][j]][j]`` for dim 0 (and likewise for other dims).

    >>> import chainrule as cr
    >>> cr.gather(cr.tensor([[1., 2.], [3., 4.]]), 1, cr.tensor([[0, 0], [1, 0]])).tolist()
    [[1.0, 1.0], [4.0, 3.0]]
    """
    if out is not None:
        return write_out("gather", out, (input,), lambda: gather(input, dim, index))
    index = _index_tensor(index, "gather")
    d = _check_gather_shapes("gather", input, dim, index)
    return apply_op(GATHER, (input, index), {"dim": d})


def _check_scatter_dtype(input, src):
    if src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")


@public
def scatter_add(input, dim, index, src):
    """``input`` with ``src`` added at the places ``index`` points to along ``dim``
    (repeated indices accumulate); the reverse of ``gather``.

    >>> import chainrule as cr
    >>> cr.zeros(3).scatter_add(0, cr.tensor([2, 2]), cr.tensor([1., 2.])).tolist()
    [0.0, 0.0, 3.0]
    """
    index = _index_tensor(index, "scatter_add")
    src = as_tensor_arg(src, "src")
    d = _check_gather_shapes("scatter_add", input, dim, index, src)
    _check_scatter_dtype(input, src)
    return apply_op(SCATTER_ADD, (input, index, src), {"dim": d})


@public
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """``input`` with ``src`` (a tensor) or ``value`` (a number) written at the places
    ``index`` points to along ``dim``; ``reduce="add"`` adds instead.

    >>> import chainrule as cr
    >>> cr.zeros(3).scatter(0, cr.tensor([1]), 5.).tolist()
    [0.0, 5.0, 0.0]
    """
    if src is None:
        src = value
    index = _index_tensor(index, "scatter")
    if isinstance(src, Tensor):
        _check_scatter_dtype(input, src)
        d = _check_gather_shapes("scatter", input, dim, index, src)
        if reduce is None:
            return apply_op(SCATTER, (input, index, src), {"dim": d})
    else:
        d = _check_gather_shapes("scatter", input, dim, index)
        if reduce is None:
            return apply_op(SCATTER_VALUE, (input, index), {"dim": d, "value": src})
        src = Tensor._wrap(np.full(index._data.shape, src, input._data.dtype))
    if reduce == "add":
        return scatter_add(input, d, index, src)
    if reduce == "multiply":
        if src._data.dtype != input._data.dtype:
            src = src.to(input.dtype)
        return apply_op(SCATTER_MULTIPLY, (input, index, src), {"dim": d})
    raise RuntimeError("reduce argument must be either add or multiply.")


# --- masked_fill -----------------------------------------------------------------------------
@public
def masked_fill(input, mask, value):
    """``input`` with ``value`` (a number or 0-d tensor) where the bool ``mask``
    (broadcast against input) is True.

    >>> import chainrule as cr
    >>> x = cr.tensor([1., 2., 3.])
    >>> x.masked_fill(x > 1, 0.).tolist()
    [1.0, 0.0, 0.0]
    """
    mask = as_tensor_arg(mask, "mask")
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{cpp_type_name(mask._data.dtype)}")
    try:
        np.broadcast_shapes(input._data.shape, mask._data.shape)
    except ValueError:
        raise broadcast_error(mask._data.shape, input._data.shape) from None
    if not isinstance(value, Tensor):
        value = checked_integer(value, input._data.dtype)   # Note [checked integer conversion]
        return apply_op(MASKED_FILL, (input, mask), {"value": value})
    if value._data.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    if value._data.dtype != input._data.dtype:
        value = value.to(input.dtype)
    return apply_op(MASKED_FILL_TENSOR, (input, mask, value), EMPTY)


# --- scatter-likes: slices and diagonals written into, index_copy / index_fill ---------------
SELECT_SCATTER = defop("select_scatter", lambda a, src, dim, index:
                       _write_copy(a, select_array, src, dim, index),
                       inputs=("self", "src"), attrs=("dim", "index"),
                       vjp=(lambda F, g, src_shape, dim, index:
                            F.select_scatter(g, F._new_zeros(g, src_shape), dim, index),
                            lambda F, g, dim, index: F.select(g, dim, index)),
                       jvp=lambda F, t, dim, index: F.select_scatter(t[0], t[1], dim, index))
SLICE_SCATTER = defop("slice_scatter", lambda a, src, dim, start, end, step:
                      _write_copy(a, _slice_array, src, dim, start, end, step),
                      inputs=("self", "src"), attrs=("dim", "start", "end", "step"),
                      vjp=(lambda F, g, src_shape, dim, start, end, step:
                           F._slice_scatter(g, F._new_zeros(g, src_shape), dim, start, end, step),
                           lambda F, g, dim, start, end, step: F._slice(g, dim, start, end, step)),
                      jvp=lambda F, t, dim, start, end, step:
                      F._slice_scatter(t[0], t[1], dim, start, end, step))
INDEX_COPY = defop("index_copy", lambda a, i, s, dim: index_copy_array(a, dim, i, s),
                   inputs=("self", "index", "source"), attrs=("dim",),
                   vjp=(lambda F, g, dim, index: F.index_fill(g, dim, index, 0), NONDIFF,
                        lambda F, g, dim, index: F.index_select(g, dim, index)),
                   jvp=lambda F, t, dim, index: F.index_copy(t[0], dim, index, t[2]))
INDEX_FILL = defop("index_fill", lambda a, i, dim, value: index_fill_array(a, dim, i, value),
                   inputs=("self", "index"), attrs=("dim", "value"),
                   vjp=(lambda F, g, dim, index: F.index_fill(g, dim, index, 0), NONDIFF),
                   jvp=lambda F, t, dim, index: F.index_fill(t[0], dim, index, 0))
INDEX_FILL_TENSOR = defop("index_fill_tensor",
                          lambda a, i, v, dim: index_fill_array(a, dim, i, v),
                          inputs=("self", "index", "value"), attrs=("dim",),
                          node_name="IndexFillBackward1",
                          vjp=(lambda F, g, dim, index: F.index_fill(g, dim, index, 0), NONDIFF,
                               lambda F, g, dim, index:
                               F.sum(g - F.index_fill(g, dim, index, 0))),
                          jvp=lambda F, t, dim, index: F.index_fill(t[0], dim, index, t[2]))
# masked_select and take are advanced indexing (the key is the mask's positions, or
# the indices into the flattened input), under the reference's node names.
MASKED_SELECT = defop("masked_select", lambda a, key: _index_array(a, key), attrs=("key",),
                      vjp=(lambda F, g, self_shape, key:
                           F._index_put(F._new_zeros(g, self_shape), key, g, True),),
                      jvp=lambda F, t, key: F._index(t[0], key))
TAKE = defop("take", lambda a, key: _index_array(a.reshape(-1), key), attrs=("key",),
             vjp=(lambda F, g, self_shape, key: F.reshape(
                 F._index_put(F._new_zeros(g, (math.prod(self_shape),)), key, g, True),
                 self_shape),),
             jvp=lambda F, t, key: F._index(F.reshape(t[0], (-1,)), key))
MASKED_SCATTER = defop("masked_scatter", lambda a, m, s: masked_scatter_array(a, m, s),
                       inputs=("self", "mask", "source"),
                       vjp=(lambda F, g, mask: F.masked_fill(g, mask, 0), NONDIFF,
                            lambda F, g, mask, source_shape:
                            F.masked_scatter_backward(g, mask, source_shape)),
                       jvp=lambda F, t, mask: F.masked_scatter(t[0], mask, t[2]))
SCATTER_REDUCE = defop(
    "scatter_reduce",
    lambda a, i, s, dim, reduce, include_self: scatter_reduce_array(a, dim, i, s, reduce,
                                                                    include_self),
    inputs=("self", "index", "src"), attrs=("dim", "reduce", "include_self"),
    vjp=(lambda F, g, self, index, src, result, dim, reduce, include_self:
         g * F.conj(F.scatter_reduce_partials(self, index, src, result, dim, reduce,
                                              include_self)[0]),
         NONDIFF,
         lambda F, g, self, index, src, result, src_shape, dim, reduce, include_self:
         F.pad_grad(F.gather(g, dim, index) * F.conj(F.scatter_reduce_partials(
             self, index, src, result, dim, reduce, include_self)[1]), src_shape)),
    jvp=lambda F, t, self, index, src, result, dim, reduce, include_self:
    F.scatter_reduce_jvp(t, self, index, src, result, dim, reduce, include_self))


def _write_copy(a, view_fn, src, *args):
    out = a.copy()
    view_fn(out, *args)[...] = src
    return out


def index_copy_array(a, dim, index, source):
    """A copy of ``a`` with ``source`` (slices, or one value) at ``index`` along ``dim``."""
    out = _copy_to_write(a)
    if a.ndim == 0:                      # every index is 0: the last write stays
        out[...] = np.reshape(source, -1)[-1]
    else:
        out[(slice(None),) * dim + (index.reshape(-1),)] = source
    return out


index_fill_array = index_copy_array          # (a number broadcasts over the slices)


def masked_scatter_array(a, mask, source):
    out = a.copy()
    count = int(np.count_nonzero(mask))
    out[np.broadcast_to(mask, a.shape)] = source.reshape(-1)[:count]
    return out


_REDUCE_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
                  "amin": np.minimum}


def _reduce_identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    return -np.inf if reduce == "amax" else np.inf


def scatter_reduce_array(a, dim, index, src, reduce, include_self):
    out = _copy_to_write(a)
    target, key, values = _scatter_target(out, dim, index, src)
    if not include_self:
        target[key] = _reduce_identity(reduce, a.dtype)
    _REDUCE_UFUNCS[reduce].at(target, key, values)
    if reduce == "mean":
        counts = zeros_on(out.shape, np.int64, out)
        counts += 1 if include_self else 0
        count_target, _, _ = _scatter_target(counts, dim, index, src)
        if not include_self:
            count_target[key] = 0
        np.add.at(count_target, key, 1)
        counts = np.maximum(counts, 1)
        out = out // counts if out.dtype.kind in "iu" else (out / counts).astype(out.dtype)
    return out


@helper
def scatter_reduce_partials(F, self, index, src, result, dim, reduce, include_self):
    """d result / d self (shaped like self) and d result / d src (shaped like index) of
    scatter_reduce: the gradient is ``g * conj(partial)`` (gathered for src)."""
    src = F.corner_of(src, index.shape)
    one = F._new_zeros(self, ()) + 1
    if reduce == "sum":
        d_self, d_src = self * 0 + one, src * 0 + one
    elif reduce == "mean":
        count = F.scatter_add(self * 0 + (one if include_self else one * 0), dim, index,
                              src * 0 + one)
        d_self = one / F.where(count == 0, count + one, count)
        d_src = F.gather(d_self, dim, index)
    elif reduce == "prod":
        d_self, d_src = _scatter_prod_partials(F, self, index, src, result, dim, include_self,
                                               one)
    else:                     # amax / amin: shared evenly among the elements that attain it
        # (self's old value counts among them even when include_self=False, as in torch:
        # zeros(...).scatter_reduce(..., "amax", include_self=False) over a zero message
        # halves its gradient)
        self_hit = F.where(self == result, one, one * 0)
        src_hit = F.where(src == F.gather(result, dim, index), one, one * 0)
        count = F.scatter_add(self_hit, dim, index, src_hit)
        d_self = self_hit / F.where(count == 0, count + one, count)
        d_src = src_hit / F.gather(F.where(count == 0, count + one, count), dim, index)
    if not include_self:
        d_self = F.scatter(d_self, dim, index, 0)
    return d_self, d_src


def _scatter_prod_partials(F, self, index, src, result, dim, include_self, one):
    """Products of the other factors, exact where factors are zero (like torch: a
    lone zero factor's partial is the group's product with it taken as 1)."""
    d_self = F.scatter_reduce(self * 0 + one, dim, index, src, "prod")
    zero_src = src == 0
    flags = F.where(zero_src, src * 0 + one, src * 0)
    zeros = F.gather(F.scatter_add(self * 0, dim, index, flags), dim, index)
    if include_self:
        zeros = zeros + F.gather(F.where(self == 0, one, one * 0), dim, index)
    lone_zero = F.where(zeros == 1, flags, flags * 0) == 1
    without = F.scatter_reduce(self, dim, index, F.where(lone_zero, src * 0 + one, src), "prod",
                               include_self=include_self)
    d_src = F.where(lone_zero, F.gather(without, dim, index),
                    F.gather(result, dim, index) / F.where(zero_src, src * 0 + one, src))
    return d_self, d_src


@helper
def scatter_reduce_jvp(F, t, self, index, src, result, dim, reduce, include_self):
    d_self, d_src = scatter_reduce_partials(F, self, index, src, result, dim, reduce,
                                            include_self)
    t_src = F.corner_of(t[2], index.shape)
    return t[0] * d_self + F.scatter_add(t[0] * 0, dim, index, t_src * d_src)


@helper
def corner_of(F, x, shape):
    """The leading block of ``x`` of ``shape`` (scatter ops use only that part of src)."""
    for d, n in enumerate(shape):
        if x.shape[d] != n:
            x = F.narrow(x, d, 0, n)
    return x


@helper
def masked_scatter_backward(F, g, mask, source_shape):
    """Gradient of masked_scatter's source: the masked elements of ``g`` in order,
    zero-padded to the source's shape (the mask has ``g``'s shape)."""
    n = 1
    for s in source_shape:
        n *= s
    return F.reshape(F.pad_grad(F._index(g, F._mask_key(mask)), (n,)), source_shape)


def _mask_key_array(mask):
    return np.nonzero(mask)


@formula_helper
def _mask_key(mask):
    """The positions of a bool mask as an index key (for ``_index``)."""
    return np.nonzero(mask._data)


array_fn("_mask_key")(_mask_key_array)
array_fn("select_scatter")(lambda x, src, dim, index: _write_copy(x, select_array, src, dim, index))
array_fn("_slice_scatter")(lambda x, src, dim, start, end, step:
                           _write_copy(x, _slice_array, src, dim, start, end, step))
array_fn("index_copy")(index_copy_array)
array_fn("index_fill")(index_fill_array)
array_fn("masked_scatter")(masked_scatter_array)
array_fn("scatter_reduce")(lambda x, dim, index, src, reduce, include_self=True:
                           scatter_reduce_array(x, dim, index, src, reduce, include_self))


@public
def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` written at ``index`` along ``dim`` (where
    ``select(input, dim, index)`` reads).

    >>> import chainrule as cr
    >>> cr.select_scatter(cr.zeros(2, 2), cr.ones(2), 0, 0).tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    shape = input._data.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    i = index.__index__()
    if not -shape[d] <= i < shape[d]:
        raise IndexError(f"select(): index {i} out of range for tensor of size {list(shape)} "
                         f"at dimension {d}")
    i %= shape[d]
    _check_scatter_src(src, select_array(input._data, d, i).shape)
    return apply_op(SELECT_SCATTER, (input, _like(src, input)), {"dim": d, "index": i})


@public
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` written where ``input[..., start:end:step]``
    (at ``dim``) reads.

    >>> import chainrule as cr
    >>> cr.slice_scatter(cr.zeros(4), cr.ones(2), start=1, end=3).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    require_tensors("slice_scatter", ("input", "src"), input, src)
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start, end, step = slice(start, end, step).indices(shape[d])
    end = max(start, end)
    _check_scatter_src(src, _slice_array(input._data, d, start, end, step).shape)
    return _slice_scatter(input, _like(src, input), d, start, end, step)


@formula_helper
def _slice_scatter(input, src, dim, start, end, step):
    attrs = {"dim": dim, "start": start, "end": end, "step": step}
    return apply_op(SLICE_SCATTER, (input, src), attrs)


def _like(src, input):
    return src if src._data.dtype == input._data.dtype else src.to(input.dtype)


@public
def narrow_copy(input, dim, start, length):
    """``narrow`` as a new tensor (a copy).

    >>> import chainrule as cr
    >>> cr.arange(5).narrow_copy(0, 1, 2).tolist()
    [1, 2]
    """
    return FUNCTIONS["clone"](narrow(input, dim, start, length))


def _index_vector(index, name, what="Expected a long tensor for index, but got"):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not "
                        f"{type(index).__name__}")
    if index._data.dtype != np.int64:
        if "long" in what:
            raise RuntimeError(f"{name}(): {what} {scalar_type_name(index._data.dtype)}")
        raise IndexError(f"{name}(): {what}")
    if index._data.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    return index


@public
def index_copy(input, dim, index, source):
    """A copy of ``input`` with the slices of ``source`` written at positions
    ``index`` along ``dim``.

    >>> import chainrule as cr
    >>> cr.zeros(3).index_copy(0, cr.tensor([2, 0]), cr.tensor([1., 2.])).tolist()
    [2.0, 0.0, 1.0]
    """
    index = _index_vector(index, "index_copy_")
    d = wrap_dim(dim, max(input._data.ndim, 1))
    _check_index_copy(input, d, index, source)
    return apply_op(INDEX_COPY, (input, index, source), {"dim": d})


def _check_index_copy(input, d, index, source):
    """index_copy's argument checks, with the reference's messages."""
    shape, src_shape = input._data.shape, source._data.shape
    n_src = src_shape[d] if source._data.ndim else 1
    if index._data.size != n_src:
        raise IndexError(f"index_copy_(): Number of indices ({index._data.size}) should be equal "
                         f"to source.size(dim) ({n_src})")
    slices = [(a, b) for k, (a, b) in enumerate(zip(shape, src_shape)) if k != d]
    for k, (a, b) in enumerate(slices):          # numbered within the slice, like torch
        if a != b:
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                               f"shapes. Destination slice shape: {a} at dimension {k} and "
                               f"source slice shape: {b} at dimension {k}.")
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {scalar_type_name(input._data.dtype)} and (source) "
                           f"{scalar_type_name(source._data.dtype)}")
    n, idx = shape[d] if shape else 1, _all_values(index)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with "
                         f"size {n}")


@public
def index_fill(input, dim, index, value):
    """A copy of ``input`` with ``value`` (a number or 0-d tensor) at positions
    ``index`` along ``dim`` (negative indices count from the end).

    >>> import chainrule as cr
    >>> cr.zeros(2, 2).index_fill(1, cr.tensor([1]), 5.).tolist()
    [[0.0, 5.0], [0.0, 5.0]]
    """
    index = _index_vector(index, "index_fill_", "Expected dtype int64 for index.")
    d = wrap_dim(dim, max(input._data.ndim, 1))
    n = input._data.shape[d] if input._data.ndim else 1
    idx = _all_values(index)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx.min() if idx.min() < -n else idx.max()
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    index = (Tensor._wrap(idx % max(n, 1)) if type(index) is not BatchedTensor else
             index.remainder(max(n, 1)))          # inside vmap: on every entry, in one op
    if not isinstance(value, Tensor):
        return apply_op(INDEX_FILL, (input, index), {"dim": d, "value": value})
    if value._data.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    return apply_op(INDEX_FILL_TENSOR, (input, index, _like(value, input)), {"dim": d})


def _bool_mask(mask, message):
    mask = as_tensor_arg(mask, "mask")
    if mask._data.dtype != np.bool_:
        raise RuntimeError(message.format(scalar_type_name(mask._data.dtype)))
    return mask


_VMAP_MASK_MESSAGE = (
    "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot "
    "support this because for each batch this would return a differently shaped Tensor. "
    "Please file an issue at https://github.com/pytorch/pytorch/issues if you need this "
    "feature.")


@public
def masked_select(input, mask):
    """The elements of ``input`` where the bool ``mask`` is True (both broadcast), as
    a 1-D tensor.

    >>> import chainrule as cr
    >>> x = cr.tensor([1., 2., 3.])
    >>> cr.masked_select(x, x > 1).tolist()
    [2.0, 3.0]
    """
    require_tensors("masked_select", ("input", "mask"), input, mask)
    mask = _bool_mask(mask, "masked_select: expected BoolTensor for mask")
    if type(mask) is BatchedTensor:
        raise RuntimeError(_VMAP_MASK_MESSAGE)
    try:
        shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
    except ValueError:
        raise broadcast_error(mask._data.shape, input._data.shape) from None
    full = FUNCTIONS["expand"](input, shape) if input._data.shape != shape else input
    key = np.nonzero(np.broadcast_to(mask._data, shape))
    return apply_op(MASKED_SELECT, (full,), {"key": key})


@public
def masked_scatter(input, mask, source):
    """A copy of ``input`` with the elements of ``source``, in order, written where the
    bool ``mask`` (broadcast with input) is True.

    >>> import chainrule as cr
    >>> cr.zeros(3).masked_scatter(cr.tensor([True, False, True]), cr.tensor([1., 2.])).tolist()
    [1.0, 0.0, 2.0]
    """
    mask = _bool_mask(mask, "masked_scatter_ only supports boolean masks, but got mask with "
                            "dtype {}")
    try:
        shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
    except ValueError:
        raise broadcast_error(mask._data.shape, input._data.shape) from None
    if input._data.shape != shape:
        input = FUNCTIONS["expand"](input, shape)
    if mask._data.shape != shape:
        mask = FUNCTIONS["expand"](mask, shape)
    return _masked_scatter(input, mask, source)


def _masked_scatter(input, mask, source):
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{scalar_type_name(input._data.dtype)} and "
                           f"{scalar_type_name(source._data.dtype)}")
    if _most_true(mask) > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply_op(MASKED_SCATTER, (input, mask, source), EMPTY)


def _most_true(mask):
    """The count of True in ``mask`` (under vmap: the largest of an entry's)."""
    physical, levels = unwrap_all(mask)
    rows = physical._data.reshape(physical._data.shape[:len(levels)] + (-1,))
    return int(np.max(np.count_nonzero(rows, axis=-1), initial=0))


def _masked_scatter_(self, mask, source):
    """In-place ``masked_scatter`` (the mask must broadcast to self; bumps the version).

    >>> import chainrule as cr
    >>> x = cr.zeros(2); _ = x.masked_scatter_(cr.tensor([False, True]), cr.ones(1)); x.tolist()
    [0.0, 1.0]
    """
    mask = _bool_mask(mask, "masked_scatter_ only supports boolean masks, but got mask with "
                            "dtype {}")
    if mask._data.ndim > self._data.ndim:      # (torch names the bool type its own way here)
        raise RuntimeError(f"expand(CPUBoolType{{{list(mask._data.shape)}}}, size="
                           f"{list(self._data.shape)}): the number of sizes provided "
                           f"({self._data.ndim}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({mask._data.ndim})")
    _check_expandable(mask, self._data.shape)
    full = Tensor._wrap(np.broadcast_to(mask._data, self._data.shape))
    return commit_inplace(self, _masked_scatter(self, full, source))


Tensor.masked_scatter_ = _masked_scatter_
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


@public
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with ``src`` reduced into the places ``index`` points to along
    ``dim``: ``reduce`` is "sum", "prod", "mean", "amax" or "amin";
    ``include_self=False`` leaves ``input``'s values out where something is scattered.

    >>> import chainrule as cr
    >>> cr.zeros(2).scatter_reduce(0, cr.tensor([0, 0, 1]), cr.tensor([1., 3., 5.]),
    ...                            "amax", include_self=False).tolist()
    [3.0, 5.0]
    """
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    index = _index_tensor(index, "scatter_reduce")
    src = as_tensor_arg(src, "src")
    _check_scatter_dtype(input, src)
    d = _check_gather_shapes("scatter_reduce", input, dim, index, src)
    return apply_op(SCATTER_REDUCE, (input, index, src),
                    {"dim": d, "reduce": reduce, "include_self": bool(include_self)})


# --- nonzero, argwhere, take, take_along_dim ------------------------------------------------
@public
def nonzero(input, *, as_tuple=False):
    """The indices of the non-zero elements: an (n, ndim) int64 tensor, or with
    ``as_tuple`` one 1-D tensor per dimension.

    >>> import chainrule as cr
    >>> cr.tensor([0., 2., 3.]).nonzero().tolist()
    [[1], [2]]
    """
    if as_tuple and type(input) is BatchedTensor:
        raise RuntimeError("Batching rule not implemented for aten::nonzero_numpy. We could "
                           "not generate a fallback.")
    refuse_dynamic_shape(input, "aten::nonzero")
    arr = input._data
    if as_tuple:
        return tuple(Tensor._wrap(i.astype(np.int64)) for i in np.nonzero(np.atleast_1d(arr)))
    return _positions(arr)


def _positions(arr):
    positions = np.argwhere(arr) if arr.ndim else np.zeros((int(bool(arr)), 0), np.int64)
    return Tensor._wrap(positions.astype(np.int64))


@public
def argwhere(input):
    """``nonzero(input)``: the indices of the non-zero elements, one row each.

    >>> import chainrule as cr
    >>> cr.argwhere(cr.tensor([[0, 1], [1, 0]])).tolist()
    [[0, 1], [1, 0]]
    """
    return _positions(input._data)          # (under vmap: per entry, as the reference)


@public
def take(input, index):
    """The elements of ``input`` (as if flattened) at ``index``, in ``index``'s shape;
    negative indices count from the end.

    >>> import chainrule as cr
    >>> cr.take(cr.tensor([[1., 2.], [3., 4.]]), cr.tensor([0, -1])).tolist()
    [1.0, 4.0]
    """
    require_tensors("take", ("input", "index"), input, index)
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        name = scalar_type_name(index._data.dtype) if isinstance(index, Tensor) else \
            type(index).__name__
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {name}")
    n, idx = input._data.size, index._data
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx.min() if idx.min() < -n else idx.max()
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         f"elements.")
    return apply_op(TAKE, (input,), {"key": (idx,)})


@public
def take_along_dim(input, indices, dim=None):
    """``gather`` with ``indices`` broadcast against ``input`` (outside ``dim``); with
    ``dim=None``, on the flattened input.

    >>> import chainrule as cr
    >>> x = cr.tensor([[1., 5.], [7., 3.]])
    >>> cr.take_along_dim(x, x.argmax(1, keepdim=True), 1).tolist()
    [[5.0], [7.0]]
    """
    require_tensors("take_along_dim", ("input", "indices"), input, indices)
    if indices._data.dtype != np.int64:
        raise RuntimeError("take_along_dim(): dtype of indices should be Long but got "
                           f"{scalar_type_name(indices._data.dtype)}")
    if dim is None:
        return gather(FUNCTIONS["reshape"](input, (-1,)), 0,
                      FUNCTIONS["reshape"](indices, (-1,)))
    nd = input._data.ndim
    if indices._data.ndim != nd:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {nd} dimensions for input, and "
                           f"{indices._data.ndim} dimensions for indices")
    d = wrap_dim(dim, nd)
    shape = list(input._data.shape)
    shape[d] = indices._data.shape[d]
    shape = list(np.broadcast_shapes(tuple(shape), indices._data.shape))
    indices = FUNCTIONS["expand"](indices, tuple(shape))
    shape[d] = input._data.shape[d]
    return gather(FUNCTIONS["expand"](input, tuple(shape)), d, indices)


# --- in-place forms ----------------------------------------------------------------------------
def _inplace(name, fn, example, shape="3"):
    def inplace(self, *args, **kwargs):
        return commit_inplace(self, fn(self, *args, **kwargs))
    inplace.__name__ = name
    inplace.__doc__ = (f"In-place ``{fn.__name__}`` (bumps the version).\n\n"
                       f"    >>> import chainrule as cr\n"
                       f"    >>> x = cr.zeros({shape}); _ = x.{name}({example}); x._version\n"
                       f"    1\n")
    setattr(Tensor, name, inplace)


for _name, _fn, _example in (
        ("masked_fill_", masked_fill, "x == 0, 1."),
        ("index_add_", index_add, "0, cr.tensor([1]), cr.ones(1)"),
        ("scatter_", scatter, "0, cr.tensor([1]), 2."),
        ("scatter_add_", scatter_add, "0, cr.tensor([1]), cr.ones(1)"),
        ("scatter_reduce_", scatter_reduce, "0, cr.tensor([1]), cr.ones(1), 'sum'"),
        ("index_copy_", index_copy, "0, cr.tensor([1]), cr.ones(1)"),
        ("index_fill_", index_fill, "0, cr.tensor([1]), 2.")):
    _inplace(_name, _fn, _example)
_inplace("tril_", tril, "", "2, 2")
_inplace("triu_", triu, "", "2, 2")
