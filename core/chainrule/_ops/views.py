"""Views and in-place ops on them.

Note [views share memory and version]
    A view op's output shares its base's memory (a NumPy view) and its version
    counter; ``_base`` points at the root base (never at another view). The view
    remembers how to re-make itself from the root (``view_fn``, a function that works
    on ndarrays and on Tensors alike: ``view_fn(root)`` gives the same elements).
    Views made while grad mode is on are also listed (weakly) on their root, so that
    an in-place change of the root can re-point their history (see below).

Note [rebasing after in-place on a view]
    When an in-place op writes through a view V of root B and autograd is involved,
    B's history changes too. B gets a new grad_fn, CopySlices: of B's gradient, the
    part under V goes through the in-place op's backward (to the old values of V,
    which are B's old values there, and to the op's other inputs); the rest goes
    straight to B's previous history. Every live view of B (V included) then gets a
    fresh grad_fn, AsStridedBackward0, which takes its gradient to B's new history
    by scattering it into a zero tensor of B's shape. An in-place op on B itself
    re-points B's views the same way. (The reference does this lazily, when a stale
    view is next used; doing it eagerly costs one small node per live view.)

Note [gradients laid out like the root]
    A view_fn re-makes a view from its root with the root's memory layout: ``view(-1)``
    of a transposed view, say, exists only on that layout. A gradient of the root's
    shape may come in any layout (the gradient of ``y.t()`` arrives transposed), so
    CopySlices and AsStridedBackward0 first copy it into a buffer laid out like the
    root (the reference's ``new_empty_strided(base.sizes(), base.strides())``), and
    only then apply the view_fn. They keep the root's order of dimensions in memory
    (``_order``, None for C order), not the root itself.

Note [multi-output views]
    split/chunk/unbind return several views of one node. Like the reference, those
    may not be modified in place while autograd records (the error says why); under
    no_grad they may.

Note [how a view was made]
    A view's ``_extra.creation`` says how it was made, for the in-place writes the
    reference refuses while autograd records (``view_write_error`` words them):
    - None: by a single-output view op with grad mode on; a write is rebased (above);
    - NO_GRAD_VIEW: under no_grad. Of a tensor that requires grad it requires grad too,
      but it is a leaf with no accumulator (``grad_acc`` is NO_ACCUMULATOR): what
      flows to it goes nowhere, neither to it nor to its base;
    - MULTI_OUTPUT_VIEW: one of the views of Note [multi-output views], with grad mode
      on (under no_grad they are NO_GRAD_VIEW, as in the reference);
    - CUSTOM_FUNCTION_VIEW: returned by a custom Function's forward;
    - INFERENCE_VIEW: in inference mode, of a tensor that is not an inference tensor.
      Such a view is a normal tensor (not an inference tensor), shares its base's
      memory and version, and is otherwise made like a NO_GRAD_VIEW; the errors word
      the mode "inference mode" and the other one "normal mode".
    A view of a view keeps its base's mark unless its own making gives one, and an
    INFERENCE_VIEW mark is never replaced (the reference's creation meta propagates
    the same way). Inference tensors keep no view links and no mark.
"""
import re
import weakref

import numpy as np

from .. import _grad_mode
from .._tensor import Tensor, on_device_of
from ..autograd._sum_to import sum_to
from ..autograd.node import CPP_NAMESPACE, NO_ACCUMULATOR, Node
from .._tensor import _Extras
from .._version_counter import counter_of
from ..autograd.saved_tensor import FREED_MESSAGE
from . import _registry
from ._registry import OpNode, apply_op, edge_of

NO_GRAD_VIEW = "no_grad"                    # Note [how a view was made]
MULTI_OUTPUT_VIEW = "multi_output"
CUSTOM_FUNCTION_VIEW = "custom_function"
INFERENCE_VIEW = "inference_mode"


