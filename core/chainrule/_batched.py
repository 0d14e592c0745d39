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

    ``_data`` of a wrapper is a read-only view of batch entry 0 (a ``_LogicalSample``)
    so that code reading only metadata (shapes, dtypes, dim wrapping) works as is;
    NumPy computation on it raises, so code that would compute on values outside the
    table fails loudly instead of silently using one entry.
"""
import threading

import numpy as np

from ._tensor import Tensor
from ._version_counter import counter_of


class _LogicalSample(np.ndarray):
    """The metadata of a batched tensor's logical value (Note [batched tensors])."""

    def __array_ufunc__(self, *args, **kwargs):
        raise RuntimeError(_VALUES_MESSAGE)

    def __array_function__(self, *args, **kwargs):
        raise RuntimeError(_VALUES_MESSAGE)


_VALUES_MESSAGE = ("vmap: this operation reads the values of a batched tensor outside the "
                   "ops chainrule can batch (e.g. .item(), .tolist(), .numpy() or data-"
                   "dependent control flow). Compute it on the unbatched inputs, or out of vmap.")


class _Levels(threading.local):
    def __init__(self):
        self.stack = []          # active Level objects, innermost last
        self.counter = 0


LEVELS = _Levels()


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
    chainrule.Size([3])
    """

    __slots__ = ("_value", "_level")

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
                           "rewrite what you're doing with other operations.")

    def tolist(self):
        raise RuntimeError(_VALUES_MESSAGE)

    def numpy(self, *, force=False):
        raise RuntimeError(_VALUES_MESSAGE)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(_VALUES_MESSAGE)

    def __bool__(self):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some "
                           "data-dependent control flow. We don't support that yet, please "
                           "shout over at https://github.com/pytorch/functorch/issues/257 .")

    def __repr__(self):
        return f"BatchedTensor(lvl={self._level.id}, bdim=0, value=\n{self._value!r}\n)"

    def detach(self):
        return wrap(self._value.detach(), self._level)


def wrap(value, level):
    """The level-``level`` wrapper of ``value`` (batch at dimension 0)."""
    t = object.__new__(BatchedTensor)
    data = value._data
    sample = data[0, ...] if data.shape[0] else np.empty(data.shape[1:], data.dtype)
    sample = sample.view(_LogicalSample)
    sample.flags.writeable = False
    t._data = sample
    t._value = value
    t._level = level
    t._output_nr = 0
    t._requires_grad = False
    t._grad = t._base = t._extra = None
    t._vc = counter_of(value)
    return t


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
