"""Autograd on the device: the streams backward passes run on.

Note [backward streams]
    The reference's stream semantics of backward passes, in chainrule:
    1. A backward node runs on the stream its forward op ran on. While some thread has
       a non-default current stream, a dispatcher (Note [dispatch slot]) writes the
       current stream onto the node of every op with a device input (``_cuda_stream``
       in the node's ``__dict__``), and the node observer below does the same for the
       nodes of custom Functions (their forward is reported to it). A node without one
       ran on the default stream, which is all there is otherwise: programs that never
       make a stream current (and every CPU program) record nothing and pay nothing
       per op.
    2. Where a gradient crosses streams, the consumer waits: before a node on stream C
       runs, C waits for an event recorded (then) on the stream of each node that sent
       it gradients from another stream. Two gradients for one input are summed by the
       engine on the second producer's stream, which first waits for the first's.
    3. ``backward()`` / ``autograd.grad()`` called with current stream K behave towards
       the surrounding work like any other call on K: each other stream the pass uses
       first waits for K (the root gradients were made there); ``.grad`` is written on
       K (AccumulateGrad runs there, after waiting for the stream that produced the
       gradient); when the pass returns, K waits for every stream the pass used. So
       ``.grad`` and grad()'s results are safe to use on K once the call returns.
    4. A node running on stream S that reads a saved array allocated on another stream
       calls ``record_stream(S)`` on it (``cr_record_stream``): the caching allocator
       then does not hand the block out again before S's reads are done.
    The pass is seen through two slots both engines call: the engine slot (wrapped by
    ``StreamEngine``, for the pass boundaries and the caller's stream) and the node
    observer slot (Note [node observer slot]: around every node, AccumulateGrad
    included). The observer is in the slot only while a pass needs it or a
    non-default stream is current; a pass needs it when a non-default stream is
    current somewhere or nodes with a stream are alive, otherwise a backward costs
    one check more (and none before the first non-default stream was made current).
"""
import threading
import weakref

from chainrule._ops import _registry
from chainrule.autograd import engine as engine_slot
from chainrule.autograd.node import AccumulateGrad

from . import runtime
from ._array import DeviceArray
from . import _kernels as K

_LOCK = threading.RLock()
_NON_DEFAULT = [0]              # current (thread, device) entries on a non-default stream
_STREAM_NODES = weakref.WeakSet()   # live nodes that carry a stream (point 1)
_DISPATCHER = [None]            # the handle of the dispatcher while registered
_PASS = threading.local()       # .states: this thread's running passes (innermost last)


# ---- point 1: the forward's stream onto the node --------------------------------------

def stream_changed(previous, stream):
    """runtime.set_stream's report: ``previous`` (None: the default) was current on
    ``stream``'s device in this thread and ``stream`` is now. Counts the non-default
    entries; the dispatcher is registered while there is one."""
    was = previous is not None and previous._handle != 0
    now = stream._handle != 0
    if was != now:
        _count_non_default(1 if now else -1)


def _count_non_default(delta):
    with _LOCK:
        _NON_DEFAULT[0] += delta
        if _NON_DEFAULT[0] > 0 and _DISPATCHER[0] is None:
            _DISPATCHER[0] = _registry.add_dispatcher(_record_stream_on_node)
            _use_observer(1)              # custom Functions' forwards (see enter())
            _wrap_engine()
        elif _NON_DEFAULT[0] == 0 and _DISPATCHER[0] is not None:
            _DISPATCHER[0].remove()
            _DISPATCHER[0] = None
            _use_observer(-1)


def _record_stream_on_node(run, op, inputs, attrs, view_base):
    out = run(op, inputs, attrs, view_base)
    for t in inputs:
        if type(t._data) is DeviceArray:
            stream = runtime.current_stream()
            if stream._handle:
                _mark(out, stream)
            break
    return out


def _mark(out, stream):
    for t in (out if type(out) is tuple else (out,)):
        node = t.grad_fn
        if node is not None:
            node._cuda_stream = stream
            _STREAM_NODES.add(node)
            return


# ---- the pass: engine slot --------------------------------------------------------------

