"""Dual levels, where tangents live, and their flow through the derivative table.

Note [tangent storage]
    A dual level keeps the tangents of its dual tensors in a dict keyed by the
    tensor's id, next to a weak reference to the tensor (its callback drops the entry
    when the tensor dies, so an id is never mistaken for a reused one). Tensors stay
    as they are: leaving the level drops every tangent at once. A tangent is a
    chainrule Tensor (it may require grad: reverse-over-forward), or a bare ndarray
    where the raw path (Note [raw tangent path]) stored one: ``Level.get`` wraps it
    in a Tensor on first use and keeps that Tensor, so a tangent read twice is the
    same object.

Note [missing tangents are zeros]
    An op whose inputs all lack a tangent runs as usual and its outputs get none.
    When at least one input has a tangent, each differentiable input without one
    takes a zero tangent of its shape and dtype (inputs marked NONDIFF take None),
    so every JVP formula of the table sees a full tuple ``t``; a custom Function's
    ``jvp`` likewise receives zeros for its tensor arguments without a tangent and
    None for its other arguments, like the reference. The raw path first tries the
    formula with ZERO, a symbolic zero, in place of the zero arrays (Note [symbolic
    zero tangents]).

Note [symbolic zero tangents]
    ``y * 2.0`` or ``A @ x`` with only ``y``/``x`` dual: the other input's tangent is
    zero, and materializing it costs an array and two full-size operations for
    nothing. ZERO stands for it: ``ZERO * a``, ``a * ZERO``, ``ZERO / a``, ``a @ ZERO``
    are ZERO, ``a + ZERO`` is ``a``, ``-ZERO`` is ZERO, so a formula that is a sum of
    products ``t[i] * ...`` evaluates to the sum of its live terms (what the
    reference computes too: its formulas skip undefined tangents, so ``0 * inf``
    gives no NaN). Anything else met by ZERO (a NumPy function, indexing, a method,
    a comparison, ``a / ZERO``) raises TypeError or AttributeError, and the formula
    runs again with real zeros (arrays, or Tensors on the recorded path): a formula
    is never trusted with ZERO beyond plain arithmetic. A ZERO result becomes zeros of the output's
    shape, and a result that is one of the formula's inputs is copied (a tangent
    never shares memory with another's unless the op is a view).

Note [raw tangent path]
    The common case of forward mode, every op of ``f(make_dual(x, v))`` with nothing
    requiring grad and one output, runs in ``dispatch`` itself (``_raw_tangent``): the
    tangents are read from the level's dict as ndarrays, the JVP runs on ARRAY_NS
    with a per-op plan of where its arguments come from (``_RAW``), and the result is
    stored as a bare ndarray (Note [tangent storage]) without a Tensor around it.
    Everything else (recorded tangents, batched levels, ops with several outputs or
    without a forward rule) goes through ``attach_tangents``.
    The C++ engine runs ``dispatch``'s common path for its fast methods in C, with
    the op's JVP program (Note [JVP programs] in _programs.py) or ``_raw_tangent``
    (Note [dual fast methods] in engine_cpp/src/fast_methods.cc): ``dispatch``,
    ``Level``, ``_raw_plan`` and the tracing of programs are fingerprinted there
    (chainrule_engine/_mirror.py), so change them together with that code.

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
from chainrule._ops.shape import _view
from chainrule._tensor import Tensor, _differentiable_dtype
from chainrule._version_counter import counter_of


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
        if entry is None or entry[0]() is not t:
            return None
        tangent = entry[1]
        if type(tangent) is np.ndarray:          # Note [tangent storage]: wrapped once
            tangent = Tensor._wrap(tangent)
            self.tangents[id(t)] = (entry[0], tangent)
        return tangent

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


def alias_for_dual(tensor):
    """What make_dual returns before its tangent is set: a view of ``tensor`` to the same
    shape, recorded as the reference records it (a ViewBackward0)."""
    with paused():
        return _view(tensor, tuple(tensor._data.shape))


def dispatch(run, op, inputs, attrs, view_base):
    """The dispatcher (Note [dispatch slot]): run the op, then its JVP when an input
    has a tangent (Note [raw tangent path] for the common case)."""
    level = CURRENT[0]
    if level is None or PAUSED.on:
        return run(op, inputs, attrs, view_base)
    get = level.tangents.get
    t, found, missing, graph = [], False, False, False
    for x in inputs:                    # Level.get, inlined: this runs on every op
        if x._requires_grad:
            graph = True
        entry = get(id(x))
        if entry is not None and entry[0]() is x:
            g = entry[1]
            if type(g) is not np.ndarray:
                graph = graph or g._requires_grad
                g = g._data
            t.append(g)
            found = True
        else:
            t.append(None)
            missing = True
    out = run(op, inputs, attrs, view_base)
    if not found:
        return out
    raw = _RAW.get(op)
    if raw is None:
        raw = _raw_plan(op)
    if raw and level.batch is None and not (graph and _grad_mode.STATE.grad_enabled):
        r = _raw_tangent(raw, inputs, attrs, out, t, missing, view_base is not None)
        if r is not None:               # Level.set, inlined (out has no grad_fn here)
            ref = _Ref(out, level._forget_cb)
            ref.key = key = id(out)
            level.tangents[key] = (ref, r)
    else:
        tangents = [None if g is None else level.get(x) for x, g in zip(inputs, t)]
        attach_tangents(level, op, inputs, attrs, out, tangents, view_base is not None)
    return out


class _Zero:
    """ZERO, the symbolic zero tangent of Note [symbolic zero tangents]."""

    __slots__ = ()
    __array_ufunc__ = None          # NumPy's operators defer to ours; its ufuncs refuse

    def __array__(self, *args, **kwargs):
        raise TypeError("a symbolic zero tangent is not an array")

    def __mul__(self, other):
        return self

    __truediv__ = __matmul__ = __mul__

    def __rmul__(self, other):
        _refuse_tensor(other)
        return self

    __rmatmul__ = __rmul__

    def __neg__(self):
        return self

    __pos__ = __neg__

    def __add__(self, other):
        return other

    def __radd__(self, other):
        _refuse_tensor(other)
        return other

    __rsub__ = __radd__

    def __sub__(self, other):
        return -other

    def __bool__(self):
        raise TypeError("a symbolic zero tangent has no truth value")

    def __eq__(self, other):
        raise TypeError("a symbolic zero tangent cannot be compared")

    __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__
    __hash__ = object.__hash__


def _refuse_tensor(other):
    """``tensor op ZERO`` stays a TypeError (the formula then runs with real zeros, so
    the recorded path records what the reference records) now that a Tensor operator
    hands a foreign operand to its reflected method (Note [operators and foreign
    operands])."""
    if isinstance(other, Tensor):
        raise TypeError("a symbolic zero tangent meets a Tensor")


ZERO = _Zero()
_ARRAY_NS = [_registry.ARRAY_NS]   # set again once it exists (_raw_plan)
_RAW = {}         # op -> (jvp function, what a missing tangent is per input) or False


def _raw_plan(op):
    _ARRAY_NS[0] = _registry.ARRAY_NS
    jvp = op.jvp
    if type(jvp) is not Formula or op.multi_output:
        raw = False
    else:
        raw = (jvp.fn, tuple(None if v is NONDIFF else ZERO for v in op.vjps),
               _PLANS.get(op) or _plan(op))
    _RAW[op] = raw
    return raw


def _raw_tangent(raw, inputs, attrs, out, t, missing, is_view):
    """Note [raw tangent path]: the output's tangent as an ndarray (None: it has none),
    from the inputs' tangents ``t`` (ndarrays; None where ``missing``)."""
    fn, fill, plan = raw
    zeros = False
    if missing:                         # Note [missing tangents are zeros]
        t = [f if g is None else g for g, f in zip(t, fill)]
        for g in t:
            if g is ZERO:
                zeros = True
    env = []
    for kind, key in plan:              # _env, inlined for one output
        if kind == 2:
            env.append(inputs[key]._data)
        elif kind == 1:
            env.append(out._data)
        elif kind == 0:
            env.append(attrs[key])
        else:
            env.append(inputs[key]._data.shape)
    r = _with_zeros(_ARRAY_NS[0], fn, t, env, inputs) if zeros else fn(_ARRAY_NS[0], t, *env)
    data = out._data
    if type(r) is np.ndarray and r.shape == data.shape and r.dtype == data.dtype:
        if is_view:
            return r
        if r.base is None:
            for g in t:
                if r is g:
                    break
            else:
                return r
    r = _fit_array(r, out, t, is_view)
    return None if r is None else r._data


