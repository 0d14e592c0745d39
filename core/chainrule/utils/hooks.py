"""``chainrule.utils.hooks``: the handle every module hook registration returns, and
the markers for hooks that are not saved with a tensor."""
import warnings

from ..nn.modules.module import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f):
    """Mark ``f`` as a hook that is not expected to be saved with its tensor (no
    warning from ``warn_if_has_hooks``); returns ``f``.

    >>> import chainrule as cr
    >>> hook = cr.utils.hooks.unserializable_hook(lambda grad: grad)
    >>> hook.__torch_unserializable__
    True
    """
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn for each gradient hook of ``tensor`` not marked ``unserializable_hook``:
    saving the tensor drops it.

    >>> import chainrule as cr
    >>> x = cr.ones(1, requires_grad=True)
    >>> _ = x.register_hook(cr.utils.hooks.unserializable_hook(lambda g: g))
    >>> cr.utils.hooks.warn_if_has_hooks(x)
    """
    for hook in _gradient_hooks(tensor).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If "
                          "this is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)


def _gradient_hooks(tensor):
    """``register_hook``'s table for ``tensor``: on a leaf itself, else on its node."""
    if tensor.grad_fn is None:
        return (tensor._extra.hooks if tensor._extra is not None else None) or {}
    return (tensor.grad_fn._tensor_hooks or {}).get(tensor._output_nr, {})
