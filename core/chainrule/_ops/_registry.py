"""The derivative-table machinery: ``defop`` entries become graph-recording ops.

An entry declares an op's forward (on ndarrays), one VJP formula per input and its
JVP, side by side. Formulas are plain functions whose first parameter is the
namespace ``F`` and whose second is the output gradient ``g`` (the tangent(s) ``t``
for JVPs); the names of the remaining parameters say what they need:

    an input's name (``self``, ``other``, ...)   that input's forward value
    ``result``                                  the forward output
    an attribute's name (``dim``, ``keepdim``)  the op's non-tensor argument
    ``<input>_shape``                           that input's shape

Only what the formulas of inputs that need a gradient name is saved, and with the
version check of Note [saved tensor versions].

Note [one formula, two namespaces]
    Without create_graph, formulas run with F = ARRAY_NS on ndarrays (fast, nothing
    recorded); with create_graph, F = TENSOR_NS on chainrule Tensors, so the backward
    is itself differentiable. Formulas therefore use operators and F.<name>(...) only.

Markers: NONDIFF (the input is not differentiable, e.g. an index) and NOT_IMPLEMENTED
(differentiable in principle, formula missing: backward raises the reference's error,
Note [derivatives the reference does not implement]).
"""
import functools
import inspect
import threading

import numpy as np

from .. import _grad_mode
from .._tensor import Tensor, _as_data, zeros_on
from .._version_counter import counter_of
from ..autograd import anomaly_mode
from ..autograd.engine import needed_edges
from ..autograd.hooks import RemovableHandle
from ..autograd.node import Node, _sequence, grad_accumulator, gradient_edge, next_sequence_nr
from ..autograd.saved_tensor import FREED_MESSAGE, RawSavedTensor, SavedTensor


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class NotImplementedFormula(_Marker):
    """Note [derivatives the reference does not implement]
        NOT_IMPLEMENTED stands for an op the reference has no derivative for at all:
        backward raises its RuntimeError "derivative for aten::<name> is not
        implemented", forward mode its NotImplementedError "Trying to use forward AD
        with aten::<name> that does not support it." (``aten``: the reference's name
        where the table's differs). ``not_implemented(text)`` is the reference's
        explicit not_implemented entry: backward raises NotImplementedError "the
        derivative for '<text>' is not implemented.", forward mode "... because it has
        not been implemented yet.". Every such marker equals NOT_IMPLEMENTED."""

    def __init__(self, text=None, aten=None):
        super().__init__("NOT_IMPLEMENTED")
        self.text, self.aten = text, aten

    def __eq__(self, other):
        return isinstance(other, NotImplementedFormula)

    __hash__ = object.__hash__

    def backward_error(self, op):
        if self.text is None:
            return RuntimeError(f"derivative for aten::{self.aten or op.name} is not "
                                "implemented")
        return NotImplementedError(f"the derivative for '{self.text}' is not implemented.")

    def forward_error(self, op):
        if self.text is None:
            return NotImplementedError(f"Trying to use forward AD with aten::"
                                       f"{self.aten or op.name} that does not support it.")
        return NotImplementedError(f"Trying to use forward AD with {self.aten or op.name} that "
                                   "does not support it because it has not been implemented "
                                   "yet.")


def not_implemented(text=None, aten=None):
    """A derivative marker raising the reference's error (Note [derivatives the
    reference does not implement])."""
    return NotImplementedFormula(text, aten)


def raised_by_marker(op, error):
    """Whether ``error`` is one of ``op``'s NotImplementedFormula markers' errors (tests
    and tools tell the table's documented refusals from real failures with it)."""
    markers = [m for m in op.vjps + (op.jvp,) if type(m) is NotImplementedFormula]
    return any(type(error) is type(e) and str(error) == str(e) for m in markers
               for e in (m.backward_error(op), m.forward_error(op)))


NONDIFF = _Marker("NONDIFF")
NOT_IMPLEMENTED = NotImplementedFormula()

OPS = {}          # name -> OpDef, the whole table (tests are generated from it)


class Formula:
    """A VJP or JVP formula and the names of the values it needs."""

    __slots__ = ("fn", "names")

    def __init__(self, fn):
        self.fn = fn
        self.names = tuple(inspect.signature(fn).parameters)[2:]

    def __call__(self, F, g, env):
        return self.fn(F, g, *[env[n] for n in self.names])