def make_view(op, base, attrs, view_fn):
    """Apply a view op to ``base`` and link the result(s) to the root base.

    ``view_fn`` re-makes the output from ``base``; for a multi-output op it is a
    sequence with one function per output. (The hot path of every view op: see Note
    [view fast path].)"""
    fast = _FAST_OPS.get(op)
    if fast is None:
        fast = _fast_op(op)
    if not fast or _registry._dispatch is not None:
        return _make_views(op, base, attrs, view_fn)
    arr = op.forward(base._data, **attrs)
    state = _grad_mode.STATE
    extra = base._extra
    if state.grad_enabled and base._requires_grad:
        out = _registry._recorder(op, (base,), attrs, arr, None)
    elif state.inference and extra is not None and extra.inference:
        out = _registry._wrap_inference(op, arr)
        out._extra.view_fn = _compose(extra.view_fn, view_fn)
        return out
    else:
        out = Tensor._wrap(arr)
    root = base._base     # _registry.view_root inlined (Note [views of a detached tensor])
    if root is None or extra is None or extra.view_fn is None:
        root = base
    out._base = root
    vc = root._vc
    out._vc = vc if vc is not None else counter_of(root)
    out_extra = out._extra = _Extras()
    if extra is None:
        out_extra.view_fn = view_fn
    else:
        out_extra.view_fn = _compose(extra.view_fn, view_fn)
        out_extra.inference = extra.inference      # a view of an inference tensor is one
        out_extra.creation = extra.creation        # Note [how a view was made]
    if state.grad_enabled:
        _register(out)
    elif state.inference:
        _made_in_inference_mode(out, base)
    else:
        _made_under_no_grad(out, base)
    return out


def _made_under_no_grad(view, base):
    """Mark a view made under no_grad (Note [how a view was made])."""
    extra = view._extra
    if extra.inference:
        return                    # inference tensors keep no view links, nor marks
    if extra.creation != INFERENCE_VIEW:
        extra.creation = NO_GRAD_VIEW
    if base._requires_grad:
        view._requires_grad = True
        extra.grad_acc = NO_ACCUMULATOR


def _made_in_inference_mode(view, base):
    """Mark a view made in inference mode of a tensor that is not an inference tensor
    (Note [how a view was made]); apply_op made it an inference tensor, with no links."""
    if base._extra is not None and base._extra.inference:
        return                    # a view of an inference tensor is one
    extra = view._extras()
    if extra.inference:
        extra.inference = False
        _registry._link_view(view, base)
    extra.creation = INFERENCE_VIEW
    _made_under_no_grad(view, base)           # the rest as a no_grad view (the mark kept)


# Note [view fast path]
#     make_view runs a single-output view op itself rather than through apply_op
#     (only while no dispatcher is registered, Note [dispatch slot]): the forward,
#     then the recorder with no view base, so that the C++ recorder's fast path takes
#     it, then the links of Note [views share memory and version], set once here. The
#     output's version counter is set after recording, so an op whose backward saves
#     its result takes the general path (as do multi-output ops).
_FAST_OPS = {}      # OpDef -> whether make_view runs it itself


def _fast_op(op):
    saves_result = (op.plans[1] or op.saved_plan(1))[1]
    fast = _FAST_OPS[op] = not (op.multi_output or saves_result or len(op.inputs) != 1)
    return fast


# Note [view maker slot]
#     The view ops (shape.py, indexing.py, elementwise.py) call ``make_view`` by the
#     name they imported; a layer may put a faster implementation in its place with
#     ``set_view_maker(fn)`` (the C++ engine installs one in C). ``make_view`` stays
#     the reference and the default; a replacement must give identical results and
#     may call ``make_view`` for any case it does not handle.
_MAKER_MODULES = ("shape", "indexing", "elementwise")