def _with_zeros(F, fn, t, env, inputs):
    """The formula with ZERO for missing tangents, or with zero arrays (Tensors on
    TENSOR_NS) where ZERO meets more than arithmetic (Note [symbolic zero tangents])."""
    kind = np.ndarray if F is _ARRAY_NS[0] else Tensor
    try:
        r = fn(F, t, *env)
        if r is ZERO:
            return 0.0
        if type(r) is kind and (kind is Tensor or r.dtype.kind != "O"):
            return r.copy() if kind is np.ndarray and any(r is v for v in env) else r
    except (TypeError, AttributeError):
        pass
    t = [g if g is not ZERO else np.zeros(x._data.shape, x._data.dtype) if kind is np.ndarray
         else Tensor._wrap(np.zeros(x._data.shape, x._data.dtype)) for x, g in zip(inputs, t)]
    return fn(F, t, *env)


def no_forward_rule(name):
    return NotImplementedError(f"Trying to use forward AD with {name} that does not "
                               "support it.")


def attach_tangents(level, op, inputs, attrs, out, tangents, is_view):
    """Compute the op's output tangent(s) with its JVP formula and store them, where
    the raw path (Note [raw tangent path]) does not."""
    jvp = op.jvp
    if type(jvp) is not Formula:
        if type(jvp) is _registry.NotImplementedFormula:
            raise jvp.forward_error(op)     # Note [derivatives the reference does not implement]
        raise no_forward_rule(op.name)
    track = _grad_mode.STATE.grad_enabled and _needs_graph(inputs, tangents)
    if level.batch is not None:
        from ._batched import attach_batched
        return attach_batched(level, op, inputs, attrs, out, tangents, is_view, track)
    if track:
        return _attach_recorded(level, op, inputs, attrs, out, tangents, is_view)
    t = tuple(_full_tangents(op, inputs, tangents, _data))       # several outputs
    result = jvp.fn(_registry.ARRAY_NS, t, *_env(op, jvp, inputs, attrs, out, _data))
    for o, r in zip(out, result):
        tangent = _fit_array(r, o, t, is_view)
        if tangent is not None:
            level.set_output(o, tangent)


