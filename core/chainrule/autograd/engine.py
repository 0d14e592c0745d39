"""The reference engine, in plain Python: runs a backward pass over the graph.

Steps (all iterative, Note [no recursion] in graph_task.py):
1. put the root gradients into the root nodes' input buffers;
2. count dependencies (and, with ``inputs=``, restrict to the nodes that matter);
3. pop the newest ready node (Note [sequence numbers] in node.py), run its hooks and
   itself, validate what it returns, route each gradient along its edge, and push
   children whose dependencies reach zero;
4. accumulate into ``.grad`` at the end (Note [atomic accumulation]).

Note [node observer slot]
    A layer that must see every backward node as it runs (the profiler) installs an
    observer with ``set_node_observer(obs)``. The engine then calls
    ``token = obs.enter(node, None, grads)`` before a node runs (its node hooks
    included; an AccumulateGrad node around its write into ``.grad``), ``grads``
    being the gradients the node receives (arrays, tensors under create_graph, None
    where none arrived), and ``obs.exit(token)`` after, also when it raises. A custom
    Function's forward is reported the same way, as ``obs.enter(ctx, name, args)``
    with the Function's class name and its forward's arguments (custom_apply.py), so
    its forward and its ``<Name>Backward`` node share the sequence number.
    The observer is global (every thread's passes); it tells threads apart itself.
    With none installed (the default) each node costs one check: a module global
    read here, one dict lookup in the C++ engine (src/engine.cc), which reads the
    same global.

Note [atomic accumulation]
    AccumulateGrad nodes become ready as early as the reference's, and their tensor
    hooks run then, but the writes into ``.grad`` (and post-accumulate-grad hooks)
    happen once the whole graph has run. A backward that raises half way therefore
    leaves every ``.grad`` as it was, and the library stays usable.

The engine slot: core calls ``get_engine().execute(...)``; the first call picks the
C++ engine when its wheel is installed (Note [engine selection]), so core never
imports that layer at import time; ``set_engine`` replaces the engine.
"""
import os
import threading
import warnings

from . import anomaly_mode
from .graph_task import GraphTask
from .input_buffer import InputBuffer
from .node import AccumulateGrad
from .ready_queue import ReadyQueue
from .validate import validate_outputs, wrap_for_hook, unwrap_from_hook


