"""Dual levels, where tangents live, and their flow through the derivative table.

Note [tangent storage]
    A dual level keeps the tangents of its dual tensors in a dict keyed by the
    tensor's id, next to a weak reference to the tensor (its callback drops the entry
    when the tensor dies, so an id is never mistaken for a reused one). Tensors stay
    as they are: leaving the level drops every tangent at once. A tangent is a
    chainrule Tensor (it may require grad: reverse-over-forward).

Note [missing tangents are zeros]
    An op whose inputs all lack a tangent runs as usual and its outputs get none.
    When at least one input has a tangent, each differentiable input without one
    takes a zero tangent of its shape and dtype (inputs marked NONDIFF take None),
    so every JVP formula of the table sees a full tuple ``t``; a custom Function's
    ``jvp`` likewise receives zeros for its tensor arguments without a tangent and
    None for its other arguments, like the reference.

Note [tangent formulas, two namespaces]
    The JVP formulas run like the VJPs (Note [one formula, two namespaces]): on
    ndarrays (ARRAY_NS) when nothing needs a graph, and on Tensors (TENSOR_NS) when
    grad mode is on and a primal or a tangent requires grad, so that the tangent is
    itself differentiable (reverse-over-forward, jacrev of jacfwd). While a formula
    runs, tangent propagation is paused: the primals it reads are duals, and their
    tangents must not flow into the tangent's own computation.
"""
import threading
import weakref

import numpy as np

from chainrule import _grad_mode
from chainrule._ops import _registry
from chainrule._ops._registry import NONDIFF, Formula
from chainrule._tensor import Tensor, _differentiable_dtype


class _Paused(threading.local):
    on = False


PAUSED = _Paused()


class _Ref(weakref.ref):
    __slots__ = ("key",)


class Level:
    """One dual level: its index and the tangents of its duals (Note [tangent storage])."""

    def __init__(self, index):
        self.index = index
        self.tangents = {}
        self.batch = None           # Note [batched tangents] in _batched.py
        self.by_array = {}          # id(output array) -> (weakref, tangent) (set_output)
        self.handles = ()
        self._forget_cb = self._forget
        self._forget_array_cb = self._forget_array

    def get(self, t):
        entry = self.tangents.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        return None

    def set(self, t, tangent):
        ref = _Ref(t, self._forget_cb)
        ref.key = id(t)
        self.tangents[ref.key] = (ref, tangent)

    def set_output(self, t, tangent):
        """``set`` for an op's output; a recorded output is also found by its array, for
        the tensor a node rebuilds from it (Note [tangent slot], ``saved_output``)."""
        self.set(t, tangent)
        if t.grad_fn is not None:
            ref = _Ref(t._data, self._forget_array_cb)
            ref.key = id(t._data)
            self.by_array[ref.key] = (ref, tangent)

    def get_by_array(self, arr):
        entry = self.by_array.get(id(arr))
        if entry is not None and entry[0]() is arr:
            return entry[1]
        return None

    def _forget_array(self, ref):
        entry = self.by_array.get(ref.key)
        if entry is not None and entry[0] is ref:
            del self.by_array[ref.key]

    def _forget(self, ref):
        entry = self.tangents.get(ref.key)
        if entry is not None and entry[0] is ref:
            del self.tangents[ref.key]


CURRENT = [None]        # the active Level (the reference allows one at a time)


class paused:
    """Context manager: no tangent flows through the ops run inside it."""

    __slots__ = ("previous",)

    def __enter__(self):
        self.previous = PAUSED.on
        PAUSED.on = True

    def __exit__(self, *exc):
        PAUSED.on = self.previous


def dispatch(run, op, inputs, attrs, view_base):
    """The dispatcher (Note [dispatch slot]): run the op, then its JVP when an input
    has a tangent."""
    level = CURRENT[0]
    if level is None or PAUSED.on:
        return run(op, inputs, attrs, view_base)
    get = level.tangents.get
    tangents, found = [], False
    for t in inputs:                    # Level.get, inlined: this runs on every op
        entry = get(id(t))
        if entry is not None and entry[0]() is t:
            tangents.append(entry[1])
            found = True
        else:
            tangents.append(None)
    out = run(op, inputs, attrs, view_base)
    if found:
        attach_tangents(level, op, inputs, attrs, out, tangents, view_base is not None)
    return out


def no_forward_rule(name):
    return NotImplementedError(f"Trying to use forward AD with {name} that does not "
                               "support it.")


def attach_tangents(level, op, inputs, attrs, out, tangents, is_view):
    """Compute the op's output tangent(s) with its JVP formula and store them."""
    jvp = op.jvp
    if type(jvp) is not Formula:
        raise no_forward_rule(op.name)
    track = _grad_mode.STATE.grad_enabled and _needs_graph(inputs, tangents)
    if level.batch is not None:
        from ._batched import attach_batched
        return attach_batched(level, op, inputs, attrs, out, tangents, is_view, track)
    if track:
        return _attach_recorded(level, op, inputs, attrs, out, tangents, is_view)
    if not op.multi_output:
        return _attach_single(level, op, jvp, inputs, attrs, out, tangents, is_view)
    t = tuple(_full_tangents(op, inputs, tangents, _data))
    result = jvp.fn(_registry.ARRAY_NS, t, *_env(op, jvp, inputs, attrs, out, _data))
    if not op.multi_output:
        tangent = _fit_array(result, out, t, is_view)
        if tangent is not None:
            level.set_output(out, tangent)
        return
    for o, r in zip(out, result):
        tangent = _fit_array(r, o, t, is_view)
        if tangent is not None:
            level.set_output(o, tangent)