def _needs_graph(inputs, tangents):
    for x in inputs:
        if x._requires_grad:
            return True
    for g in tangents:
        if g is not None and g._requires_grad:
            return True
    return False


def _attach_recorded(level, op, inputs, attrs, out, tangents, is_view):
    """attach_tangents on Tensors (Note [tangent formulas, two namespaces]); one
    output tries ZERO first (Note [symbolic zero tangents])."""
    env = _env(op, op.jvp, inputs, attrs, out, _same)
    previous, PAUSED.on = PAUSED.on, True          # paused(), without its frames
    try:
        if not _is_one_of(None, tangents):       # every tangent present
            t = tangents
            result = op.jvp.fn(_registry.TENSOR_NS, t, *env)
        elif op.multi_output:
            t = tuple(_full_tangents(op, inputs, tangents, _same))
            result = op.jvp.fn(_registry.TENSOR_NS, t, *env)
        else:
            t = [g if g is not None else None if v is NONDIFF else ZERO
                 for g, v in zip(tangents, op.vjps)]
            result = _with_zeros(_registry.TENSOR_NS, op.jvp.fn, t, env, inputs)
    finally:
        PAUSED.on = previous
    if not op.multi_output:
        tangent = _fit_tensor(result, out, t, is_view)
        if tangent is not None:
            level.set_output(out, tangent)
        return
    for o, r in zip(out, result):
        tangent = _fit_tensor(r, o, t, is_view)
        if tangent is not None:
            level.set_output(o, tangent)


def _is_one_of(r, tangents):
    for g in tangents:
        if r is g:
            return True
    return False


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
    if type(r) is Tensor and batch is None and r._data.shape == out._data.shape and \
            r._data.dtype == out._data.dtype and (is_view or not _is_one_of(r, inputs_t)):
        return r                                   # the common case: fits as it is
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
