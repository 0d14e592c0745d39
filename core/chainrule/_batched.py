"""Batched tensors: what ``chainrule.vmap`` evaluates a function on.

Note [batched tensors]
    Inside ``vmap`` every mapped input is a ``BatchedTensor``: a wrapper around a
    *physical* tensor whose dimension 0 is the batch, presenting the *logical* tensor
    of one batch entry (``shape``, ``ndim``, ``dtype`` are the entry's). Each vmap
    call is one *level* (a number; nested vmaps have increasing levels) and a wrapper
    belongs to one level: the physical tensor of a level-2 wrapper may itself be a
    level-1 wrapper (vmap of vmap).

    While a level is active a dispatcher sits in the dispatch slot (Note [dispatch
    slot]): a table op with a wrapper among its inputs is handled at the highest level
    present by that op's batching rule (``_ops/_batching_rules.py``), which runs the
    op ONCE on the physical tensors (moving dimension arguments past the batch
    dimension, aligning ranks, ...) and wraps the result. The op is recorded on the
    physical tensors, so the autograd graph is an ordinary graph over ordinary
    tensors: grad of vmap, and one backward pass for a whole batch of cotangents
    (``grad(..., is_grads_batched=True)``), need nothing special from either engine.

    ``_data`` of a wrapper is a ``_LogicalSample``: the logical shape and dtype, so
    that code reading only metadata (shapes, dtypes, dim wrapping) works as is. Code
    that computes on values outside the table for every entry alike (the indices
    max(dim), topk or max pooling pick) does so once on the physical array
    (``along_axis``, ``on_values``); code that reads them otherwise (a data-dependent
    shape, strides) raises ValuesOutsideTable on it, and vmap then evaluates the
    function once per entry: correct, never silently one entry's values.
"""
import math
import threading

import numpy as np

from ._tensor import Tensor
from ._torch_function import DISABLED as _disabled_torch_function_impl
from ._version_counter import counter_of


class ValuesOutsideTable(RuntimeError):
    """NumPy computation on a batched tensor's ``_data``: code outside the table read
    its values. vmap then evaluates the function once per entry instead."""


class _LogicalSample:
    """The metadata of a batched tensor's logical value (Note [batched tensors]): shape,
    dtype and the like, and indexing (for the shapes it gives); reading values or
    computing on it raises ValuesOutsideTable."""

    __slots__ = ("shape", "dtype", "ndim", "size", "flags", "itemsize", "_strides",
                 "__weakref__")

    def __init__(self, shape, dtype, layout):
        self.shape, self.dtype, self.ndim = tuple(shape), dtype, len(shape)
        self.size = math.prod(shape)
        self.flags, self._strides, self.itemsize = layout.flags, layout.strides, dtype.itemsize

    def _template(self):
        """A zero-copy array of this shape and layout (for layout questions only)."""
        return np.lib.stride_tricks.as_strided(np.empty(1, self.dtype), self.shape,
                                               self._strides)

    def __getitem__(self, key):
        template = self._template()[key]
        return _LogicalSample(template.shape, template.dtype, template)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getattr__(self, name):
        raise ValuesOutsideTable(_VALUES_MESSAGE)

    def __array__(self, *args, **kwargs):
        raise ValuesOutsideTable(_VALUES_MESSAGE)

    def __array_ufunc__(self, *args, **kwargs):
        raise ValuesOutsideTable(_VALUES_MESSAGE)

    def __array_function__(self, func, types, args, kwargs):
        if func is np.reshape:          # whether a view can have that shape
            out = np.reshape(self._template(), *args[1:], **kwargs)
            return _LogicalSample(out.shape, out.dtype, out)
        raise ValuesOutsideTable(_VALUES_MESSAGE)

    def __iter__(self):
        raise ValuesOutsideTable(_VALUES_MESSAGE)


def _reads_values(self, *args):
    raise ValuesOutsideTable(_VALUES_MESSAGE)


for _name in ("lt", "le", "gt", "ge", "add", "radd", "sub", "rsub", "mul", "rmul",
              "truediv", "rtruediv", "pow", "neg", "abs", "bool", "float", "int", "and",
              "or", "invert", "matmul", "mod", "floordiv"):
    setattr(_LogicalSample, f"__{_name}__", _reads_values)


_VALUES_MESSAGE = ("vmap: this operation reads the values of a batched tensor outside the "
                   "ops chainrule can batch (e.g. .item(), .tolist(), .numpy() or data-"
                   "dependent control flow). Compute it on the unbatched inputs, or out of vmap.")


# (the reference's words: a batched tensor has no storage of its own)
_NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"
CONTROL_FLOW_MESSAGE = ("vmap: It looks like you're attempting to use a Tensor in some "
                        "data-dependent control flow. We don't support that yet, please file "
                        "an issue at https://github.com/pytorch/pytorch/issues .")


PERFORMANCE_DROP = ("There is a performance drop because we have not yet implemented the "
                    "batching rule for {}. Please file us an issue on GitHub so that we can "
                    "prioritize its implementation.")


class _Levels(threading.local):
    def __init__(self):
        self.stack = []          # active Level objects, innermost last
        self.counter = 0


LEVELS = _Levels()


