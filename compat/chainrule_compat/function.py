"""Old-style Functions (instance ``forward(self, ...)``/``backward(self, ...)``,
called as ``MyFn()(x)``) through core's legacy Function slot (Note [legacy Function
slot]): each such class gets a modern bridge Function, whose ctx the instance's
``save_for_backward``, ``saved_tensors``, ``mark_dirty``, ``mark_non_differentiable``
and ``needs_input_grad`` stand for."""
import weakref

from chainrule.autograd.function import Function

from ._warn import warn_once

_BRIDGES = weakref.WeakKeyDictionary()   # old-style class -> its bridge Function

LEGACY_MESSAGE = ("old-style autograd Function (instance forward, called as MyFn()(x)) is "
                  "deprecated; use @staticmethod forward(ctx, ...) / backward(ctx, ...) "
                  "and MyFn.apply(x)")


def call_legacy(instance, args):
    """``instance(*args)`` for an old-style Function instance.

    >>> import chainrule as cr, chainrule_compat
    >>> class Double(cr.autograd.Function):
    ...     def forward(self, x):
    ...         return x * 2
    ...     def backward(self, g):
    ...         return g * 2
    >>> x = cr.ones(2, requires_grad=True)
    >>> Double()(x).sum().backward()
    >>> x.grad.tolist()
    [2.0, 2.0]
    """
    warn_once(LEGACY_MESSAGE, DeprecationWarning, 2)
    cls = type(instance)
    bridge = _BRIDGES.get(cls)
    if bridge is None:
        bridge = _BRIDGES[cls] = _make_bridge(cls)
    return bridge.apply(instance, *args)


def _make_bridge(cls):
    def forward(ctx, instance, *args):
        ctx._legacy_instance = instance
        instance.save_for_backward = ctx.save_for_backward
        instance.mark_dirty = ctx.mark_dirty
        instance.mark_non_differentiable = ctx.mark_non_differentiable
        instance.needs_input_grad = ctx.needs_input_grad[1:]
        return cls.forward(instance, *args)

    def backward(ctx, *grads):
        instance = ctx._legacy_instance
        instance.saved_tensors = ctx.saved_tensors
        result = cls.backward(instance, *grads)
        return (None,) + (result if isinstance(result, tuple) else (result,))

    return type(Function)(cls.__name__, (Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(backward),
        "__module__": cls.__module__, "__qualname__": cls.__qualname__})
