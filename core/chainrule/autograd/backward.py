"""``backward`` and ``grad``: argument checking, root gradients, then the engine."""
import warnings

import numpy as np

from .. import _grad_mode
from .accumulate import accumulate_into_grad
from .engine import get_engine
from .node import Node, gradient_edge
from .batched import has_batched
from .._batched import LEVELS as _LEVELS
from .._tensor import Tensor
from .graph import GradientEdge


def unused_input_message(index):
    """torch's words when ``inputs[index]`` got no gradient and allow_unused is off."""
    return (f"The differentiated Tensor at index {index} appears to not have been used in "
            "the graph. Set allow_unused=True if this is the desired behavior.")


def _as_tuple(value):
    if value is None:
        return None
    if isinstance(value, _ONE_ROOT):
        return (value,)
    return tuple(value)


_ONE_ROOT = (Tensor, GradientEdge)       # what _as_tuple takes as a single item


def _is_gradient_edge(value):
    return isinstance(value, GradientEdge)


def _make_grads(outputs, grads, is_grads_batched=False):
    """Check or create the gradient for each output (ones for a scalar output)."""
    new = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        if isinstance(grad, Tensor):
            out_shape = out._data.shape
            grad_shape = grad._data.shape[1:] if is_grads_batched else grad._data.shape
            if out_shape != grad_shape:
                if is_grads_batched:
                    raise RuntimeError(
                        f"If `is_grads_batched=True`, we interpret the first dimension of each "
                        f"grad_output as the batch dimension. The sizes of the remaining "
                        f"dimensions are expected to match the shape of corresponding output, "
                        f"but a mismatch was detected: grad_output[{i}] has a shape of "
                        f"{grad.shape} and output[{i}] has a shape of {out.shape}.")
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{grad.shape} and output[{i}] has a shape of {out.shape}.")
            if out.dtype.is_complex != grad.dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have "
                    f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                    f"{grad.dtype} and output[{i}] has a dtype of {out.dtype}.")
            if grad._data.dtype != out._data.dtype:
                grad = grad.to(out.dtype)
            new.append(grad)
        elif grad is None:
            if out.requires_grad:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out._data.dtype.kind == "c":
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       f"outputs but got {out.dtype!r}")
                new.append(_ones_like(out))
            else:
                new.append(None)
        else:
            raise TypeError("gradients can be either Tensors or None, but got "
                            f"{type(grad).__name__}")
    return new


def _ones_like(out):
    return Tensor._wrap(np.ones_like(out._data))


def _root_edges(outputs):
    edges = []
    for i, out in enumerate(outputs):
        if _is_gradient_edge(out):
            edges.append((out.node, out.output_nr))
            continue
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        edges.append(gradient_edge(out))
    return edges


def _target_edge(t, index, for_grad):
    if _is_gradient_edge(t):
        return (t.node, t.output_nr)
    if not t.requires_grad:
        if for_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        raise RuntimeError("element {} of the inputs does not require grad".format(index))
    edge = gradient_edge(t)
    if edge is None:             # a leaf with no accumulator (NO_ACCUMULATOR, _tensor.py):
        edge = (Node(), 0)       # a target no gradient reaches, as in the reference
    return edge


