"""``chainrule.overrides`` (the reference's ``torch.overrides``): helpers for types that
implement ``__torch_function__`` and function modes (Note [torch function slot] in
``_torch_function.py``).

>>> import chainrule as cr
>>> from chainrule.overrides import TorchFunctionMode
>>> class Count(TorchFunctionMode):
...     def __init__(self):
...         super().__init__(); self.names = []
...     def __torch_function__(self, func, types, args=(), kwargs=None):
...         self.names.append(func.__name__)
...         return func(*args, **(kwargs or {}))
>>> with Count() as mode:
...     _ = cr.add(cr.ones(2), 1).sum()
>>> mode.names
['ones', 'add', 'sum']
"""
import contextlib
import functools

from . import _torch_function as _tf
from ._torch_function import STATE as _STATE

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "get_default_nowrap_functions", "handle_torch_function", "has_torch_function",
           "resolve_name", "is_tensor_like", "is_tensor_method_or_property",
           "wrap_torch_function", "enable_reentrant_dispatch"]


def _tensor():
    from ._tensor import Tensor
    return Tensor


def has_torch_function(relevant_args):
    """Whether any of ``relevant_args`` (an iterable) takes part in
    ``__torch_function__`` dispatch (exact Tensors and Parameters do not), or a mode
    is active.

    >>> import chainrule as cr
    >>> from chainrule.overrides import has_torch_function
    >>> has_torch_function((cr.ones(1), 2.0))
    False
    """
    if _STATE.all_disabled:
        return False
    if _STATE.modes:
        return True
    return not _STATE.subclass_disabled and \
        bool(_tf.overloaded_args(relevant_args, plain_tensor=False))


def has_torch_function_unary(obj):
    """``has_torch_function((obj,))``.

    >>> import chainrule as cr
    >>> from chainrule.overrides import has_torch_function_unary
    >>> has_torch_function_unary(cr.ones(1))
    False
    """
    return has_torch_function((obj,))