class PythonEngine:
    name = "python"

    def execute(self, roots, root_grads, keep_graph, create_graph,
                targets=None, accumulate_grad=True):
        """roots: (node, slot) edges; root_grads: matching arrays or tensors.
        targets: (node, slot) pairs to capture; returns the captured gradients."""
        task = GraphTask(keep_graph, create_graph, accumulate_grad)
        root_nodes = list(dict.fromkeys(node for node, _ in roots))
        if targets is not None:
            task.init_to_execute(root_nodes, targets)
        task.compute_dependencies(root_nodes)
        for (node, slot), grad in zip(roots, root_grads):
            _buffer(task, node).add(slot, grad)
        queue = ReadyQueue()
        for node in root_nodes:
            if task.dependencies.get(node, 0) == 0:
                queue.push(node)
        _running.tasks.append(task)
        try:
            while queue:
                self._evaluate(task, queue.pop(), queue)
            for variable_node, grads in task.pending_accumulations:
                observer = _node_observer            # Note [node observer slot]
                if observer is None:
                    _accumulate(variable_node, grads, create_graph)
                else:
                    observed(observer, variable_node, None, grads, _accumulate,
                             variable_node, grads, create_graph)
        finally:
            _running.tasks.pop()
        return task.captured

    # -- queries used by hooks while a backward pass runs (multi-grad hooks) ----------
    def will_receive_grad(self, node):
        """Whether the running pass of this thread delivers a gradient to ``node``."""
        task = _running.tasks[-1] if _running.tasks else None
        return task is not None and node in task.reachable

    def hook_state(self):
        """A dict that lives as long as the running pass of this thread."""
        return _running.tasks[-1].hook_state

    def needed_edges(self, node):
        """See needed_edges() below."""
        tasks = _running.tasks
        if not tasks or tasks[-1].should_run is None:
            return None
        task = tasks[-1]
        return [e is not None and (e[0] in task.should_run or e in task.captures)
                for e in node._next]

    def _evaluate(self, task, node, queue):
        buffer = task.buffers.pop(node, None)
        # A node no gradient reached still runs, with None for each output (a custom
        # Function then sees zeros, Note [materialized gradients] in function.py).
        grads = buffer.grads if buffer is not None else [None] * node.num_inputs()
        if node._tensor_hooks is not None or node._retain_hooks is not None \
                or (isinstance(node, AccumulateGrad) and _leaf_has_hooks(node.variable)):
            grads = _run_tensor_pre_hooks(node, grads, task.create_graph)
        if task.captures:
            _capture(task, node, grads)
        if task.should_run is not None and node not in task.should_run:
            return
        if isinstance(node, AccumulateGrad):
            task.pending_accumulations.append((node, grads))
            return
        observer = _node_observer                    # Note [node observer slot]
        if observer is None:
            outputs = self._call_node(task, node, grads)
        else:
            outputs = observed(observer, node, None, grads, self._call_node, task, node, grads)
        self._route(task, node, outputs, queue)

    def _call_node(self, task, node, grads):
        if node._pre_hooks:
            grads = _run_node_pre_hooks(node, grads, task.create_graph)
        if anomaly_mode.STATE.enabled:
            outputs = anomaly_mode.call_node(node, grads, task.create_graph)
        else:
            outputs = node.apply(grads, task.create_graph)
        if not task.keep_graph:
            node.release_saved()
        if node._post_hooks:
            outputs = _run_node_post_hooks(node, outputs, grads, task.create_graph)
        return validate_outputs(node, outputs)

    def _route(self, task, node, outputs, queue):
        deps = task.dependencies
        should_run = task.should_run
        for edge, grad in zip(node._next, outputs):
            if edge is None:
                continue
            child, slot = edge
            if should_run is not None and child not in should_run and \
                    (child, slot) not in task.captures:
                continue
            if grad is not None:
                _buffer(task, child).add(slot, grad)
            remaining = deps[child] - 1
            deps[child] = remaining
            if remaining == 0:
                del deps[child]
                queue.push(child)


class _Running(threading.local):
    def __init__(self):
        self.tasks = []          # a stack: backward may run inside a backward


_running = _Running()


def _accumulate(node, grads, create_graph):
    """Run an AccumulateGrad node with its node hooks (pre: before ``.grad`` is written;
    post: after, with no grad_inputs)."""
    if node._pre_hooks:
        grads = _run_node_pre_hooks(node, grads, create_graph)
    node.apply(grads, create_graph)
    if node._post_hooks:
        _run_node_post_hooks(node, (), grads, create_graph)


def _buffer(task, node):
    buffer = task.buffers.get(node)
    if buffer is None:
        buffer = task.buffers[node] = InputBuffer(node.num_inputs())
    return buffer


def _capture(task, node, grads):
    for slot, grad in enumerate(grads):
        index = task.captures.get((node, slot))
        if index is not None:
            old = task.captured[index]
            task.captured[index] = grad if old is None or grad is None else old + grad


def _leaf_has_hooks(leaf):
    """Whether a leaf has tensor hooks (they live in its extras, which most leaves
    have only for their grad accumulator)."""
    extra = leaf._extra
    return extra is not None and bool(extra.hooks)


def _run_tensor_pre_hooks(node, grads, create_graph):
    """Tensor hooks (``Tensor.register_hook``) of the tensors whose gradients these
    are, in registration order, then retain_grad, which always sees the final value."""
    grads = list(grads)
    hooks = node._tensor_hooks
    if isinstance(node, AccumulateGrad):
        extra = node.variable._extra
        hooks = {0: extra.hooks} if extra.hooks else None
    for slot, table in (hooks or {}).items():
        for hook in list(table.values()):
            if grads[slot] is None:
                break
            new = hook(wrap_for_hook(grads[slot]))
            if new is not None:
                grads[slot] = unwrap_from_hook(new, create_graph)
    for slot, retain in (node._retain_hooks or {}).items():
        retain(grads[slot])
    return grads


def _run_node_pre_hooks(node, grads, create_graph):
    for hook in list(node._pre_hooks.values()):
        new = hook(tuple(wrap_for_hook(g) for g in grads))
        if new is not None:
            grads = [unwrap_from_hook(g, create_graph) for g in new]
    return grads


