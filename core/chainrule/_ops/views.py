"""Views and in-place ops on them.

Note [views share memory and version]
    A view op's output shares its base's memory (a NumPy view) and its version
    counter; ``_base`` points at the root base. The view remembers how to re-make
    itself from the base (``view_fn``, which works on ndarrays and on Tensors).

Note [rebasing after in-place on a view]
    When an in-place op writes through a view V of base B and autograd is involved,
    B's history changes too. B gets a new grad_fn, CopySlices, which sends the part
    of B's gradient under V through the in-place op's backward and the rest straight
    to B's previous history; V's grad_fn becomes a fresh view of the new B.
"""
import numpy as np

from .._tensor import Tensor
from ..autograd.node import Node
from ._registry import apply_op, edge_of


def make_view(op, base, attrs, view_fn):
    """Apply a view op and link the result to its base."""
    out = apply_op(op, (base,), attrs, result_is_view_of=base)
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        parent_fn = base._extra.view_fn if base._extra is not None else None
        fn = view_fn if parent_fn is None else _compose(parent_fn, view_fn)
        o._extras().view_fn = fn
    return out


def _compose(first, second):
    return lambda x: second(first(x))


def rebase_inplace(t, result):
    """Make ``t`` the output of ``result``'s node after an in-place op (see Note
    [rebasing after in-place on a view])."""
    base = t._base
    view_fn = t._extra.view_fn if t._extra is not None else None
    if base is None or view_fn is None:
        _adopt(t, result.grad_fn, result._output_nr)
        return
    node = CopySlices(edge_of(base), view_fn, result.grad_fn, base._data.shape,
                      base._data.dtype)
    _adopt(base, node, 0)
    fresh = view_fn(base)
    _adopt(t, fresh.grad_fn, fresh._output_nr)


def _adopt(t, node, output_nr):
    t.grad_fn = node
    t._output_nr = output_nr
    t._requires_grad = True


class CopySlices(Node):
    """grad_fn of a base after an in-place op on one of its views."""

    __slots__ = ("view_fn", "fn", "_in_meta")

    def __init__(self, base_edge, view_fn, fn, shape, dtype):
        Node.__init__(self, (base_edge,) + tuple(fn._next[1:]))
        self.view_fn = view_fn
        self.fn = fn
        self._in_meta = ((shape, dtype),) + tuple(getattr(fn, "_in_meta", ())[1:]) \
            if getattr(fn, "_in_meta", None) else None

    def apply(self, grads, create_graph):
        g = grads[0]
        if g is None:
            return [None] * len(self._next)
        if create_graph:
            result = g.clone()
            region = self.view_fn(result)
            inner = self.fn.apply([region.clone()], True)
            if inner[0] is not None:
                region.copy_(inner[0])
            else:
                region.zero_()
        else:
            result = np.array(g, copy=True)
            region = self.view_fn(result)
            inner = self.fn.apply([np.array(region, copy=True)], False)
            region[...] = 0 if inner[0] is None else inner[0]
        return [result] + list(inner[1:])

    def release_saved(self):
        self.fn.release_saved()
