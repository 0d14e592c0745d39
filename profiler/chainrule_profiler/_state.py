"""What the profiler sees while a profile (or emit_nvtx/emit_itt) is active.

Note [profiler observation]
    Core is observed through its two slots, never patched: every table op runs
    through ``_dispatch`` (core's Note [dispatch slot]) and every backward node, and
    every custom Function's forward, through ``_OBSERVER`` (core's Note [node observer
    slot], both engines). Both are registered while at least one sink is active and
    removed with the last one, so a process that is not profiling pays core's one
    check per op and per node. A sink is a Collector (a profile's recording) or an
    annotator (NVTX/ITT ranges). Each op or node becomes a range (Note [range
    record]) on its thread's stack of open ranges; the innermost open range is its
    parent, so events nest per thread, whichever thread opened the enclosing
    ``record_function``.

Note [reference event names]
    Events carry the names the reference's profiler gives them, so a table or a
    trace reads the same: a table op is ``aten::<name>`` (its overloads under one
    name, ``aten::pow`` for ``x ** 2`` and ``x ** y``); a backward node is its
    ``name()`` (core's Note [node names]: ``MulBackward0``,
    ``torch::autograd::AccumulateGrad``) inside a range
    ``autograd::engine::evaluate_function: <name>`` that stands for the engine's
    work on it, both carrying the node's sequence number; a custom Function's
    forward is its class name. A node's input shapes are those of the gradients it
    receives (``[]`` for one that did not arrive).
"""
import itertools
import os
import sys
import threading
import time
import weakref

from chainrule import _grad_mode
from chainrule._ops import _registry
from chainrule._tensor import Tensor
from chainrule.autograd import engine as _engine
from chainrule.autograd import node as _node

from ._flops import flops_of

now_ns = time.perf_counter_ns
_MODE = _grad_mode.STATE

# What a range stands for (FunctionEvent.kind): an op or a custom Function's forward,
# a backward node, the engine's evaluate_function range around one, a record_function.
FORWARD, BACKWARD, ENGINE, USER = "forward", "backward", "engine", "user"
EVALUATE_PREFIX = "autograd::engine::evaluate_function: "     # Note [reference event names]


# Note [range record]
#     A range (an op, a backward node, a record_function block) is a list, the
#     cheapest object to make on the per-op path (a class instance costs several
#     times more); these are its fields' indices. VIEW is the recording thread's
#     _View (its thread id and sinks); PARENT the enclosing range on that thread.
NAME, KIND, VIEW, PARENT, SEQ, START, END, SHAPES, STACK, MEMORY, FLOPS, ARGS = range(12)


def new_range(name, kind, view, parent, seq):
    """A range record (Note [range record]); the per-op paths write it out inline."""
    return [name, kind, view, parent, seq, 0, 0, None, None, 0, None, None]


class Collector:
    """The recording of one profile: finished ranges and free-memory records.

    ``all_threads=False`` keeps only the ranges of the thread that made it."""

    def __init__(self, *, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, all_threads=False):
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops = with_stack, with_flops
        self.all_threads = all_threads
        self.thread = threading.get_ident()
        self.ranges = []
        self.frees = []           # (ns, thread number, bytes): freed outside any range
        self.start_ns = self.end_ns = 0

    def wants(self, thread):
        return self.all_threads or thread == self.thread


class _View:
    """What one thread records under the active sinks, worked out once per change of
    the active set (so the per-op path reads flags instead of asking each sink)."""

    __slots__ = ("thread", "number", "sinks", "annotators", "shapes", "stack",
                 "flops", "memory", "inputs_detail", "outputs_detail")

    def __init__(self, local, sinks, annotators):
        self.thread, self.number = local.ident, local.number
        self.sinks, self.annotators = tuple(sinks), annotators
        self.shapes = bool(annotators) or any(c.record_shapes or c.with_flops for c in sinks)
        self.stack = any(c.with_stack for c in sinks)
        self.flops = any(c.with_flops for c in sinks)
        self.memory = any(c.profile_memory for c in sinks)
        self.inputs_detail = self.shapes or self.stack or bool(annotators)
        self.outputs_detail = self.flops or self.memory


