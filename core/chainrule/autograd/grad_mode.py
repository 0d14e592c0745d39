"""``chainrule.autograd.grad_mode``: the grad-mode context managers (no_grad,
enable_grad, set_grad_enabled, inference_mode) and the engine switches
``set_multithreading_enabled``, ``enforce_grad_layout_policy`` and
``_force_original_view_tracking`` (view replay).

Each switch is thread local, as in torch. chainrule's engine always runs a backward
pass on the calling thread and always gives ``.grad`` the parameter's layout, so
the first two switches are recorded and reported, and change nothing else; view
replay changes the grad_fn a view gets when its base is modified in place (see
``_force_original_view_tracking``).
"""
import threading

from .._grad_mode import (_DecoratorContextManager, enable_grad, inference_mode,  # noqa: F401
                          no_grad, set_grad_enabled)

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "set_multithreading_enabled", "enforce_grad_layout_policy"]


class _Switches(threading.local):
    def __init__(self):
        self.multithreading = True
        self.view_replay = False
        self.grad_layout = True


SWITCHES = _Switches()


def _checked(name, mode):
    if not isinstance(mode, bool):
        raise TypeError(f"{name}(): argument 'enabled' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    return mode


def is_multithreading_enabled():
    """Whether backward may run on per-device worker threads (this thread's setting).

    >>> import chainrule as cr
    >>> cr.autograd.is_multithreading_enabled()
    True
    """
    return SWITCHES.multithreading


def is_view_replay_enabled():
    """Whether a view whose base is changed in place gets its own view ops replayed
    as history (this thread's setting; see ``_force_original_view_tracking``).

    >>> import chainrule as cr
    >>> cr.autograd.is_view_replay_enabled()
    False
    """
    return SWITCHES.view_replay


class set_multithreading_enabled(_DecoratorContextManager):
    """Enable or disable multithreaded backward in this thread: set by the call
    itself, restored when a ``with`` block ends. chainrule's backward always runs on
    the calling thread, so this only records the setting.

    >>> import chainrule as cr
    >>> with cr.autograd.set_multithreading_enabled(False):
    ...     cr.autograd.is_multithreading_enabled()
    False
    >>> cr.autograd.is_multithreading_enabled()
    True
    """

    def __init__(self, mode):
        self.prev = SWITCHES.multithreading
        SWITCHES.multithreading = _checked("set_multithreading_enabled", mode)
        self.mode = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        SWITCHES.multithreading = self.prev

    def clone(self):
        return type(self)(self.mode)


class enforce_grad_layout_policy(_DecoratorContextManager):
    """Enforce (default) or relax the rule that an accumulated ``.grad`` has its
    parameter's strides, in this thread. chainrule always lays gradients out like
    their parameters, so relaxing changes nothing; the setting is kept for code that
    toggles it.

    >>> import chainrule as cr
    >>> p = cr.ones(2, 3).t().requires_grad_()
    >>> with cr.autograd.enforce_grad_layout_policy(False):
    ...     (p * 2).sum().backward()
    >>> p.grad.stride() == p.stride()
    True
    """

    def __init__(self, enable=True):
        self.prev = SWITCHES.grad_layout
        SWITCHES.grad_layout = _checked("set_grad_layout_enforcement_enabled", enable)
        self.mode = enable

    def __call__(self, func):
        SWITCHES.grad_layout = self.prev   # used as a decorator: undo the call's effect
        return super().__call__(func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        SWITCHES.grad_layout = self.prev

    def clone(self):
        return type(self)(self.mode)


class _force_original_view_tracking(_DecoratorContextManager):
    """Set view replay on or off in this thread (a call, a ``with`` block or a
    decorator). With it on, a view whose base is modified in place gets as grad_fn
    its own view ops replayed on the base's new history (``SelectBackward0``, ...)
    instead of ``AsStridedBackward0``; the gradients are the same.

    >>> import chainrule as cr
    >>> x = cr.ones(3, requires_grad=True).clone()
    >>> with cr.autograd._force_original_view_tracking(True):
    ...     v = x[0]; _ = x.mul_(2)
    >>> type(v.grad_fn).__name__
    'SelectBackward0'
    """

    def __init__(self, mode):
        self.prev = SWITCHES.view_replay
        self.mode = mode
        SWITCHES.view_replay = _checked("set_view_replay_enabled", mode)

    def __call__(self, func):
        SWITCHES.view_replay = self.prev   # used as a decorator: undo the call's effect
        return super().__call__(func)

    def __enter__(self):
        SWITCHES.view_replay = self.mode

    def __exit__(self, *exc):
        SWITCHES.view_replay = self.prev

    def clone(self):
        return type(self)(self.mode)