def set_view_maker(fn):
    """View maker slot (Note [view maker slot]): the view ops call ``fn(op, base,
    attrs, view_fn)`` in place of ``make_view`` (None restores it); returns the
    previous maker.

    >>> import chainrule as cr
    >>> from chainrule._ops import views
    >>> made = []
    >>> def maker(op, base, attrs, view_fn):
    ...     made.append(op.name)
    ...     return views.make_view(op, base, attrs, view_fn)
    >>> previous = views.set_view_maker(maker)
    >>> _ = cr.ones(2, 3).t()
    >>> _ = views.set_view_maker(previous)
    >>> made
    ['t']
    """
    import importlib
    modules = [importlib.import_module(f"{__package__}.{name}") for name in _MAKER_MODULES]
    previous = modules[0].make_view
    for module in modules:
        module.make_view = make_view if fn is None else fn
    return None if previous is make_view else previous


def _make_views(op, base, attrs, view_fn):
    """make_view through apply_op: multi-output views, dispatchers, saved results."""
    out = apply_op(op, (base,), attrs, result_is_view_of=base)
    if op.multi_output:
        for o, fn in zip(out, view_fn):
            _link_extras(o, base, fn, MULTI_OUTPUT_VIEW)
        return out
    _link_extras(out, base, view_fn, None)
    return out


def _link_extras(view, base, view_fn, creation):
    """make_view's view_fn, inference flag and creation mark on ``view`` (an output of
    apply_op); ``creation``: what the op itself makes (Note [how a view was made])."""
    extra = base._extra
    out_extra = view._extras()
    out_extra.view_fn = _compose(extra.view_fn if extra is not None else None, view_fn)
    out_extra.inference = out_extra.inference or (extra is not None and extra.inference)
    if _grad_mode.STATE.grad_enabled:
        previous = extra.creation if extra is not None else None
        out_extra.creation = previous if previous == INFERENCE_VIEW else creation or previous
        _register(view)
    elif _grad_mode.STATE.inference:
        _made_in_inference_mode(view, base)
    else:
        out_extra.creation = extra.creation if extra is not None else None
        _made_under_no_grad(view, base)


def _compose(first, second):
    if first is None:
        return second
    return lambda x: second(first(x))


def _register(view):
    """List the view on its root (weakly) so in-place ops can re-point it."""
    root = view._base
    if root is None or not _grad_mode.STATE.grad_enabled:
        return
    extra = root._extras()
    refs = extra.views
    if refs is None:
        extra.views = [weakref.ref(view)]
        return
    refs.append(weakref.ref(view))
    n = len(refs)
    if n >= 64 and n & (n - 1) == 0:        # prune dead entries now and then
        refs[:] = [r for r in refs if r() is not None]


def check_view_inplace(t, result):
    """Errors of in-place ops on views, raised before anything is written."""
    check_view_write(t, result.grad_fn is not None)