class _Local(threading.local):
    def __init__(self):
        self.stack = []           # the thread's open ranges, innermost last
        self.version = -1         # the _version its view was made for
        self.view = None          # its _View, None when nothing records this thread
        self.ident = threading.get_ident()
        self.number = 0           # FunctionEvent.thread: given when it first records


# The reference numbers threads 1, 2, ... in the order they first record, the same
# numbers in every profile of the process (FunctionEvent.thread and fwd_thread).
_thread_numbers = itertools.count(1)


_local = _Local()
_collectors = ()                  # the active collectors (replaced, never mutated)
_annotators = ()                  # the active NVTX/ITT annotators
_version = 0                      # bumped on every change of the two
_lock = threading.Lock()
_handle = None                    # the dispatcher's handle while anything is active


def sinks_here(thread):
    """The active collectors that record ``thread``'s work."""
    return [c for c in _collectors if c.wants(thread)]


def thread_number(local):
    """The thread's number (see _thread_numbers), given at its first use."""
    if not local.number:
        local.number = next(_thread_numbers)
    return local.number


def _refresh(local):
    """This thread's view of the active sinks (None: nothing records it)."""
    version = _version
    sinks = sinks_here(local.ident)
    if sinks or _annotators:
        thread_number(local)
    local.view = _View(local, sinks, _annotators) if sinks or _annotators else None
    local.version = version
    return local.view


def activate(collector=None, annotator=None):
    """Start recording into ``collector`` / annotating with ``annotator``."""
    global _collectors, _annotators, _version
    with _lock:
        if collector is not None:
            collector.start_ns = now_ns()
            _collectors = _collectors + (collector,)
        if annotator is not None:
            _annotators = _annotators + (annotator,)
        _version += 1
        _update_slots()


def deactivate(collector=None, annotator=None):
    global _collectors, _annotators, _version
    with _lock:
        if collector is not None:
            collector.end_ns = now_ns()
            _collectors = tuple(c for c in _collectors if c is not collector)
        if annotator is not None:
            _annotators = tuple(a for a in _annotators if a is not annotator)
        _version += 1
        _update_slots()


def _update_slots():
    """Register in core's slots while anything is active, remove with the last."""
    global _handle
    active = bool(_collectors or _annotators)
    if active and _handle is None:
        _handle = _registry.add_dispatcher(_dispatch)
        _engine.set_node_observer(_OBSERVER)
    elif not active and _handle is not None:
        _handle.remove()
        _handle = None
        _engine.set_node_observer(None)


def open_range(name, kind, seq=-1):
    """Push a range on this thread's stack (None when nothing records it)."""
    local = _local
    view = local.view if local.version == _version else _refresh(local)
    if view is None:
        return None
    stack = local.stack
    r = new_range(name, kind, view, stack[-1] if stack else None, seq)
    if view.inputs_detail:
        _describe_inputs(r, view, ())
    stack.append(r)
    r[START] = now_ns()
    return r


def close_range(r):
    if r is None:
        return
    r[END] = now_ns()
    _close(_local.stack, r)


def _close(stack, r):
    if stack and stack[-1] is r:
        stack.pop()
    elif r in stack:                # closed out of order (a decorator left early)
        stack.remove(r)
    _close_popped(r)


def _close_popped(r):
    """Hand a finished range to its annotators and collectors."""
    view = r[VIEW]
    for a in reversed(view.annotators):
        a.pop(r)
    for c in view.sinks:
        c.ranges.append(r)