def _attach_single(level, op, jvp, inputs, attrs, out, tangents, is_view):
    """attach_tangents' common case (one output, ndarrays), written out flat: it runs
    on every op of a forward-mode computation."""
    t = []
    for x, g, vjp in zip(inputs, tangents, op.vjps):
        if g is not None:
            t.append(g._data)
        elif vjp is NONDIFF:
            t.append(None)
        else:
            t.append(np.zeros(x._data.shape, x._data.dtype))
    plan = _PLANS.get(op)
    if plan is None:
        plan = _plan(op)
    r = jvp.fn(_registry.ARRAY_NS, t, *_env(op, jvp, inputs, attrs, out, _data)) if plan \
        else jvp.fn(_registry.ARRAY_NS, t)
    data = out._data
    if type(r) is np.ndarray and r.shape == data.shape and r.dtype == data.dtype and \
            (is_view or r.base is None and r is not t[0]):
        tangent = Tensor._wrap(r)
    else:
        tangent = _fit_array(r, out, t, is_view)
        if tangent is None:
            return
    level.set_output(out, tangent)


def _needs_graph(inputs, tangents):
    for x in inputs:
        if x._requires_grad:
            return True
    for g in tangents:
        if g is not None and g._requires_grad:
            return True
    return False


def _attach_recorded(level, op, inputs, attrs, out, tangents, is_view):
    """attach_tangents on Tensors (Note [tangent formulas, two namespaces])."""
    t = tuple(_full_tangents(op, inputs, tangents, _same))
    env = _env(op, op.jvp, inputs, attrs, out, _same)
    with paused():
        result = op.jvp.fn(_registry.TENSOR_NS, t, *env)
    results = result if op.multi_output else (result,)
    for o, r in zip(out if op.multi_output else (out,), results):
        tangent = _fit_tensor(r, o, t, is_view)
        if tangent is not None:
            level.set_output(o, tangent)


def _data(value):
    return value._data


def _same(value):
    return value


def _full_tangents(op, inputs, tangents, unwrap):
    """Note [missing tangents are zeros]."""
    for x, g, vjp in zip(inputs, tangents, op.vjps):
        if g is not None:
            yield unwrap(g)
        elif vjp is NONDIFF:
            yield None
        else:
            yield unwrap(Tensor._wrap(np.zeros(x._data.shape, x._data.dtype)))


_PLANS = {}       # op -> how to find each value its JVP formula names


def _plan(op):
    """(kind, key) per parameter of the JVP formula: 0 an attribute, 1 the result,
    2 an input (by position), 3 an input's shape (by position)."""
    plan = []
    for name in op.jvp.names:
        if name == "result":
            plan.append((1, None))
        elif name in op.inputs:
            plan.append((2, op.inputs.index(name)))
        elif name in op.shape_keys:
            plan.append((3, op.shape_keys.index(name)))
        else:
            plan.append((0, name))
    plan = _PLANS[op] = tuple(plan)
    return plan


def _env(op, formula, inputs, attrs, out, unwrap):
    """The values the formula's parameters name (as for VJPs: inputs, ``result``,
    attributes, ``<input>_shape``)."""
    plan = _PLANS.get(op)
    if plan is None:
        plan = _plan(op)
    values = []
    for kind, key in plan:
        if kind == 2:
            values.append(unwrap(inputs[key]))
        elif kind == 1:
            values.append(tuple(unwrap(o) for o in out) if op.multi_output else unwrap(out))
        elif kind == 0:
            values.append(attrs[key])
        else:
            values.append(inputs[key]._data.shape)
    return values


_DIFFERENTIABLE = {}     # ndarray dtype -> whether tensors of it carry tangents


def _differentiable(arr):
    dtype = arr.dtype
    known = _DIFFERENTIABLE.get(dtype)
    if known is None:
        known = _DIFFERENTIABLE[dtype] = _differentiable_dtype(dtype)
    return known


def _fit_array(r, out, inputs_t, is_view, batch=None):
    """A formula's ndarray result as the tangent of ``out``: its shape (after the
    batch dimension of Note [batched tangents], if any) and dtype, and never the same
    memory as an input's tangent unless the op is a view."""
    if r is None or type(out) is not Tensor or not _differentiable(out._data):
        return None
    if type(r) is not np.ndarray:
        r = np.asarray(r)
    data = out._data
    shape = data.shape if batch is None else (batch,) + data.shape
    if r.shape != shape:
        r = np.broadcast_to(r, shape).copy()
    if r.dtype != data.dtype:            # e.g. to_copy: the tangent takes the new dtype
        r = (r.real if r.dtype.kind == "c" and data.dtype.kind != "c" else r).astype(data.dtype)
    elif not is_view:
        for g in inputs_t:
            if g is not None and (r is g or r.base is g):
                r = r.copy()
                break
    return Tensor._wrap(r)


def _fit_tensor(r, out, inputs_t, is_view, batch=None):
    """_fit_array for the Tensor path (the copies are recorded)."""
    if r is None or not isinstance(out, Tensor) or not _differentiable(out._data):
        return None
    if not isinstance(r, Tensor):
        r = Tensor._wrap(np.asarray(r))
    shape = out._data.shape if batch is None else (batch,) + out._data.shape
    with paused():
        if tuple(r._data.shape) != shape:
            r = r.expand(shape).clone()
        if r._data.dtype != out._data.dtype:
            if r.is_complex() and not out.is_complex():
                r = r.real
            r = r.to(out.dtype)
        elif not is_view and any(r is g for g in inputs_t if g is not None):
            r = r.clone()
    return r