class _FuncTransforms(threading.local):
    def __init__(self):
        # chainrule.func transforms running (Note [custom Functions under transforms]),
        # how many of them batch the forward (jacfwd), and the ids of LEVELS' vmaps a
        # running custom Function has lowered (its forward and vmap rule run below them)
        self.active = 0
        self.batching = 0
        self.lowered = frozenset()
        # the ``randomness`` of the running jacfwds, innermost last (Note [randomness
        # of jacfwd] in _vmap.py)
        self.randomness = []


FUNC_TRANSFORMS = _FuncTransforms()


class Level:
    """One active vmap: its number, batch size and randomness mode."""

    __slots__ = ("id", "size", "randomness")

    def __init__(self, id, size, randomness):
        self.id, self.size, self.randomness = id, size, randomness

    def __repr__(self):
        return f"Level({self.id}, size={self.size})"


class BatchedTensor(Tensor):
    """A tensor that stands for a batch of tensors (Note [batched tensors]).

    >>> import chainrule as cr
    >>> cr.vmap(lambda x: (type(x).__name__, x.shape), out_dims=None)(cr.ones(4, 3))[1]
    (3,)
    """

    __slots__ = ("_value", "_level")
    __torch_function__ = _disabled_torch_function_impl    # vmap's own dispatch, not this

    @property
    def grad_fn(self):
        return self._value.grad_fn

    @property
    def requires_grad(self):
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        self._value.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self._value.is_leaf

    def item(self):
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't "
                           "support vmap over calling .item() on a Tensor, please try to "
                           "rewrite what you're doing with other operations. If error is "
                           "occurring somewhere inside PyTorch internals, please file a bug "
                           "report.")

    def tolist(self):
        raise RuntimeError(_NO_STORAGE)

    def numpy(self, *, force=False):
        raise RuntimeError(_NO_STORAGE)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(_NO_STORAGE)

    def __bool__(self):
        raise RuntimeError(CONTROL_FLOW_MESSAGE)

    def __repr__(self):
        return f"BatchedTensor(lvl={self._level.id}, bdim=0, value=\n{self._value!r}\n)"

    def detach(self):
        return wrap(self._value.detach(), self._level)


def wrap(value, level):
    """The level-``level`` wrapper of ``value`` (batch at dimension 0)."""
    t = object.__new__(BatchedTensor)
    data = value._data
    t._data = _LogicalSample(data.shape[1:], data.dtype, _entry_layout(data))
    t._value = value
    t._level = level
    t._output_nr = 0
    t._requires_grad = False
    t._grad = t._base = t._extra = None
    t._vc = counter_of(value)
    return t


def _entry_layout(data):
    """An array with one entry's layout (what reshape/contiguous decide on)."""
    if type(data) is _LogicalSample:
        return data._template()[0, ...]
    return data[0, ...] if data.shape[0] else np.empty(data.shape[1:], data.dtype)


def level_of(t):
    """The level of ``t``'s outermost wrapper (None for an unbatched tensor)."""
    return t._level if type(t) is BatchedTensor else None


def batched_at(t, level):
    return type(t) is BatchedTensor and t._level is level


def unwrap_all(t):
    """(the innermost physical tensor, the levels from outermost to innermost wrapper)."""
    levels = []
    while type(t) is BatchedTensor:
        levels.append(t._level)
        t = t._value
    return t, levels[::-1]


def rewrap(physical, levels):
    """Inverse of ``unwrap_all``."""
    for level in levels:
        physical = wrap(physical, level)
    return physical


def raw_batched(fn, tensors):
    """An element-wise NumPy function of batched tensors outside the table (comparisons,
    isnan, ...): on the physical arrays, ranks aligned after the batch dimension."""
    level = max((t._level for t in tensors if type(t) is BatchedTensor), key=lambda lv: lv.id)
    batched = [type(t) is BatchedTensor and t._level is level for t in tensors]
    rank = max(t.ndim for t in tensors)
    from ._ops._batching_rules import _pad
    args = [_pad(t._value, rank) if b else t for t, b in zip(tensors, batched)]
    for t in args:
        if type(t) is BatchedTensor:
            return wrap(raw_batched(fn, args), level)
    return wrap(Tensor._wrap(fn(*[t._data for t in args])), level)


_DYNAMIC_SHAPE = ("vmap: We do not support batching operators that can output dynamic shape. "
                  "Attempted to vmap over {}. Please file an issue at "
                  "https://github.com/pytorch/pytorch/issues if you need this feature.")


def refuse_dynamic_shape(t, name):
    """The reference's error, under vmap, for an op whose output's shape depends on the
    values of ``t`` (``name``: the reference's op) when ``t`` is batched."""
    if type(t) is BatchedTensor:
        raise RuntimeError(_DYNAMIC_SHAPE.format(name))


def on_values(fn, t):
    """``fn(array)`` of a tensor's values; of a batched tensor's entries computed on the
    whole physical array in one call (``fn`` treats leading dimensions as batch ones): a
    batched tensor of results."""
    physical, levels = unwrap_all(t)
    return rewrap(Tensor._wrap(fn(physical._data)), levels)


def along_axis(fn, t, axis, **kwargs):
    """``fn(array, axis=axis, **kwargs)`` (argmax, argsort, ...) of a batched tensor's
    entries, computed on the physical array in one call: a batched tensor of results."""
    physical, levels = unwrap_all(t)
    axis = axis + len(levels) if axis >= 0 else axis
    return rewrap(Tensor._wrap(fn(physical._data, axis=axis, **kwargs)), levels)
