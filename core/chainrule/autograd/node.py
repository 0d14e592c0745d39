"""Graph nodes: the backward functions of the autograd graph.

A Node turns the gradients of its forward outputs into gradients of its forward
inputs. Its edges (``_next``) say where each input gradient goes: ``(node, input_nr)``
or None for an input that needs no gradient.

Note [sequence numbers]
    Every node gets a number from one global counter when it is created. The engine
    runs, among the nodes that are ready, the one with the highest number first (the
    most recently created), like the reference. AccumulateGrad nodes get the maximum,
    so gradients land in ``.grad`` as soon as they are complete.

Note [node names]
    ``name()`` is what the reference's node reports: the class name for the nodes
    generated from its derivative table (``MulBackward0``), and that name in the
    reference's C++ namespace for the nodes it writes by hand (AccumulateGrad,
    CopySlices, CopyBackwards, Error), which set ``_name_prefix`` to CPP_NAMESPACE.
    The class name itself stays bare, as the reference's ``type(node).__name__``,
    a node's repr and a tensor's ``grad_fn=<...>`` show it.
"""
import itertools
import sys
import weakref

from .accumulate import accumulate_into_grad
from .hooks import RemovableHandle
from .._tensor import NO_ACCUMULATOR

_sequence = itertools.count()
MAX_SEQUENCE = sys.maxsize
CPP_NAMESPACE = "torch::autograd::"      # Note [node names]


def next_sequence_nr():
    return next(_sequence)


class Node:
    """Base of every backward function (``grad_fn``).

    >>> import chainrule as cr
    >>> x = cr.ones(2, requires_grad=True)
    >>> (x * 2).grad_fn.name()
    'MulBackward0'
    """

    # Only the edges and the sequence number are set per node; the rarely used fields
    # below are class defaults until a hook or metadata is set (then they live in the
    # instance __dict__), which keeps node creation cheap on the per-op path.
    __slots__ = ("_next", "_seq", "__dict__", "__weakref__")
    _pre_hooks = _post_hooks = _tensor_hooks = _retain_hooks = None
    _metadata = _anomaly = None
    _name_prefix = ""                    # Note [node names]

    def __init__(self, next_edges=(), seq=None):
        self._next = next_edges
        self._seq = next_sequence_nr() if seq is None else seq

    def name(self):
        """The node's name, e.g. ``'MulBackward0'`` (Note [node names])."""
        return self._name_prefix + type(self).__name__

    @property
    def next_functions(self):
        """For each forward input, ``(node, input_nr)`` its gradient flows to, or
        ``(None, 0)`` when the input needs no gradient."""
        return tuple(e if e is not None else (None, 0) for e in self._next)

    @property
    def metadata(self):
        """A dict for user data attached to this node (empty at first)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def _sequence_nr(self):
        return self._seq

    def num_inputs(self):
        return 1

    def apply(self, grads, create_graph):  # pragma: no cover - abstract
        raise NotImplementedError(f"{self.name()}.apply")

    def release_saved(self):
        """Free what the node saved for backward (after a backward without retain_graph)."""

    def register_hook(self, fn):
        """Run ``fn(grad_inputs, grad_outputs)`` after the node; it may return new grad_inputs.

        >>> import chainrule as cr
        >>> x = cr.ones(2, requires_grad=True); y = x.exp()
        >>> h = y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0,))
        >>> y.sum().backward(); x.grad.tolist()
        [0.0, 0.0]
        """
        if self._post_hooks is None:
            self._post_hooks = {}
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn):
        """Run ``fn(grad_outputs)`` before the node; it may return new grad_outputs.

        >>> import chainrule as cr
        >>> x = cr.ones(2, requires_grad=True); y = x * 3
        >>> h = y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        >>> y.sum().backward(); x.grad.tolist()
        [6.0, 6.0]
        """
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return RemovableHandle(self._pre_hooks, fn)

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"   # Note [node names]


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds the incoming gradient into ``leaf.grad``."""

    __slots__ = ("variable",)
    _name_prefix = CPP_NAMESPACE

    def __init__(self, variable):
        Node.__init__(self, (), MAX_SEQUENCE)
        self.variable = variable

    def apply(self, grads, create_graph):
        accumulate_into_grad(self.variable, grads[0], create_graph)
        return ()


def gradient_edge(t):
    """Where a gradient for tensor ``t`` goes: its grad_fn, its leaf accumulator, or
    None when it needs no gradient."""
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        acc = grad_accumulator(t)
        return (acc, 0) if acc is not None else None
    return None


def grad_accumulator(tensor):
    """The AccumulateGrad node of a leaf that requires grad (one per leaf, held weakly
    by the leaf so the graph owns it); None for a leaf that has none (NO_ACCUMULATOR)."""
    extra = tensor._extras()
    ref = extra.grad_acc
    if ref is NO_ACCUMULATOR:
        return None
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        extra.grad_acc = weakref.ref(acc)
    return acc