def _dispatch(run, op, inputs, attrs, view_base):
    """Core's dispatch slot: one range per table op (Note [profiler observation]).
    The per-op cost of profiling, so the common case is written out here."""
    local = _local
    view = local.view if local.version == _version else _refresh(local)
    if view is None:
        return run(op, inputs, attrs, view_base)
    stack = local.stack
    r = [_EVENT_NAMES[op.name], FORWARD, view,                   # new_range(...)
         stack[-1] if stack else None, -1, 0, 0, None, None, 0, None, None]
    if view.inputs_detail:
        _describe_inputs(r, view, inputs)
    stack.append(r)
    before = inputs[0].grad_fn if inputs else None
    r[START] = now_ns()
    try:
        out = run(op, inputs, attrs, view_base)
    finally:
        r[END] = now_ns()
        if stack[-1] is r:
            stack.pop()
            if not view.annotators and len(view.sinks) == 1:
                view.sinks[0].ranges.append(r)        # _close's common case
            else:
                _close_popped(r)
        else:
            _close(stack, r)
    first = out[0] if type(out) is tuple else out
    fn = first.grad_fn
    # An output that is its input keeps the input's node unless the op recorded one.
    if fn is not None and (fn is not before or first is not inputs[0]):
        r[SEQ] = fn._seq
    elif _MODE.grad_enabled:      # the number the next node would get, as the reference
        r[SEQ] = peek_sequence()  # gives every op run with grad mode on
    elif r[SEQ] >= 0:
        r[SEQ] = -1
    if view.outputs_detail:
        _describe_outputs(r, view, op, out, first)
    return out


def _describe_inputs(r, view, inputs):
    """Shapes, the Python stack and the annotators' ranges, when asked for."""
    if view.shapes and inputs:
        r[SHAPES] = [list(t._data.shape) for t in inputs]
    if view.stack:
        r[STACK] = python_stack()
    if view.annotators:
        if r[KIND] == FORWARD and r[SEQ] < 0 and inputs:
            r[SEQ] = peek_sequence()
        for a in view.annotators:
            a.push(r)


# Table entries whose name is not the reference's op: overloads of one op (one row
# for ``x ** 2`` and ``x ** y``) and ops the reference names with an underscore.
_ATEN_NAMES = {"pow_scalar": "pow", "pow_scalar_base": "pow", "div_rounded": "div",
               "div_scalar": "div", "add_scalar": "add", "clamp_tensor": "clamp",
               "clamp_min_tensor": "clamp_min", "clamp_max_tensor": "clamp_max",
               "sum_dim": "sum", "mean_dim": "mean", "prod_dim": "prod", "max_dim": "max",
               "min_dim": "min", "median_dim": "median", "nanmedian_dim": "nanmedian",
               "norm_dim": "norm", "round_decimals": "round", "sort_stable": "sort",
               "squeeze_dim": "squeeze", "squeeze_dims": "squeeze", "lerp_tensor": "lerp",
               "masked_fill_tensor": "masked_fill", "index_fill_tensor": "index_fill",
               "scatter_value": "scatter", "scatter_multiply": "scatter",
               "to_copy": "_to_copy", "prelu_kernel": "_prelu_kernel",
               "fft_c2c": "_fft_c2c", "fft_r2c": "_fft_r2c", "fft_c2r": "_fft_c2r",
               "upsample_nearest_exact1d": "_upsample_nearest_exact1d",
               "upsample_nearest_exact2d": "_upsample_nearest_exact2d",
               "upsample_nearest_exact3d": "_upsample_nearest_exact3d"}


class _EventNames(dict):
    """Table op name -> its event name (Note [reference event names]), made once."""

    def __missing__(self, name):
        event = self[name] = "aten::" + _ATEN_NAMES.get(name, name)
        return event


_EVENT_NAMES = _EventNames()


def _describe_outputs(r, view, op, out, first):
    """FLOPs and the memory the op's outputs hold, when asked for."""
    if view.flops:
        r[FLOPS] = flops_of(op.name, r[SHAPES], list(first._data.shape))
    if view.memory:
        r[MEMORY] = _track_allocations(out if type(out) is tuple else (out,))


def peek_sequence():
    """The sequence number the next node will get (core's Note [sequence numbers])."""
    text = repr(_node._sequence)             # 'count(N)'
    return int(text[text.index("(") + 1:-1])


def _track_allocations(outs):
    """Bytes of the outputs' own arrays; each reports its release when freed."""
    total = 0
    for t in outs:
        if isinstance(t, Tensor):
            arr = t._data
            if arr.base is None and arr.nbytes:
                total += arr.nbytes
                weakref.finalize(arr, _freed, arr.nbytes).atexit = False   # not at exit
    return total


