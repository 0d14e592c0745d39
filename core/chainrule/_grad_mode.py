"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

The mode is thread local (Note [grad mode is thread local]): each thread starts with
grad enabled, and a mode set in one thread never leaks into another.
"""
import functools
import inspect
import threading


class _ModeState(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False


STATE = _ModeState()


def is_grad_enabled():
    """True when operations are recorded for autograd in this thread.

    >>> import chainrule as cr
    >>> with cr.no_grad():
    ...     cr.is_grad_enabled()
    False
    """
    return STATE.grad_enabled


def is_inference_mode_enabled():
    """True inside ``inference_mode()`` in this thread."""
    return STATE.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generators)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return decorated

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator(*args, **kwargs):
            gen = func(*args, **kwargs)
            with self.clone():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with self.clone():
                        gen.close()
                    raise
                except BaseException as exc:  # forward throw() into the generator
                    with self.clone():
                        response = gen.throw(exc)
                else:
                    with self.clone():
                        try:
                            response = gen.send(request)
                        except StopIteration as stop:
                            return stop.value
        return generator

    def clone(self):
        return type(self)()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable gradient recording inside a block or a decorated function.

    >>> import chainrule as cr
    >>> x = cr.ones(2, requires_grad=True)
    >>> with cr.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def __enter__(self):
        self.prev = STATE.grad_enabled
        STATE.grad_enabled = False

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Enable gradient recording inside a block (e.g. within ``no_grad``).

    >>> import chainrule as cr
    >>> x = cr.ones(2, requires_grad=True)
    >>> with cr.no_grad(), cr.enable_grad():
    ...     (x * 2).requires_grad
    True
    """

    def __enter__(self):
        self.prev = STATE.grad_enabled
        STATE.grad_enabled = True

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off: as a function call, a context manager or a decorator.

    >>> import chainrule as cr
    >>> _ = cr.set_grad_enabled(False); cr.is_grad_enabled()
    False
    >>> _ = cr.set_grad_enabled(True)
    """

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.prev = STATE.grad_enabled
        self.mode = mode
        STATE.grad_enabled = mode

    def __call__(self, func):
        STATE.grad_enabled = self.prev     # used as a decorator: undo the call's effect
        return super().__call__(func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev

    def clone(self):
        return _SetGradOnEnter(self.mode)


class _SetGradOnEnter(_DecoratorContextManager):
    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        self.prev = STATE.grad_enabled
        STATE.grad_enabled = self.mode

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev

    def clone(self):
        return _SetGradOnEnter(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside are inference tensors;
    ``inference_mode(False)`` leaves inference mode and turns grad mode on.

    >>> import chainrule as cr
    >>> with cr.inference_mode():
    ...     y = cr.ones(2) * 2
    >>> y.requires_grad, y.is_inference()
    (False, True)
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)                 # bare @inference_mode on a function

    def __init__(self, mode=True):
        self.mode = mode if isinstance(mode, bool) else True

    def __enter__(self):
        self.prev = (STATE.grad_enabled, STATE.inference)
        # inference_mode(False) turns grad mode on, even inside no_grad, like the reference
        STATE.grad_enabled, STATE.inference = not self.mode, self.mode

    def __exit__(self, *exc):
        STATE.grad_enabled, STATE.inference = self.prev

    def clone(self):
        return type(self)(self.mode)