def has_torch_function_variadic(*args):
    """``has_torch_function(args)``.

    >>> import chainrule as cr
    >>> from chainrule.overrides import has_torch_function_variadic
    >>> has_torch_function_variadic(cr.ones(1), cr.ones(1))
    False
    """
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call ``public_api``'s override: the innermost mode, then the
    ``__torch_function__`` of each overloaded type among ``relevant_args``; a
    TypeError when every one returns NotImplemented.

    >>> import chainrule as cr
    >>> from chainrule.overrides import handle_torch_function
    >>> class Half:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return "handled " + func.__name__
    >>> def double(x):
    ...     return handle_torch_function(double, (x,), x)
    >>> double(Half())
    'handled double'
    """
    overloaded = _tf.overloaded_args(relevant_args, plain_tensor=True)
    return _tf.handle(public_api, overloaded, args, kwargs, c_level=False)


def is_tensor_like(inp):
    """Whether ``inp`` is a Tensor or an object whose type defines
    ``__torch_function__``.

    >>> import chainrule as cr
    >>> from chainrule.overrides import is_tensor_like
    >>> is_tensor_like(cr.ones(1)), is_tensor_like(1.0)
    (True, False)
    """
    return type(inp) is _tensor() or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func):
    """Whether ``func`` is a Tensor method or property getter (as a
    ``__torch_function__`` receives them).

    >>> import chainrule as cr
    >>> from chainrule.overrides import is_tensor_method_or_property
    >>> is_tensor_method_or_property(cr.Tensor.add), is_tensor_method_or_property(cr.add)
    (True, False)
    """
    return func in _tensor_methods() or getattr(func, "__name__", None) == "__get__"


def _tensor_methods():
    Tensor = _tensor()
    return {v for k, v in vars(Tensor).items()
            if k in _tf.METHODS or getattr(v, "__wrapped__", None) is not None}


def get_default_nowrap_functions():
    """The functions whose results the default ``Tensor.__torch_function__`` does not
    convert to the subclass (the getters of ``grad``, ``_grad`` and ``_base``).

    >>> import chainrule as cr
    >>> from chainrule.overrides import get_default_nowrap_functions
    >>> cr.Tensor.grad.__get__ in get_default_nowrap_functions()
    True
    """
    return _tf.nowrap_functions()


def get_ignored_functions():
    """The public functions that no ``__torch_function__`` overrides (factories and
    functions without tensor arguments).

    >>> import chainrule as cr
    >>> from chainrule.overrides import get_ignored_functions
    >>> cr.is_tensor in get_ignored_functions(), cr.add in get_ignored_functions()
    (True, False)
    """
    import chainrule
    Tensor = _tensor()
    found = {getattr(chainrule, n) for n in _tf.IGNORED | _tf.FACTORIES if hasattr(chainrule, n)}
    found |= {getattr(Tensor, n) for n in _tf.TENSOR_IGNORED if n in vars(Tensor)}
    return found


def get_overridable_functions():
    """A dict from namespace (``chainrule``, ``chainrule.Tensor``,
    ``chainrule.nn.functional``, ...) to its overridable functions.

    >>> import chainrule as cr
    >>> from chainrule.overrides import get_overridable_functions
    >>> cr.add in get_overridable_functions()[cr]
    True
    """
    import chainrule
    from chainrule import fft, linalg, special
    from chainrule.nn import functional
    out = {}
    for module in (chainrule, functional, linalg, fft, special):
        out[module] = [v for v in vars(module).values()
                       if _tf.is_wrapper(v) and not _tf.site_of(v).mode_only]
    Tensor = _tensor()
    out[Tensor] = list(_tensor_methods()) + [
        v.__get__ for v in vars(Tensor).values() if isinstance(v, property)]
    return out


def get_testing_overrides():
    """A dict from each overridable function to a dummy with its signature that
    returns -1 (for testing ``__torch_function__`` implementations).

    >>> import chainrule as cr
    >>> from chainrule.overrides import get_testing_overrides
    >>> get_testing_overrides()[cr.add](cr.ones(1), 1)
    -1
    """
    return {f: (lambda *args, **kwargs: -1) for fns in get_overridable_functions().values()
            for f in fns}


def resolve_name(f):
    """The public name of an overridable function, e.g. ``'chainrule.add'``, or None.

    >>> import chainrule as cr
    >>> from chainrule.overrides import resolve_name
    >>> resolve_name(cr.add), resolve_name(cr.Tensor.add)
    ('chainrule.add', 'chainrule.Tensor.add')
    """
    Tensor = _tensor()
    if isinstance(f, property) or getattr(f, "__name__", None) in ("__get__", "__set__"):
        owner = getattr(f, "__self__", f)
        name = next((k for k, v in vars(Tensor).items() if v is owner), None)
        return None if name is None else f"chainrule.Tensor.{name}.{getattr(f, '__name__', '__get__')}"
    for k, v in vars(Tensor).items():
        if v is f:
            return f"chainrule.Tensor.{k}"
    site = _tf.site_of(f) if _tf.is_wrapper(f) else None
    return None if site is None or site.module is None else f"{site.module}.{f.__name__}"


def wrap_torch_function(dispatcher):
    """Decorator: the decorated function dispatches to ``__torch_function__`` over
    the arguments ``dispatcher(*args, **kwargs)`` returns.

    >>> import chainrule as cr
    >>> from chainrule.overrides import wrap_torch_function
    >>> @wrap_torch_function(lambda x: (x,))
    ... def twice(x):
    ...     return x * 2
    >>> twice(cr.ones(1)).tolist()
    [2.0]
    """
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


# --- modes ---------------------------------------------------------------------------------
class TorchFunctionMode:
    """A context manager whose ``__torch_function__(func, types, args, kwargs)`` sees
    every overridable call made inside it (the mode is off while its own
    ``__torch_function__`` runs); modes nest, the innermost first.

    >>> import chainrule as cr
    >>> from chainrule.overrides import TorchFunctionMode
    >>> class Neg(TorchFunctionMode):
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         out = func(*args, **(kwargs or {}))
    ...         return -out if func is cr.add else out
    >>> with Neg():
    ...     cr.add(cr.tensor(1.0), 1).item()
    -2.0
    """

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        from ._ops._method_slot import suspend_accelerator
        suspend_accelerator()
        _tf.MODES[0] += 1
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        from ._ops._method_slot import resume_accelerator
        _pop_mode()
        _tf.MODES[0] -= 1
        resume_accelerator()

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every call unchanged (a base for modes that only watch).

    >>> import chainrule as cr
    >>> from chainrule.overrides import BaseTorchFunctionMode
    >>> with BaseTorchFunctionMode():
    ...     cr.add(cr.tensor(1.0), 1).item()
    2.0
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _push_mode(mode):
    _tf.enable()
    _STATE.modes.append(mode)


def _pop_mode():
    return _STATE.modes.pop()


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


def _get_current_function_mode():
    """The innermost active TorchFunctionMode, or None.

    >>> from chainrule.overrides import _get_current_function_mode
    >>> _get_current_function_mode() is None
    True
    """
    return _STATE.modes[-1] if _STATE.modes else None


def _get_current_function_mode_stack():
    return list(_STATE.modes)


def _len_torch_function_stack():
    return len(_STATE.modes)


def _is_torch_function_mode_enabled():
    return bool(_STATE.modes) and not _STATE.all_disabled


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """Kept for the reference's API: chainrule has no dispatcher below
    ``__torch_function__`` to re-enter, so this does nothing.

    >>> from chainrule.overrides import enable_reentrant_dispatch
    >>> with enable_reentrant_dispatch():
    ...     pass
    """
    yield


_has_torch_function = has_torch_function
_has_torch_function_unary = has_torch_function_unary
_has_torch_function_variadic = has_torch_function_variadic
