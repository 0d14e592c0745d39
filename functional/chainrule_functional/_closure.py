"""Tensors a transformed function captures (a module's parameters, a weight from the
enclosing scope) that require grad.

Note [captured tensors keep their history]
    ``jacrev(lambda x: model(x))(x)`` in a training loop: the Jacobian is a function of
    the model's parameters, and ``loss(jac).backward()`` must reach them (a PINN's
    residual, a gradient penalty). So whenever grad mode is on outside the transform
    and the function's outputs reach a tensor requiring grad that the transform did
    not create itself (its fresh input leaves, registered here), the transform
    differentiates with ``create_graph=True`` and keeps its results' history, as if
    it were nested (Note [nested transforms]). Otherwise nothing changes: results
    are plain tensors, and the check costs one walk over the function's graph.
"""
import weakref

import chainrule as cr
from chainrule._batched import BatchedTensor, unwrap_all
from chainrule.autograd.node import AccumulateGrad

_TRANSFORM_LEAVES = {}      # id -> weakref of the leaves transforms created


def transform_leaf(t):
    """Registers ``t`` (a leaf a transform made for its inputs) and returns it."""
    key = id(t)
    _TRANSFORM_LEAVES[key] = weakref.ref(t, lambda _, key=key: _TRANSFORM_LEAVES.pop(key, None))
    return t


def _is_transform_leaf(t):
    ref = _TRANSFORM_LEAVES.get(id(t))
    return ref is not None and ref() is t


def _own_leaf(t):
    if type(t) is BatchedTensor:
        t = unwrap_all(t)[0]
    return _is_transform_leaf(t)


def reaches_captured(tensors):
    """Whether the graph of ``tensors`` reaches a tensor requiring grad that no
    transform created (Note [captured tensors keep their history]). An explicit stack,
    no recursion."""
    stack, seen = [], set()
    for t in tensors:
        if isinstance(t, cr.Tensor) and t.requires_grad:
            if t.grad_fn is None and not _own_leaf(t):
                return True
            if t.grad_fn is not None:
                stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            if not _own_leaf(node.variable):
                return True
            continue
        # the edges themselves: next_functions builds a tuple per call
        stack.extend(edge[0] for edge in node._next if edge is not None and edge[0] is not None)
    return False


def keeps_history(grad_enabled, tensors):
    """Whether results must keep their history for captured tensors: grad mode on
    outside the transform and the graph reaches one."""
    return grad_enabled and reaches_captured(tensors)
