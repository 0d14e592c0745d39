"""``chainrule.autograd.graph``: the graph API (Node, GradientEdge, hooks on it)."""
from typing import NamedTuple

from .node import Node, gradient_edge as _gradient_edge


class GradientEdge(NamedTuple):
    """A gradient edge: a node and the index of one of its gradient inputs. Usable as
    an input (or output) of ``autograd.grad``."""
    node: object
    output_nr: int


def get_gradient_edge(tensor):
    """The edge that the gradient of ``tensor`` flows into.

    >>> import chainrule as cr
    >>> x = cr.ones(2, requires_grad=True); y = x * 2
    >>> edge = cr.autograd.graph.get_gradient_edge(y)
    >>> cr.autograd.grad(y.sum(), edge)[0].tolist()
    [1.0, 1.0]
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    return GradientEdge(*_gradient_edge(tensor))


# --- saved-tensor hooks (Note [saved-tensor hooks] in saved_hooks.py) ---------------
from . import saved_hooks as _saved_hooks  # noqa: E402


class saved_tensors_hooks:
    """Context manager: pack every tensor saved for backward with ``pack_hook`` and
    unpack it with ``unpack_hook`` when backward needs it.

    >>> import chainrule as cr
    >>> packed = []
    >>> x = cr.ones(2, requires_grad=True)
    >>> with cr.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t,
    ...                                            lambda t: t):
    ...     y = x * x
    >>> y.sum().backward(); len(packed), x.grad.tolist()
    (2, [2.0, 2.0])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        message = _saved_hooks.STATE.disabled_message
        if message is not None:
            raise RuntimeError(message)
        _saved_hooks.STATE.stack.append((self.pack_hook, self.unpack_hook))
        _saved_hooks.ACTIVE[0] += 1
        return self

    def __exit__(self, *exc):
        _saved_hooks.STATE.stack.pop()
        _saved_hooks.ACTIVE[0] -= 1


class save_on_cpu(saved_tensors_hooks):
    """Context manager: tensors saved for backward are kept in CPU memory and moved
    back to their device for backward (CPU tensors are kept as they are).

    >>> import chainrule as cr
    >>> x = cr.ones(2, requires_grad=True)
    >>> with cr.autograd.graph.save_on_cpu():
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad.tolist()
    [2.0, 2.0]
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):
            device = tensor.device
            if device.type == "cpu":
                return device, tensor                   # kept as it is
            host = tensor.detach().cpu()
            if pin_memory:
                host = host.pin_memory()
            return device, host

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager: using saved-tensor hooks inside raises ``error_message``.

    >>> import chainrule as cr
    >>> with cr.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
    ...     try:
    ...         with cr.autograd.graph.save_on_cpu():
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    no hooks here
    """

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self.prev = _saved_hooks.STATE.disabled_message
        _saved_hooks.STATE.disabled_message = self.error_message

    def __exit__(self, *exc):
        _saved_hooks.STATE.disabled_message = self.prev


class _AllowMutationOnSavedContext:
    """State of allow_mutation_on_saved_tensors: the saved tensors of each version
    counter, so a mutation can first give them a private copy."""

    def __init__(self):
        self.saved_by_counter = {}

    def register(self, saved):
        self.saved_by_counter.setdefault(id(saved.counter), []).append(saved)

    def before_mutation(self, tensor):
        counter = tensor._vc
        if counter is None:
            return
        for saved in self.saved_by_counter.pop(id(counter), []):
            saved.detach_from_mutation()

    def clear(self):
        self.saved_by_counter.clear()


class allow_mutation_on_saved_tensors:
    """Context manager: tensors saved for backward may be modified in place; the
    saved value is copied first, so backward still sees the original.

    >>> import chainrule as cr
    >>> with cr.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = cr.ones(2, 3, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     _ = b.sin_()
    ...     out.backward()
    >>> a.grad.tolist()[0]
    [2.0, 2.0, 2.0]
    """

    def __enter__(self):
        self.context = _AllowMutationOnSavedContext()
        _saved_hooks.STATE.mutation_contexts.append(self.context)
        _saved_hooks.ACTIVE[0] += 1
        return self.context

    def __exit__(self, *exc):
        _saved_hooks.STATE.mutation_contexts.pop()
        _saved_hooks.ACTIVE[0] -= 1
        self.context.clear()


def _before_inplace_mutation(tensor):
    """Called by in-place ops while any saved-tensor context may be active."""
    context = _saved_hooks.current_mutation_context()
    if context is not None:
        context.before_mutation(tensor)


# --- multi-grad hooks ----------------------------------------------------------------
class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once the gradients of ``tensors`` have been computed in a backward
    pass (mode "all": ``fn(grads)`` with None for tensors that got none; mode "any":
    ``fn(grad)`` with the first gradient computed).

    >>> import chainrule as cr
    >>> a = cr.rand(2, 3, requires_grad=True); b = cr.rand(2, 3, requires_grad=True)
    >>> c = a * b; d = a * b
    >>> h = cr.autograd.graph.register_multi_grad_hook(
    ...     (a, b, c, d), lambda grads: print([g is not None for g in grads]))
    >>> c.sum().backward(retain_graph=True)
    [True, True, True, False]
    >>> c.sum().backward(inputs=(a,), retain_graph=True)
    [True, False, True, False]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    import weakref
    # Weak references: the hooks live on the graph, which must not keep the tensors
    # (and so itself) alive.
    refs = tuple(weakref.ref(t) for t in tensors)
    key = object()
    hook = _all_hook if mode == "all" else _any_hook
    handles = [t.register_hook(hook(key, refs, i, fn)) for i, t in enumerate(tensors)
               if t.requires_grad]
    return _MultiHandle(handles)


def _all_hook(key, refs, index, fn):
    def hook(grad):
        from .engine import get_engine
        engine = get_engine()
        state = engine.hook_state()
        if key not in state:
            tensors = [r() for r in refs]
            expected = sum(1 for t in tensors if t is not None and t.requires_grad and
                           engine.will_receive_grad(_gradient_edge(t)[0]))
            state[key] = [expected, [None] * len(refs)]
        entry = state[key]
        entry[1][index] = grad
        entry[0] -= 1
        if entry[0] == 0:
            fn(tuple(entry[1]))
    return hook


def _any_hook(key, refs, index, fn):
    def hook(grad):
        from .engine import get_engine
        state = get_engine().hook_state()
        if key not in state:
            state[key] = True
            fn(grad)
    return hook


def increment_version(tensor):
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an
    in-place op would: for writes autograd cannot see. Inference tensors have no
    counter and are skipped.

    >>> import chainrule as cr
    >>> x = cr.zeros(2)
    >>> cr.autograd.graph.increment_version([x, x]); x._version
    2
    """
    from .._version_counter import bump
    tensors = (tensor,) if hasattr(tensor, "_vc") else tensor
    for t in tensors:
        if not t.is_inference():
            bump(t)