class StreamEngine:
    """The engine in the slot, wrapped: passes that need it get Note [backward streams]
    (points 2-4); the others go straight through."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.will_receive_grad = inner.will_receive_grad
        self.hook_state = inner.hook_state
        self.needed_edges = inner.needed_edges

    def execute(self, roots, root_grads, keep_graph, create_graph, targets=None,
                accumulate_grad=True):
        if not (_NON_DEFAULT[0] or _STREAM_NODES):
            return self.inner.execute(roots, root_grads, keep_graph, create_graph, targets,
                                      accumulate_grad)
        state = _PassState(runtime.current_stream())
        _begin(state)
        try:
            return self.inner.execute(roots, root_grads, keep_graph, create_graph, targets,
                                      accumulate_grad)
        finally:
            _end(state)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _wrap_engine():
    current = engine_slot.get_engine()
    if not isinstance(current, StreamEngine):
        engine_slot.set_engine(StreamEngine(current))


class _PassState:
    """One running pass: the caller's stream K and current streams, the streams that
    sent gradients to each node not run yet, the streams used."""

    def __init__(self, caller):
        self.caller = caller
        self.producers = {}       # node -> streams whose nodes sent it gradients
        self.used = set()         # streams nodes ran on
        self.started = None       # an event on K, recorded at the first need
        self.caller_streams = None

    def start_event(self):
        if self.started is None:
            self.started = self.caller.record_event()
        return self.started


def _begin(state):
    states = _PASS.__dict__.setdefault("states", [])
    states.append(state)
    state.caller_streams = dict(runtime._current_streams())
    _count_non_default(1)   # nodes recorded in the pass (create_graph, checkpoint's
    _use_observer(1)        # recomputation) carry the stream they are recorded on


def _end(state):
    try:
        runtime._exchange_streams(state.caller_streams)
        caller = state.caller
        for stream in state.used:     # point 3: K waits for every stream the pass used
            if stream != caller:
                caller.wait_event(stream.record_event())
    finally:
        _PASS.states.pop()
        _use_observer(-1)
        _count_non_default(-1)


# ---- each node: node observer slot ------------------------------------------------------

class _StreamObserver:
    """Note [node observer slot]: runs each node of this thread's pass on its stream,
    with the waits of points 2-4; passes on to the observer it replaced.

    The engine routes a node's gradients after exit() (summing two that reach one
    input, in the input buffer): the node's stream stays current for that, having
    waited for the streams that sent gradients there before; the consumer waits for
    all of them when it runs. The pass restores the caller's streams at its end."""

    users = 0
    previous = None

    def enter(self, node, name, inputs):
        inner = self.previous
        token = inner.enter(node, name, inputs) if inner is not None else None
        if name is not None:                      # a custom Function's forward
            _mark_function(node)
            return (token, None)
        states = _PASS.__dict__.get("states")
        if not states:
            return (token, None)
        state = states[-1]
        stream = _node_stream(node, state)
        _wait_before(node, stream, state)
        runtime._exchange_streams(_only(stream))
        return (token, (state, node, stream))

    def exit(self, token):
        inner_token, mine = token
        try:
            if mine is not None:
                _before_routing(*mine)
        finally:
            if self.previous is not None:
                self.previous.exit(inner_token)


_OBSERVER = _StreamObserver()


def _use_observer(delta):
    """The observer is in the slot while a pass needs it or a non-default stream is
    current somewhere (then custom Functions' nodes get their stream, point 1)."""
    with _LOCK:
        _OBSERVER.users += delta
        if delta > 0 and _OBSERVER.users == 1:
            _OBSERVER.previous = engine_slot.set_node_observer(_OBSERVER)
        elif _OBSERVER.users == 0 and engine_slot._node_observer is _OBSERVER:
            engine_slot.set_node_observer(_OBSERVER.previous)


def _mark_function(node):
    """Point 1 for a custom Function (its forward is not a table op): its node gets
    the current stream when that is not the default one."""
    stream = runtime.current_stream()
    if stream._handle:
        node._cuda_stream = stream
        _STREAM_NODES.add(node)


def _node_stream(node, state):
    if isinstance(node, AccumulateGrad):
        return state.caller                       # point 3: .grad is written on K
    attrs = getattr(node, "__dict__", None)
    stream = attrs.get("_cuda_stream") if attrs else None
    return stream if stream is not None else runtime.default_stream()


def _only(stream):
    """The thread's current streams while a node runs: ``stream`` on its device."""
    return {stream.device_index: stream} if stream._handle else {}


def _wait_before(node, stream, state):
    if stream != state.caller and stream not in state.used:
        stream.wait_event(state.start_event())    # point 3: root gradients are on K
    state.used.add(stream)
    for producer in state.producers.pop(node, ()):   # point 2
        if producer != stream:
            stream.wait_event(producer.record_event())
    _record_saved_arrays(node, stream)            # point 4


def _record_saved_arrays(node, stream):
    saved = getattr(node, "_saved", None)
    if not saved or type(saved) is not dict:
        return
    library = K.lib()
    handle = stream._handle or None
    for s in saved.values():
        data = s.data
        if type(data) is DeviceArray:
            K.check(library.cr_record_stream(data._mem.ptr, handle))


def _before_routing(state, node, stream):
    """``node`` ran on ``stream``; the engine sums its gradients into its children's
    buffers next, on ``stream``: which first waits for the other streams that sent
    gradients to those children."""
    waited = {stream}
    for edge in node._next:
        if edge is None:
            continue
        producers = state.producers.setdefault(edge[0], set())
        for other in producers - waited:
            stream.wait_event(other.record_event())
            waited.add(other)
        producers.add(stream)