class OpDef:
    """One entry of the derivative table."""

    def __init__(self, name, forward, inputs, vjp, jvp, attrs, node_name, multi_output):
        self.name = name
        self.forward = forward
        self.inputs = inputs
        self.attrs = attrs
        self.multi_output = multi_output
        self.vjps = tuple(v if isinstance(v, _Marker) else Formula(v) for v in vjp)
        self.jvp = jvp if jvp is None or isinstance(jvp, _Marker) else Formula(jvp)
        if len(self.vjps) != len(inputs):
            raise ValueError(f"{name}: {len(inputs)} inputs but {len(self.vjps)} VJP formulas")
        self.shape_keys = tuple(n + "_shape" for n in inputs)
        self.node_cls = type(node_name or _node_name(name), (OpNode,), {"__slots__": ()})
        self.node_cls._op = self
        # bit i of a needs-mask stands for input i; 0 for inputs with no formula
        self.differentiable = tuple(0 if isinstance(v, _Marker) else 1 << i
                                    for i, v in enumerate(self.vjps))
        self.listed = tuple(v is not NONDIFF for v in self.vjps)      # in next_functions
        # a list indexed by mask; for variadic ops with many inputs (a stack of 200
        # tensors) a dict that answers None for masks not planned yet
        self.plans = [None] * (1 << len(inputs)) if len(inputs) <= 12 else _Plans()

    def saved_plan(self, mask):
        """(input (index, name) pairs to save, whether to save the result) for the
        inputs whose bit is set in ``mask`` (cached in ``plans``)."""
        names = set()
        for i, formula in enumerate(self.vjps):
            if mask >> i & 1 and isinstance(formula, Formula):
                names.update(formula.names)
        inputs = tuple((i, n) for i, n in enumerate(self.inputs) if n in names)
        plan = self.plans[mask] = (inputs, "result" in names)
        return plan

    def __repr__(self):
        return f"<op {self.name}>"


class _Plans(dict):
    """OpDef.plans for ops with many inputs: missing masks read as None."""

    def __missing__(self, mask):
        return None


def _node_name(name):
    return "".join(part.capitalize() for part in name.split("_")) + "Backward0"


def defop(name, forward, inputs=("self",), vjp=None, jvp=None, attrs=(), node_name=None,
          multi_output=False):
    """Register an op in the derivative table and return its OpDef."""
    op = OpDef(name, forward, tuple(inputs), tuple(vjp), jvp, tuple(attrs), node_name,
               multi_output)
    OPS[name] = op
    return op


class OpNode(Node):
    """The backward node of a table op (subclassed per op, e.g. MulBackward0)."""

    __slots__ = ("_saved", "_attrs", "_in_meta", "_out_meta")
    _op = None

    @property
    def next_functions(self):
        """Node.next_functions without the inputs that have no derivative (indices, a
        condition, running statistics), as the reference lists them."""
        return tuple(e if e is not None else (None, 0)
                     for e, listed in zip(self._next, self._op.listed) if listed)

    def release_saved(self):
        if self._saved:
            self._saved = None

    def num_inputs(self):
        return len(self._out_meta) if self._out_meta is not None else 1

    def apply(self, grads, create_graph):
        op = self._op
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        env = dict(self._attrs)
        for key, (shape, _) in zip(op.shape_keys, self._in_meta):
            env[key] = shape
        if create_graph:
            F = TENSOR_NS
            for key, s in saved.items():
                env[key] = s.as_tensor(self)
            grads = [_as_tensor(g) for g in grads]
        else:
            F = ARRAY_NS
            for key, s in saved.items():
                env[key] = s.array(self)
        if op.multi_output:
            g = self._materialize(grads, create_graph)
        else:
            g = grads[0]
            if g is None:
                return [None] * len(self._next)
        wanted = needed_edges(self)
        return [None if edge is None or (wanted is not None and not wanted[i])
                else _run_vjp(op, i, F, g, env) for i, edge in enumerate(self._next)]

    def _materialize(self, grads, create_graph):
        """Zeros for undefined output gradients (the engine hands a node that no
        gradient reached a single None, whatever its number of outputs)."""
        out = []
        if len(grads) < len(self._out_meta):
            grads = list(grads) + [None] * (len(self._out_meta) - len(grads))
        like = next((g for g in grads if g is not None), None)
        if like is None and self._saved:     # no gradient arrived: a saved value's device
            like = next(iter(self._saved.values())).array(self)
        like = like._data if isinstance(like, Tensor) else like
        for g, (shape, dtype) in zip(grads, self._out_meta):
            if g is None:
                g = zeros_on(shape, dtype, like)      # on the gradients' device
                g = Tensor._wrap(g) if create_graph else g
            out.append(g)
        return out

    # Saved values readable as attributes, like the reference's ``_saved_self`` (and
    # ``_raw_saved_self``, the saved tensor itself, for its hooks).
    def __getattr__(self, attr):
        if attr.startswith("_raw_saved_"):
            return _raw_saved(self, attr[len("_raw_saved_"):])
        if attr.startswith("_saved_"):
            key = attr[len("_saved_"):]
            saved = object.__getattribute__(self, "_saved")
            if saved is None:
                raise RuntimeError(FREED_MESSAGE)
            if key in saved:
                return _saved_value(self, saved[key])
            attrs = object.__getattribute__(self, "_attrs")
            if key in attrs:
                return attrs[key]
            if key in self._op.inputs or key == "result":
                return None          # declared but not needed by this call, like the reference
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")


