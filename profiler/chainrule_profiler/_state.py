"""What the profiler sees while a profile (or emit_nvtx/emit_itt) is active.

Note [profiler observation]
    Core is observed through its two slots, never patched: every table op runs
    through ``_dispatch`` (core's Note [dispatch slot]) and every backward node, and
    every custom Function's forward, through ``_OBSERVER`` (core's Note [node observer
    slot], both engines). Both are registered while at least one sink is active and
    removed with the last one, so a process that is not profiling pays core's one
    check per op and per node. A sink is a Collector (a profile's recording) or an
    annotator (NVTX/ITT ranges). Each op or node becomes a ``Range`` on its thread's
    stack of open ranges; the innermost open range is its parent, so events nest per
    thread, whichever thread opened the enclosing ``record_function``.
"""
import os
import sys
import threading
import time
import weakref

from chainrule._ops import _registry
from chainrule._tensor import Tensor
from chainrule.autograd import engine as _engine
from chainrule.autograd import node as _node

from ._flops import flops_of

now_ns = time.perf_counter_ns

FORWARD, BACKWARD, USER = "forward", "backward", "user"


class Range:
    """One op, backward node or ``record_function`` range, as recorded."""

    __slots__ = ("name", "kind", "start", "end", "thread", "parent", "seq", "shapes",
                 "stack", "memory", "flops", "sinks", "args")

    def __init__(self, name, kind, thread, parent, sinks):
        self.name, self.kind, self.thread, self.parent = name, kind, thread, parent
        self.sinks = sinks
        self.seq = -1
        self.shapes = self.stack = self.flops = self.args = None
        self.memory = 0
        self.start = self.end = 0


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
        self.frees = []           # (ns, thread, bytes): memory freed outside any range
        self.start_ns = self.end_ns = 0

    def wants(self, thread):
        return self.all_threads or thread == self.thread


class _Local(threading.local):
    def __init__(self):
        self.stack = []           # the thread's open ranges, innermost last


_local = _Local()
_collectors = ()                  # the active collectors (replaced, never mutated)
_annotators = ()                  # the active NVTX/ITT annotators
_lock = threading.Lock()
_handle = None                    # the dispatcher's handle while anything is active


def sinks_here(thread):
    """The active collectors that record ``thread``'s work."""
    return [c for c in _collectors if c.wants(thread)]


def activate(collector=None, annotator=None):
    """Start recording into ``collector`` / annotating with ``annotator``."""
    global _collectors, _annotators
    with _lock:
        if collector is not None:
            collector.start_ns = now_ns()
            _collectors = _collectors + (collector,)
        if annotator is not None:
            _annotators = _annotators + (annotator,)
        _update_slots()


def deactivate(collector=None, annotator=None):
    global _collectors, _annotators
    with _lock:
        if collector is not None:
            collector.end_ns = now_ns()
            _collectors = tuple(c for c in _collectors if c is not collector)
        if annotator is not None:
            _annotators = tuple(a for a in _annotators if a is not annotator)
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


def open_range(name, kind, seq=-1, shapes=None):
    """Push a range on this thread's stack (None when nothing records it)."""
    thread = threading.get_ident()
    sinks = sinks_here(thread) if _collectors else ()
    annotators = _annotators
    if not sinks and not annotators:
        return None
    stack = _local.stack
    r = Range(name, kind, thread, stack[-1] if stack else None, sinks)
    r.seq = seq
    if shapes is not None:
        r.shapes = shapes
    if any(c.with_stack for c in sinks):
        r.stack = python_stack()
    for a in annotators:
        a.push(r)
    stack.append(r)
    r.start = now_ns()
    return r


def close_range(r):
    if r is None:
        return
    r.end = now_ns()
    stack = _local.stack
    if stack and stack[-1] is r:
        stack.pop()
    elif r in stack:                # closed out of order (a decorator left early)
        stack.remove(r)
    for a in reversed(_annotators):
        a.pop(r)
    for c in r.sinks:
        c.ranges.append(r)


def _dispatch(run, op, inputs, attrs, view_base):
    """Core's dispatch slot: one range per table op (Note [profiler observation])."""
    thread = threading.get_ident()
    sinks = sinks_here(thread) if _collectors else ()
    if not sinks and not _annotators:
        return run(op, inputs, attrs, view_base)
    shapes = [list(t._data.shape) for t in inputs] \
        if _annotators or any(c.record_shapes or c.with_flops for c in sinks) else None
    seq = peek_sequence() if _annotators else -1
    r = open_range(_PUBLIC_NAMES.get(op.name, op.name), FORWARD, seq, shapes)
    before = inputs[0].grad_fn if inputs else None
    try:
        out = run(op, inputs, attrs, view_base)
    finally:
        close_range(r)
    if r is not None:
        _describe_outputs(r, sinks, op, out, inputs, before)
    return out


# Table entries that are overloads of one public op, named as the reference's
# profiler names them (one row for ``x ** 2`` and ``x ** y``).
_PUBLIC_NAMES = {"pow_scalar": "pow", "pow_scalar_base": "pow", "div_rounded": "div",
                 "clamp_tensor": "clamp", "sum_dim": "sum", "mean_dim": "mean",
                 "prod_dim": "prod", "masked_fill_tensor": "masked_fill",
                 "scatter_value": "scatter", "scatter_multiply": "scatter"}


def _describe_outputs(r, sinks, op, out, inputs, before):
    """The op's sequence number (its node's), FLOPs and the memory its outputs hold."""
    outs = out if isinstance(out, tuple) else (out,)
    first = outs[0] if outs and isinstance(outs[0], Tensor) else None
    fn = first.grad_fn if first is not None else None
    # An output that is its input keeps the input's node unless the op recorded one.
    new_node = fn is not None and not (first is inputs[0] and fn is before)
    r.seq = fn._seq if new_node else -1
    if any(c.with_flops for c in sinks) and first is not None:
        r.flops = flops_of(op.name, r.shapes, list(first._data.shape))
    if any(c.profile_memory for c in sinks):
        r.memory = _track_allocations(outs)


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
                weakref.finalize(arr, _freed, arr.nbytes)
    return total


def _freed(nbytes):
    """An output array was freed: charged to this thread's innermost open range, or
    kept as a ``[memory]`` record by the collectors watching memory."""
    stack = _local.stack
    if stack:
        stack[-1].memory -= nbytes
        return
    thread = threading.get_ident()
    for c in sinks_here(thread):
        if c.profile_memory:
            c.frees.append((now_ns(), thread, nbytes))


class _NodeObserver:
    """Core's node observer slot: a range per backward node and per custom
    Function forward (Note [node observer slot] in core's engine.py)."""

    def enter(self, node, name):
        if name is not None:
            return open_range(name, FORWARD, node._seq)
        seq = node._seq
        return open_range(node.name(), BACKWARD, -1 if seq == _node.MAX_SEQUENCE else seq)

    def exit(self, token):
        close_range(token)


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