def _engine_grads(grads, create_graph):
    """Root gradients as the engine wants them (Note [gradients are raw arrays or
    tensors] in input_buffer.py)."""
    if create_graph:
        return grads
    return [None if g is None else g._data for g in grads]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None, **deprecated):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves.

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> cr.autograd.backward([(x * 3).sum()])
    >>> x.grad.tolist()
    [3.0, 3.0]
    """
    if deprecated:                           # Note [deprecated keyword slot]
        from .._legacy_slots import deprecated_kwargs
        from .._tensor import _only_one
        modern = deprecated_kwargs("backward", deprecated, 2)
        retain_graph = _only_one("retain_graph", retain_graph, modern)
    if (grad_tensors is None and grad_variables is None and inputs is None
            and create_graph is False and _backward_scalar(tensors, retain_graph)):
        return
    if grad_variables is not None:
        warnings.warn("'grad_variables' is deprecated. Use 'grad_tensors' instead.",
                      DeprecationWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both "
                               "passed to backward(). Please only use 'grad_tensors'.")
        grad_tensors = grad_variables
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} gradients for {len(tensors)} tensors")
    grads = _make_grads(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_edges(tensors)
    targets = None
    if inputs is not None:
        targets = [_target_edge(t, i, False) for i, t in enumerate(inputs)]
    roots, grads = _drop_missing(roots, grads)
    with _grad_mode.set_grad_enabled(create_graph):
        captured = get_engine().execute(roots, _engine_grads(grads, create_graph),
                                        retain_graph, create_graph, targets,
                                        accumulate_grad=True)
        if inputs is not None:
            _accumulate_non_leaf_inputs(inputs, captured, create_graph)
    _warn_create_graph_cycle(create_graph, inputs)


def _backward_scalar(root, retain_graph):
    """Note [scalar backward fast path]
        ``loss.backward()``, the call of every training step: one real 0-d tensor (an
        ndarray) that requires grad, no gradient, ``inputs`` or ``create_graph``. For it
        the general path's checks all pass and come down to a root gradient of one and
        the tensor's edge, so they are done directly (no tuples, no Tensor around the
        ones). Returns False, having done nothing, for anything else: the general path
        then runs and raises its errors in its order."""
    if not isinstance(root, Tensor) or not root.requires_grad:
        return False
    data = root._data
    if type(data) is not np.ndarray or data.shape or data.dtype.kind == "c":
        return False
    edge = gradient_edge(root)
    state = _grad_mode.STATE
    previous, state.grad_enabled = state.grad_enabled, False   # set_grad_enabled(False)
    try:
        get_engine().execute([edge], [np.array(1, data.dtype)],
                             False if retain_graph is None else retain_graph, False, None,
                             accumulate_grad=True)
    finally:
        state.grad_enabled = previous
    return True


def _accumulate_non_leaf_inputs(inputs, captured, create_graph):
    """``backward(inputs=[t])`` with a non-leaf ``t`` accumulates into ``t.grad`` too."""
    for t, grad in zip(inputs, captured):
        if grad is not None and not _is_gradient_edge(t) and t.grad_fn is not None:
            accumulate_into_grad(t, grad, create_graph)


def _drop_missing(roots, grads):
    pairs = [(r, g) for r, g in zip(roots, grads) if g is not None]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _warn_create_graph_cycle(create_graph, inputs):
    if create_graph and inputs is None and _CYCLE_WARNING.enabled:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between "
            "the parameter and its gradient which can cause a memory leak. We recommend "
            "using autograd.grad when creating the graph to avoid this. If you have to use "
            "this function, make sure to reset the .grad fields of your parameters to None "
            "after use to break the cycle and avoid the leak.", UserWarning, stacklevel=3)


class _CycleWarning:
    enabled = True


_CYCLE_WARNING = _CycleWarning()


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """Return the gradients of ``outputs`` w.r.t. ``inputs`` (``.grad`` is untouched).

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = cr.autograd.grad((x ** 2).sum(), x)
    >>> g.tolist()
    [2.0, 4.0]
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if only_inputs and not (materialize_grads or is_grads_batched or _LEVELS.stack):
        done = _grad_common_case(outputs, inputs, grad_outputs, retain_graph, create_graph,
                                 allow_unused)
        if done is not None:
            return done
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). "
                      "To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", DeprecationWarning, stacklevel=2)
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grads)} "
                           f"grad_outputs for {len(outputs)} outputs")
    if _LEVELS.stack and has_batched(outputs, inputs_t, grads):   # inside vmap
        from .batched import grad_in_vmap
        return grad_in_vmap(outputs, inputs_t, grads, retain_graph, create_graph,
                            allow_unused, materialize_grads, is_grads_batched)
    if is_grads_batched:
        from .batched import batched_grad
        return batched_grad(outputs, inputs_t, grads, retain_graph, create_graph,
                            allow_unused, materialize_grads)
    tensor_outputs = [o for o in outputs if not _is_gradient_edge(o)]
    if len(tensor_outputs) == len(outputs):
        grads = _make_grads(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    return _run_grad(outputs, inputs_t, grads, retain_graph, create_graph, allow_unused,
                     materialize_grads)


def _grad_common_case(outputs, inputs, grad_outputs, retain_graph, create_graph,
                      allow_unused):
    """Note [grad fast path]
        ``autograd.grad`` as functional code and second-order training call it:
        outputs that require grad, each with a gradient of its own shape and dtype (or
        none, for a real one-element output), inputs that require grad, outside vmap.
        For them the general path's checks all pass and come down to the edges and
        root gradients built here. None, having done nothing, for anything else: the
        general path then runs and raises its errors in its order."""
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    grads = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    roots = _common_roots(outputs, grads, create_graph)
    if roots is None or create_graph.__class__ is not bool:
        return None                     # (set_grad_enabled's TypeError: the general path)
    targets = _common_targets(inputs)
    if targets is None:
        return None
    edges, root_grads = roots
    state = _grad_mode.STATE          # set_grad_enabled(create_graph), without its frames
    previous, state.grad_enabled = state.grad_enabled, create_graph
    try:
        captured = get_engine().execute(edges, root_grads,
                                        create_graph if retain_graph is None else retain_graph,
                                        create_graph, targets, accumulate_grad=False)
    finally:
        state.grad_enabled = previous
    return _finish(inputs, captured, allow_unused, False)


def _common_targets(inputs):
    """The inputs' gradient edges for _grad_common_case, or None when one is no Tensor
    requiring grad or is a leaf with no accumulator (the general path decides)."""
    targets = []
    for t in inputs:
        edge = gradient_edge(t) if isinstance(t, Tensor) and t._requires_grad else None
        if edge is None:
            return None
        targets.append(edge)
    return targets


def _common_roots(outputs, grads, create_graph):
    """(edges, root gradients as the engine wants them) for _grad_common_case, or None."""
    if len(grads) != len(outputs):
        return None
    edges, root_grads = [], []
    for out, g in zip(outputs, grads):
        if not isinstance(out, Tensor) or not out._requires_grad:
            return None
        data = out._data
        if g is None:
            if type(data) is not np.ndarray or data.size != 1 or data.dtype.kind == "c":
                return None
            g = np.array(1, data.dtype).reshape(data.shape)     # np.ones_like, in C
            g = Tensor._wrap(g) if create_graph else g
        elif isinstance(g, Tensor) and g._data.shape == data.shape and \
                g._data.dtype == data.dtype:
            g = g if create_graph else g._data
        else:
            return None
        edges.append(gradient_edge(out))
        root_grads.append(g)
    return edges, root_grads


def _run_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused,
              materialize_grads):
    roots = _root_edges(outputs)
    targets = [_target_edge(t, i, True) for i, t in enumerate(inputs)]
    roots, grads = _drop_missing(roots, grads)
    with _grad_mode.set_grad_enabled(create_graph):
        captured = get_engine().execute(roots, _engine_grads(grads, create_graph),
                                         retain_graph, create_graph, targets,
                                         accumulate_grad=False)
    return _finish(inputs, captured, allow_unused, materialize_grads)


def _finish(inputs, captured, allow_unused, materialize_grads):
    """The engine's captured gradients as grad's result (zeros or the unused-input
    error for inputs no gradient reached)."""
    result = []
    for index, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if materialize_grads:
                g = Tensor._wrap(np.zeros_like(t._data))
            elif not allow_unused:
                raise RuntimeError(unused_input_message(index))
        elif not isinstance(g, Tensor):
            g = Tensor._wrap(g)
        result.append(g)
    return tuple(result)