def _saved_value(node, saved):
    """A saved tensor as ``_saved_<name>`` reads it: None for an absent optional input,
    the reference's undefined tensor (Note [absent tensor input])."""
    from ._common import ABSENT           # _common imports this module
    return None if saved.tensor is ABSENT else saved.as_tensor(node)


def _raw_saved(node, key):
    saved = object.__getattribute__(node, "_saved")
    if saved is None or key in saved:          # freed: its methods say so, like the reference
        return RawSavedTensor(node, lambda n: n._saved[key] if n._saved else None)
    if key in node._op.inputs or key == "result":
        return None              # declared but not needed by this call
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '_raw_saved_{key}'")


def _run_vjp(op, index, F, g, env):
    formula = op.vjps[index]
    if formula is NONDIFF:
        return None
    if type(formula) is NotImplementedFormula:
        raise formula.backward_error(op)
    return formula(F, g, env)


def _as_tensor(g):
    if g is None or isinstance(g, Tensor):
        return g
    return Tensor._wrap(g)


edge_of = gradient_edge


def apply_op(op, inputs, attrs, result_is_view_of=None):
    """Run an op's forward on ``inputs`` (Tensors) and record it when needed.

    The hot path of every op: keep it free of work that only rare features need
    (one check for the layers of Note [dispatch slot]).
    """
    if _dispatch is not None:
        return _dispatch(op, inputs, attrs, result_is_view_of)
    return run_op(op, inputs, attrs, result_is_view_of)


def run_op(op, inputs, attrs, result_is_view_of=None):
    """apply_op without the dispatchers: the forward, then the recording."""
    if len(inputs) == 2:
        out = op.forward(inputs[0]._data, inputs[1]._data, **attrs)
    else:
        out = op.forward(*[t._data for t in inputs], **attrs)
    if _grad_mode.STATE.grad_enabled:
        for t in inputs:
            if t._requires_grad:
                return _recorder(op, inputs, attrs, out, result_is_view_of)
    if _grad_mode.STATE.inference:
        return _wrap_inference(op, out)
    if op.multi_output:
        return tuple(_plain_output(o, result_is_view_of) for o in out)
    return _plain_output(out, result_is_view_of)


def _plain_output(arr, base):
    t = Tensor._wrap(arr)
    if base is not None:
        _link_view(t, base)
    return t


def _link_view(view, base):
    root = view_root(base)
    view._base = root
    view._vc = counter_of(root)


# Note [views of a detached tensor]
#     ``_base`` links a view to the root its view_fn replays from. A view's view is
#     linked to that root too, but a tensor that shares memory without being a view
#     (``detach()``: its ``_base`` is None, as in the reference, and its memory's root
#     is in ``_extra.memory`` for storage_offset, as_strided and the saved-array locks,
#     Note [read-only saved arrays]; ``memory_root`` reads it) is the root of its own
#     views, as in the reference: their view_fns are relative to it, and an in-place
#     write into one of them gives IT the CopySlices history, never the tensor it was
#     detached from. The test: whether the base has a view_fn.
def view_root(base):
    """The root a view of ``base`` is linked to (Note [views of a detached tensor])."""
    root, extra = base._base, base._extra
    if root is None or extra is None or extra.view_fn is None:
        return base
    return root


def _wrap_inference(op, out):
    outs = out if op.multi_output else (out,)
    tensors = []
    for arr in outs:
        t = Tensor._wrap(arr)
        t._extras().inference = True
        tensors.append(t)
    return tuple(tensors) if op.multi_output else tensors[0]


