"""Hooks registered on tensors: gradient hooks, retain_grad, post-accumulate hooks.

A leaf's hooks live on the leaf (its AccumulateGrad reads them); a non-leaf's live
on its grad_fn, keyed by the tensor's output number, so the tensor itself can be
freed while the graph still runs its hooks.
"""
import weakref

from .hooks import RemovableHandle


def register_tensor_hook(tensor, hook):
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if tensor.grad_fn is None:
        extra = tensor._extras()
        if extra.hooks is None:
            extra.hooks = {}
        return RemovableHandle(extra.hooks, hook)
    node = tensor.grad_fn
    if node._tensor_hooks is None:
        node._tensor_hooks = {}
    table = node._tensor_hooks.setdefault(tensor._output_nr, {})
    return RemovableHandle(table, hook)


def register_post_accumulate_hook(tensor, hook):
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if tensor.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    extra = tensor._extras()
    if extra.post_acc_hooks is None:
        extra.post_acc_hooks = {}
    return RemovableHandle(extra.post_acc_hooks, hook)


def install_retain_grad(tensor):
    """Make the tensor's grad_fn write the incoming gradient into ``tensor.grad``."""
    from .._layout import contiguous_format
    from .._tensor import Tensor
    ref = weakref.ref(tensor)

    def retain(grad):
        # like the reference: a contiguous clone first (recorded, CloneBackward0, under
        # create_graph), then out-of-place sums
        t = ref()
        if t is None or grad is None:
            return
        grad = grad if isinstance(grad, Tensor) else Tensor._wrap(grad)
        if t._grad is not None:
            t._grad = t._grad + grad
        elif grad.requires_grad:
            t._grad = grad.clone(memory_format=contiguous_format)
        else:
            t._grad = Tensor._wrap(grad._data.copy())

    node = tensor.grad_fn
    if node._retain_hooks is None:
        node._retain_hooks = {}
    node._retain_hooks[tensor._output_nr] = retain
    tensor._extras().retains_grad = True