def _run_node_post_hooks(node, outputs, grads, create_graph):
    grad_outputs = tuple(wrap_for_hook(g) for g in grads)
    for hook in list(node._post_hooks.values()):
        new = hook(tuple(wrap_for_hook(g) for g in outputs), grad_outputs)
        if new is not None:
            outputs = [unwrap_from_hook(g, create_graph) for g in new]
    return outputs


# The node observer slot (Note [node observer slot]).
_node_observer = None


def set_node_observer(observer):
    """Node observer slot: install ``observer`` (None removes it); returns the
    previous one. See Note [node observer slot].

    >>> import chainrule as cr
    >>> from chainrule.autograd import engine
    >>> class Names:
    ...     def __init__(self): self.seen = []
    ...     def enter(self, node, name, inputs): self.seen.append(name or node.name())
    ...     def exit(self, token): pass
    >>> names = Names()
    >>> x = cr.ones(2, requires_grad=True)
    >>> y = (x * 2).sum()
    >>> previous = engine.set_node_observer(names)
    >>> y.backward()
    >>> _ = engine.set_node_observer(previous)
    >>> names.seen
    ['SumBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad']
    """
    global _node_observer
    previous = _node_observer
    _node_observer = observer
    return previous


def observed(observer, node, name, inputs, fn, *args):
    """``fn(*args)`` between ``observer.enter(node, name, inputs)`` and
    ``observer.exit`` (Note [node observer slot])."""
    token = observer.enter(node, name, inputs)
    try:
        return fn(*args)
    finally:
        observer.exit(token)


# The engine slot. None until the first backward pass picks an engine
# (Note [engine selection]); set_engine replaces it.
_engine = None
ENGINE_ENV = "CHAINRULE_ENGINE"
ENGINE_DISTRIBUTION = "chainrule-engine"


def get_engine():
    """The engine that runs backward passes (the C++ one when installed)."""
    engine = _engine
    return engine if engine is not None else _select_engine()


def set_engine(engine):
    """Engine slot: install another engine; returns the previous one."""
    global _engine
    previous = get_engine()
    _engine = engine
    return previous


def _select_engine():
    """Note [engine selection]
        CHAINRULE_ENGINE=python: this module's engine. CHAINRULE_ENGINE=cpp: the C++
        engine (wheel chainrule-engine, import chainrule_engine), an ImportError when
        it is missing. Unset: the C++ engine when installed, else this one. Chosen
        once, at the first backward pass (or the first dual level: the engine also
        runs forward-mode ops, Note [dual fast methods] in engine_cpp/src/
        fast_methods.cc), so that importing chainrule never imports the C++ layer."""
    global _engine
    choice = os.environ.get(ENGINE_ENV, "").strip().lower()
    if choice not in ("", "python", "cpp"):
        raise ValueError(f"{ENGINE_ENV} must be 'python' or 'cpp', got {choice!r}")
    engine = PythonEngine() if choice == "python" else _cpp_engine(required=choice == "cpp")
    _engine = engine
    return engine


def _cpp_engine(required):
    try:
        import chainrule_engine
    except Exception as e:          # noqa: BLE001 - any failure: fall back (or say why)
        missing = isinstance(e, ModuleNotFoundError) and e.name == "chainrule_engine"
        if required:
            raise ImportError(
                f"{ENGINE_ENV}=cpp, but the C++ engine cannot be imported ({e}); install "
                f"the wheel {ENGINE_DISTRIBUTION} (pip install {ENGINE_DISTRIBUTION}) or set "
                f"{ENGINE_ENV}=python") from e
        if not missing:
            warnings.warn(f"the C++ engine ({ENGINE_DISTRIBUTION}) is installed but cannot "
                          f"be imported ({e}); using the Python engine", RuntimeWarning)
        return PythonEngine()
    return chainrule_engine.CppEngine()


def needed_edges(node):
    """Which of ``node``'s edges the running pass wants gradients for (None: all).

    A pass restricted by ``inputs=`` skips the gradients of the others, like the
    reference: that saves work and keeps a missing (NOT_IMPLEMENTED) formula for an
    unwanted input from raising. Asks the engine in the slot (the pass runs there)."""
    engine = _engine
    return None if engine is None else engine.needed_edges(node)