def _record(op, inputs, attrs, out, view_base):
    """Make the op's node and its output tensor(s): the per-op recording cost, so it
    is written out flat (no helper calls on the common path)."""
    node_cls = op.node_cls
    node = node_cls.__new__(node_cls)
    node._seq = next(_sequence)
    edges, metas = [], []
    mask = 0                        # bit i: input i needs a gradient (has a formula)
    differentiable = op.differentiable
    for i, t in enumerate(inputs):
        fn = t.grad_fn
        if fn is not None:
            edges.append((fn, t._output_nr))
            mask |= differentiable[i]
        elif t._requires_grad:
            acc = grad_accumulator(t)
            edges.append((acc, 0) if acc is not None else None)     # NO_ACCUMULATOR
            mask |= differentiable[i]
        else:
            edges.append(None)
        data = t._data
        metas.append((data.shape, data.dtype))
    node._next = tuple(edges)
    node._in_meta = metas
    node._attrs = attrs
    if anomaly_mode.STATE.enabled:
        anomaly_mode.record_forward_trace(node)
    saved_inputs, save_result = op.plans[mask] or op.saved_plan(mask)
    saved = {name: SavedTensor(inputs[i], False) for i, name in saved_inputs} \
        if saved_inputs else {}
    if op.multi_output:
        node._out_meta = tuple((o.shape, o.dtype) for o in out)
        outs = tuple(_output(o, node, k, view_base) for k, o in enumerate(out))
    else:
        node._out_meta = None
        if type(out) is np.ndarray and view_base is None and out.dtype.kind not in "biu":
            outs = object.__new__(Tensor)          # Tensor._make_output, inlined
            outs._data = out
            outs.grad_fn = node
            outs._output_nr = 0
            outs._requires_grad = True
            outs._grad = outs._base = outs._extra = outs._vc = None
        else:
            outs = _output(out, node, 0, view_base)
        if save_result:
            saved["result"] = SavedTensor(outs, True, 0)
    node._saved = saved
    return outs


# Note [recording slot]
#     apply_op records through ``_recorder``, which a layer may replace (the C++
#     engine installs a C implementation of ``_record``). ``_record`` stays the
#     reference implementation and the default; a replacement must give identical
#     results and may call ``_record`` for any case it does not handle.
_recorder = _record


def set_recorder(fn):
    """Recording slot: install ``fn(op, inputs, attrs, out, view_base)`` in place of
    ``_record`` (None restores it); returns the previous recorder."""
    global _recorder
    previous = _recorder
    _recorder = _record if fn is None else fn
    return previous


def _output(arr, node, output_nr, view_base):
    if type(arr) is not np.ndarray:
        arr = _as_data(arr)                    # Note [device arrays]
    if arr.dtype.kind in "biu":
        t = Tensor._wrap(arr)          # integer outputs (indices) are not differentiable
    else:
        t = Tensor._make_output(arr, node, output_nr)
    if view_base is not None:
        _link_view(t, view_base)
    return t


# Note [dispatch slot]
#     A layer that must see every table op as it runs (the profiler's observer,
#     forward AD's tangents, compat's volatile inputs) registers a dispatcher with
#     ``add_dispatcher(fn)``. apply_op then calls ``fn(run, op, inputs, attrs,
#     view_base)`` instead of running the op; ``fn`` runs it by calling ``run(op,
#     inputs, attrs, view_base)`` (the next dispatcher, the last one run_op) and may
#     look at or change what goes in and what comes out. Dispatchers nest in
#     registration order, the first registered outermost.
#     A layer registers only while it is active (a profile open, a dual level
#     entered, a volatile tensor alive) and removes its dispatcher afterwards: with
#     none registered ``_dispatch`` is None, apply_op pays one check, and the fast
#     paths that bypass apply_op (the in-place fast path, the C++ engine's fast
#     methods) run only while it is None.
_dispatch = None
_DISPATCHERS = {}        # handle id -> fn, in registration order
_DISPATCH_LOCK = threading.Lock()


class DispatcherHandle(RemovableHandle):
    """What ``add_dispatcher`` returns: ``.remove()`` unregisters the dispatcher."""

    __slots__ = ()

    def remove(self):
        with _DISPATCH_LOCK:
            self._table.pop(self.id, None)
            _compose_dispatchers()


def add_dispatcher(fn):
    """Dispatch slot (Note [dispatch slot]): run every table op through
    ``fn(run, op, inputs, attrs, view_base)`` until the returned handle is removed.

    >>> import chainrule as cr
    >>> from chainrule._ops import _registry
    >>> seen = []
    >>> def observe(run, op, inputs, attrs, view_base):
    ...     seen.append(op.name)
    ...     return run(op, inputs, attrs, view_base)
    >>> with _registry.add_dispatcher(observe):
    ...     _ = cr.ones(2) * 2
    >>> seen
    ['mul']
    """
    with _DISPATCH_LOCK:
        handle = DispatcherHandle(_DISPATCHERS, fn)
        _compose_dispatchers()
    return handle


def _compose_dispatchers():
    global _dispatch
    run = run_op
    for fn in reversed(list(_DISPATCHERS.values())):
        run = functools.partial(fn, run)
    _dispatch = run if _DISPATCHERS else None


# Filled in by _ops/_namespaces.py once every op exists.
ARRAY_NS = None
TENSOR_NS = None
