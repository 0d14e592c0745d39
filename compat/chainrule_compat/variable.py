"""``Variable`` and ``volatile``: the 0.2 API on chainrule tensors.

Note [volatile through the dispatch slot]
    A volatile tensor keeps its 0.2 meaning: ops with a volatile input record no
    graph and their results are volatile too; other code records as usual. Compat
    keeps the ids of the live volatile tensors (a weak reference each) and holds a
    dispatcher in core's dispatch slot (Note [dispatch slot]) only while one is alive:
    with none alive the slot is empty and ops pay core's one check, imported or not.
"""
import threading
import weakref

import chainrule as cr
from chainrule import _legacy_slots
from chainrule._ops import _registry
from chainrule._tensor import Tensor

from ._warn import warn_once

VOLATILE_MESSAGE = ("volatile is deprecated and has no modern equivalent flag; evaluate "
                    "under `with chainrule.no_grad():` instead")
_LIVE = {}                   # id(tensor) -> weakref of the live volatile tensors
_LOCK = threading.RLock()    # weakref callbacks may run during a registration
_handle = None               # our entry in the dispatch slot, while _LIVE is not empty


def mark_volatile(tensor):
    """Make ``tensor`` volatile (Note [volatile through the dispatch slot]).

    >>> import chainrule as cr
    >>> from chainrule_compat.variable import is_volatile, mark_volatile
    >>> t = mark_volatile(cr.ones(2))
    >>> is_volatile(t), is_volatile(cr.ones(2))
    (True, False)
    """
    global _handle
    key = id(tensor)
    with _LOCK:
        _LIVE[key] = weakref.ref(tensor, lambda _, key=key: _forget(key))
        if _handle is None:
            _handle = _registry.add_dispatcher(_volatile_dispatcher)
            _legacy_slots.FUNCTION_WRAPPER = _volatile_function
    return tensor


def is_volatile(tensor):
    """Whether ``tensor`` is volatile.

    >>> import chainrule as cr
    >>> from chainrule_compat.variable import is_volatile
    >>> is_volatile(cr.zeros(1))
    False
    """
    return id(tensor) in _LIVE


def _forget(key):
    global _handle
    with _LOCK:
        _LIVE.pop(key, None)
        if not _LIVE and _handle is not None:
            _handle.remove()
            _handle = None
            _legacy_slots.FUNCTION_WRAPPER = None


def _volatile_dispatcher(run, op, inputs, attrs, view_base):
    if not _any_volatile(inputs):
        return run(op, inputs, attrs, view_base)
    with cr.no_grad():
        return _volatile_results(run(op, inputs, attrs, view_base))


def _volatile_function(apply, cls, args, kwargs):
    """A custom Function with a volatile input (core's Note [Function wrapper slot]):
    run without recording, like the table ops, and volatile results."""
    if not _any_volatile(args):
        return apply(cls, args, kwargs)
    with cr.no_grad():
        return _volatile_results(apply(cls, args, kwargs))


def _any_volatile(values):
    return any(id(v) in _LIVE for v in values if isinstance(v, Tensor))


def _volatile_results(out):
    for t in (out if isinstance(out, tuple) else (out,)):
        if isinstance(t, Tensor):
            mark_volatile(t)
    return out


class _VariableMeta(type):
    """``Variable(...)`` builds a tensor; ``isinstance(t, Variable)`` and
    ``type(t) == Variable`` hold for every tensor, as old code expects."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, Tensor)

    def __eq__(cls, other):
        return other is cls or other is Tensor

    def __hash__(cls):
        return hash(Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=False):
        return _variable(data, requires_grad, volatile)


class Variable(metaclass=_VariableMeta):
    """The 0.2 ``Variable(data, requires_grad=False, volatile=False)``: a chainrule
    tensor sharing ``data``'s memory.

    >>> import chainrule as cr
    >>> from chainrule_compat import Variable
    >>> v = Variable(cr.ones(2), requires_grad=True)
    >>> (v * 3).sum().backward()
    >>> v.grad.data.tolist(), isinstance(v, Variable), type(v) == Variable
    ([3.0, 3.0], True, True)
    """


def _variable(data, requires_grad, volatile):
    if data is None:
        data = cr.tensor([])
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    if volatile and requires_grad:
        raise RuntimeError("Variable can't be volatile and require_grad at the same time!")
    out = data.detach()
    if requires_grad:
        out.requires_grad_(True)
    if volatile:
        warn_once(VOLATILE_MESSAGE, DeprecationWarning, 2)
        mark_volatile(out)
    return out


def volatile_attribute(tensor):
    """``tensor.volatile`` (Note [legacy attribute slot]): readable, with a warning.

    >>> import warnings, chainrule as cr
    >>> from chainrule_compat import Variable
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     (Variable(cr.ones(1), volatile=True) * 2).volatile, cr.ones(1).volatile
    (True, False)
    """
    warn_once(VOLATILE_MESSAGE, DeprecationWarning, 1)
    return is_volatile(tensor)