def check_view_write(t, records):
    """``records``: whether the in-place op will be recorded (some input needs grad)."""
    arr = t._data
    if not arr.flags.writeable and any(s == 0 and n > 1 for s, n in zip(arr.strides, arr.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    extra = t._extra
    if extra is not None and extra.creation is not None and records and \
            _grad_mode.STATE.grad_enabled:
        raise view_write_error(t)


def _mode_advice(block):
    """The advice after refusing a write into a view made in another grad mode."""
    return (" Given that this use case is ambiguous and error-prone, it is forbidden. You can "
            "clarify your code by moving both the view and the inplace either both inside the "
            f"{block} block (if you don't want the inplace to be tracked) or both outside (if "
            "you want the inplace to be tracked).")


_CREATION_ADVICE = {
    NO_GRAD_VIEW: _mode_advice("no_grad"),
    INFERENCE_VIEW: _mode_advice("inference_mode"),
    MULTI_OUTPUT_VIEW: " This view is the output of a function that returns multiple views. "
    "Such functions do not allow the output views to be modified inplace. You should "
    "replace the inplace operation by an out-of-place one.",
    CUSTOM_FUNCTION_VIEW: " This view was created inside a custom Function (or because an "
    "input was returned as-is) and the autograd logic to handle view+inplace would "
    "override the custom backward associated with the custom Function, leading to "
    "incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
    "output of the custom Function.",
}


_MODE_WORDS = {NO_GRAD_VIEW: ("no_grad mode", "with grad mode enabled"),
               INFERENCE_VIEW: ("inference mode", "in normal mode")}


def view_write_error(t):
    """The reference's refusal of an in-place write into view ``t`` that autograd would
    record, worded after how t was made (Note [how a view was made])."""
    creation, fn = t._extra.creation, t.grad_fn
    name = f"Output {t._output_nr} of {_forward_name(fn)}" if fn is not None else None
    if fn is None or creation in _MODE_WORDS:
        prefix = "A view was created in" if fn is None else \
            f"{name} is a view of a view which was created in"
        made_in, written_in = _MODE_WORDS.get(creation, _MODE_WORDS[NO_GRAD_VIEW])
        head = f"{prefix} {made_in} and is being modified inplace {written_in}."
    else:
        head = f"{name} is a view and is being modified inplace."
    return RuntimeError(head + _CREATION_ADVICE[creation])


def _forward_name(node):
    """The op a node records, as the reference's messages name it: ``Unbind`` for
    UnbindBackward0, ``MyFn`` for a custom Function's MyFnBackward."""
    return re.sub(r"Backward\d*$", "", node.name())


def rebase_inplace(t, result):
    """Make ``t`` (just written in place) carry ``result``'s history (see Note
    [rebasing after in-place on a view])."""
    root = t._base
    view_fn = t._extra.view_fn if t._extra is not None else None
    if root is None or view_fn is None:
        _adopt(t, result.grad_fn, result._output_nr)
        _refresh_views(t, None)
        return
    node = CopySlices.make(edge_of(root), edge_of(t), view_fn, result, root)
    _adopt(root, node, 0)
    _adopt(t, *_view_history(root, view_fn))
    _refresh_views(root, t)


def _view_history(root, view_fn):
    """(grad_fn, output_nr) of a view of ``root`` once root's history changed:
    AsStridedBackward0, or, with view replay on (``autograd._force_original_view_tracking``),
    the view's own ops replayed on root (SelectBackward0, ...), as the reference does."""
    from ..autograd.grad_mode import SWITCHES
    if not SWITCHES.view_replay:
        return AsStridedBackward0(root, view_fn), 0
    with _grad_mode.enable_grad():
        replayed = view_fn(root)
    return replayed.grad_fn, replayed._output_nr


def _adopt(t, node, output_nr):
    """Give ``t`` a new history; ``retain_grad`` follows the tensor (its ``.grad`` is
    then the gradient of the new values, like the reference)."""
    if t._extra is not None and t._extra.retains_grad:
        _move_retain_hook(t, node, output_nr)
    t.grad_fn = node
    t._output_nr = output_nr
    t._requires_grad = True


def _move_retain_hook(t, node, output_nr):
    old = t.grad_fn
    hooks = old._retain_hooks if old is not None else None
    retain = hooks.pop(t._output_nr, None) if hooks else None
    if retain is None or node is None:
        return
    if node._retain_hooks is None:
        node._retain_hooks = {}
    node._retain_hooks[output_nr] = retain


def _refresh_views(root, done):
    """Give every live view of ``root`` (but ``done``) a grad_fn into root's history."""
    extra = root._extra
    refs = extra.views if extra is not None else None
    if not refs:
        return
    live = []
    for ref in list(refs):           # a view replay lists (and drops) temporary views
        v = ref()
        if v is None:
            continue
        live.append(ref)
        fn = v._extra.view_fn if v._extra is not None else None
        if v is not done and fn is not None:
            _adopt(v, *_view_history(root, fn))
    refs[:] = live


def overlapping(arr):
    """Whether some elements of ``arr`` share memory (a stride 0, overlapping windows
    of unfold or as_strided). Conservative: may say True for exotic layouts that do
    not overlap, which only costs the slower, still correct, summing path."""
    if arr.size == 0:
        return False
    span = arr.itemsize
    for stride, n in sorted((abs(s), n) for s, n in zip(arr.strides, arr.shape) if n > 1):
        if stride < span:
            return True
        span += stride * (n - 1)
    return False


def memory_order(arr):
    """``arr``'s dimensions from outermost to innermost in memory; None for C order."""
    if arr.flags.c_contiguous:
        return None
    strides = arr.strides
    return tuple(sorted(range(arr.ndim), key=lambda d: -abs(strides[d])))


def _laid_out(make, shape, dtype, order):
    """``make(shape, dtype)`` in the memory order ``order`` (Note [gradients laid out
    like the root])."""
    if order is None:
        return make(shape, dtype)
    return make(tuple(shape[d] for d in order), dtype).transpose(np.argsort(order))


def _memory(arr, order):
    """The elements of ``arr`` (laid out in ``order``) in memory order, as a 1-D view."""
    return (arr if order is None else arr.transpose(order)).reshape(-1)


def _like_root(g, shape, order):
    """A copy of the gradient ``g`` (ndarray or Tensor) laid out in the root's order."""
    if isinstance(g, Tensor):
        if order is None:
            return g.clone() if g._data.flags.c_contiguous else g.contiguous()
        out = Tensor._wrap(_laid_out(np.empty, shape, g._data.dtype, order))
        return out.copy_(g)
    out = _laid_out(lambda s, d: on_device_of(np.empty(s, d), g), shape, g.dtype, order)
    out[...] = g
    return out


class AsStridedBackward0(Node):
    """grad_fn of a view whose root was changed in place: scatters the view's
    gradient into a zero gradient of the root's shape."""

    __slots__ = ("view_fn", "_in_meta", "_index_map", "_order")

    def __init__(self, root, view_fn):
        Node.__init__(self, (edge_of(root),))
        self.view_fn = view_fn
        self._in_meta = ((root._data.shape, root._data.dtype),)
        self._index_map = None
        self._order = memory_order(root._data)    # Note [gradients laid out like the root]

    def apply(self, grads, create_graph):
        g = grads[0]
        if g is None:
            return [None]
        shape, dtype = self._in_meta[0]     # the root's dtype: a view may have another
        if create_graph:                       # (view_as_real, view_as_complex)
            return [self._scatter_tensor(g, shape, dtype)]
        out = _laid_out(np.zeros, shape, dtype, self._order)
        region = self.view_fn(out)
        if region.flags.writeable and not overlapping(region):
            region[...] = g
        else:                      # overlapping elements (expand, unfold): sum them
            np.add.at(_memory(out, self._order), self.index_map(shape), g)
        return [out]

    def _scatter_tensor(self, g, shape, dtype):
        from ._common import FUNCTIONS
        order = self._order
        out = Tensor._wrap(_laid_out(np.zeros, shape, dtype, order))
        region = self.view_fn(out)
        if region._data.flags.writeable and not overlapping(region._data):
            region.copy_(g)
            return out
        if order is None:
            flat = FUNCTIONS["_index_put"](out.reshape(-1), (self.index_map(shape),), g, True)
            return flat.reshape(shape)
        flat = FUNCTIONS["_index_put"](out.permute(order).reshape(-1),
                                       (self.index_map(shape),), g, True)
        return flat.reshape(tuple(shape[d] for d in order)).permute(
            tuple(int(d) for d in np.argsort(order)))

    def index_map(self, shape):
        """For each element of the view, its position in the root's memory."""
        if self._index_map is None:
            n = int(np.prod(shape))
            positions = _laid_out(lambda s, dtype: np.arange(n).reshape(s), shape, None,
                                  self._order)
            self._index_map = np.array(self.view_fn(positions))
        return self._index_map


class CopySlices(Node):
    """grad_fn of a root after an in-place op on one of its views.

    Two layouts: when the in-place op's node ``fn`` is a table op that takes the view
    as its first input (the usual case, like the reference), CopySlices calls ``fn``
    itself on the view's part of the gradient and forwards fn's other inputs;
    otherwise it sends that part to ``fn`` along an ordinary edge (``fn`` then reaches
    the view's old history by itself).

    Note [CopySlices shares fn's saved values]
        After a create_graph backward, tensors rebuilt from fn's saved outputs have
        ``fn`` as grad_fn, so a later backward may run ``fn`` directly as well as
        through CopySlices, in either order. CopySlices therefore keeps its own
        reference to fn's saved values and, once fn may be shared that way, leaves
        releasing fn's own reference to the engine.
    """

    __slots__ = ("view_fn", "fn", "direct", "_in_meta", "_fn_saved", "_shared", "_order")
    _name_prefix = CPP_NAMESPACE         # Note [node names]

    @classmethod
    def make(cls, root_edge, view_edge, view_fn, result, root):
        fn = result.grad_fn
        meta = (root._data.shape, root._data.dtype)
        direct = (isinstance(fn, OpNode) and result._output_nr == 0 and fn.num_inputs() == 1
                  and fn._next and fn._next[0] == view_edge)
        node = cls.__new__(cls)
        if direct:
            Node.__init__(node, (root_edge,) + tuple(fn._next[1:]))
            node._in_meta = (meta,) + tuple(fn._in_meta[1:])
            node._fn_saved = fn._saved
        else:
            Node.__init__(node, (root_edge, (fn, result._output_nr)))
            node._in_meta = (meta, (result._data.shape, result._data.dtype))
            node._fn_saved = None
        node.view_fn, node.fn, node.direct, node._shared = view_fn, fn, direct, False
        node._order = memory_order(root._data)    # Note [gradients laid out like the root]
        return node

    def apply(self, grads, create_graph):
        g = grads[0]
        if g is None:
            return [None] * len(self._next)
        if self.direct and self._fn_saved is None:
            raise RuntimeError(FREED_MESSAGE)
        if create_graph:
            return self._apply_tensor(g)
        out = _like_root(g, self._in_meta[0][0], self._order)
        region = self.view_fn(out)
        part = region.copy()
        if not self.direct:
            region[...] = 0
            return [out, part]
        inner = self._call_fn(part, False)
        region[...] = 0 if inner[0] is None else sum_to(inner[0], region.shape)
        return [out] + list(inner[1:])

    def _apply_tensor(self, g):
        out = _like_root(g, self._in_meta[0][0], self._order)
        region = self.view_fn(out)
        part = region.clone()
        if not self.direct:
            region.zero_()
            return [out, part]
        inner = self._call_fn(part, True)
        if inner[0] is None:
            region.zero_()
        else:
            region.copy_(sum_to(inner[0], tuple(region._data.shape)))
        return [out] + list(inner[1:])

    def _call_fn(self, part, create_graph):
        """fn's backward on the view's part (Note [CopySlices shares fn's saved values])."""
        fn = self.fn
        released = fn._saved is None
        if released:
            fn._saved = self._fn_saved
        # fn's first input gradient goes where CopySlices' first edge points (a pass
        # limited by ``inputs=`` decides from the edges whether it is wanted).
        edges = fn._next
        fn._next = self._next[:1] + edges[1:]
        try:
            return fn.apply([part], create_graph)
        finally:
            fn._next = edges
            if released:
                fn._saved = None
            self._shared = self._shared or create_graph

    def release_saved(self):
        if self.direct and self._fn_saved:
            self._fn_saved = None
            if not self._shared:
                self.fn.release_saved()