def _freed(nbytes):
    """An output array was freed: charged to this thread's innermost open range, or
    kept as a ``[memory]`` record by the collectors watching memory."""
    stack = _local.stack
    if stack:
        stack[-1][MEMORY] -= nbytes
        return
    local = _local
    for c in sinks_here(local.ident):
        if c.profile_memory:
            c.frees.append((now_ns(), thread_number(local), nbytes))


class _NodeObserver:
    """Core's node observer slot: a backward node's range inside its
    evaluate_function range, and a custom Function forward's range (Note [node
    observer slot] in core's engine.py, Note [reference event names]). The per-node
    cost of profiling, so the common case (no shapes, stacks or annotators) is
    written out here."""

    def enter(self, node, name, inputs):
        local = _local
        view = local.view if local.version == _version else _refresh(local)
        if view is None:
            return None
        seq = node._seq
        if seq == _node.MAX_SEQUENCE:
            seq = -1
        stack = local.stack
        if name is not None:                                  # a custom Function
            return _open_detailed(stack, view, name, FORWARD, seq, inputs)
        names = _NODE_NAMES.get(type(node)) or _node_names(node)
        if view.inputs_detail:
            _open_detailed(stack, view, names[1], ENGINE, seq, None)
            return _open_detailed(stack, view, names[0], BACKWARD, seq, inputs)
        outer = [names[1], ENGINE, view, stack[-1] if stack else None, seq,   # new_range
                 0, 0, None, None, 0, None, None]
        r = [names[0], BACKWARD, view, outer, seq, 0, 0, None, None, 0, None, None]
        stack.append(outer)
        stack.append(r)
        outer[START] = now_ns()           # two readings: the outer range starts first
        r[START] = now_ns()
        return r

    def exit(self, r):
        if r is None:
            return
        r[END] = now_ns()
        stack = _local.stack
        if r[KIND] != BACKWARD:                               # a custom Function
            _close(stack, r)
            return
        outer = r[PARENT]                         # and its evaluate_function range
        outer[END] = now_ns()
        view = r[VIEW]
        if len(stack) > 1 and stack[-1] is r and stack[-2] is outer and \
                not view.annotators and len(view.sinks) == 1:
            del stack[-2:]                        # _close's common case, twice
            view.sinks[0].ranges += (r, outer)
            return
        _close(stack, r)
        _close(stack, outer)


def _open_detailed(stack, view, name, kind, seq, inputs):
    """Push a node's, its evaluate_function's or a custom Function's range with the
    details asked for (``inputs``: what its shapes are read from)."""
    r = new_range(name, kind, view, stack[-1] if stack else None, seq)
    if view.inputs_detail:
        if view.shapes and inputs is not None:
            r[SHAPES] = [_shape_of(value) for value in inputs]
        _describe_inputs(r, view, ())
    stack.append(r)
    r[START] = now_ns()
    return r


# Node class -> (its name(), its evaluate_function range's name), made once: a
# node's name depends on its class only (core's Note [node names]).
_NODE_NAMES = {}


def _node_names(node):
    name = node.name()
    names = (name, EVALUATE_PREFIX + name)
    if type(node).name is _node.Node.name:        # a class of its own name() may vary
        _NODE_NAMES[type(node)] = names
    return names


def _shape_of(value):
    """A node's gradient or a custom Function's argument as the reference lists its
    shape: an array's or tensor's, ``[]`` for anything else (None, a number)."""
    shape = getattr(value, "shape", None)
    return list(shape) if shape is not None else []


_OBSERVER = _NodeObserver()


def _package_dir(module):
    return os.path.dirname(os.path.abspath(module.__file__)) + os.sep


# Frames of these folders are chainrule's own, not what a user wants in a stack.
_OWN_FRAMES = (_package_dir(sys.modules["chainrule"]), os.path.dirname(__file__) + os.sep)


def python_stack():
    """The Python frames of the caller, innermost first, as ``file(line): function``,
    without chainrule's own frames."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_OWN_FRAMES):
            frames.append(f"{filename}({frame.f_lineno}): {frame.f_code.co_name}")
        frame = frame.f_back
    return frames
