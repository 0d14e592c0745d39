"""Slots through which the compat layer (chainrule-compat) keeps Variable-era code
running. Core never fills them; each is None or empty until compat is imported, and
each is consulted only where modern code fails (an unknown attribute, a keyword
argument, an index or a call that would raise), so an empty slot costs modern code
nothing.

Note [legacy attribute slot]
    ``add_legacy_attribute(name, fn)`` gives Tensor a read-only property ``name``
    returning ``fn(tensor)`` (e.g. ``volatile``, ``creator``, ``new``); it refuses a
    name Tensor already has, so attributes that exist keep their meaning, and
    ``remove_legacy_attribute(name)`` takes it away again. Without an entry the name
    raises Python's usual AttributeError. Tensor deliberately has no ``__getattr__``:
    a class that defines one makes every attribute lookup on its instances slower
    (CPython can no longer specialize ``x.sin()``; about 3% of the bench's chain).
    ``LEGACY_MODULE_ATTRIBUTES`` (name -> the object, e.g. ``chainrule.FloatTensor``)
    is read by the module's ``__getattr__``, which Python consults only after a
    lookup fails.

Note [deprecated keyword slot]
    ``Tensor.backward`` and ``autograd.backward`` accept extra keyword arguments
    only to hand them to ``DEPRECATED_KWARGS(api, kwargs, stacklevel)``, which returns
    the modern keywords to use (e.g. ``retain_variables`` -> ``retain_graph``) and
    warns. When the slot is None they raise the TypeError Python would.

Note [zero-dim index slot]
    Indexing a 0-dim tensor (``loss.data[0]``) raises IndexError in modern code.
    The error is raised as ``ZeroDimIndexError``; ``Tensor.__getitem__`` catches it
    (no cost unless raised) and, when ``ZERO_DIM_INDEX`` is set, returns
    ``ZERO_DIM_INDEX(tensor, key, stacklevel)`` instead of raising.

Note [legacy Function slot]
    Instances of a ``Function`` subclass whose ``forward`` is not a staticmethod
    (``MyFn()(x)``, the old style) raise the reference's "Legacy autograd function"
    error, unless ``LEGACY_FUNCTION`` is set: then constructing them works and
    calling one returns ``LEGACY_FUNCTION(instance, args)``.

Note [scalar-first slot]
    ``p.data.add_(-lr, p.grad.data)``, the 0.2 argument order of ``add_``/``sub_``
    (scalar, tensor), raises TypeError in modern code. The in-place method catches it
    (no cost unless raised) and, when ``SCALAR_FIRST`` is set, calls it again with
    ``(other, alpha)`` from ``SCALAR_FIRST(name, args, frames_up)``, or re-raises
    when that returns None.

Note [Function wrapper slot]
    ``Function.apply`` runs ``FUNCTION_WRAPPER(apply, cls, args, kwargs)`` when the
    slot is set, which calls ``apply(cls, args, kwargs)`` itself (compat sets it only
    while a volatile tensor is alive, to run a Function with a volatile input
    without recording, as every table op does through Note [dispatch slot]). Empty,
    it costs one global read per Function call.

>>> from chainrule import _legacy_slots
>>> _legacy_slots.LEGACY_FUNCTION is None or callable(_legacy_slots.LEGACY_FUNCTION)
True
"""

LEGACY_ATTRIBUTES = {}     # Note [legacy attribute slot]: name -> fn, as installed
LEGACY_MODULE_ATTRIBUTES = {}
DEPRECATED_KWARGS = None   # Note [deprecated keyword slot]
ZERO_DIM_INDEX = None      # Note [zero-dim index slot]
LEGACY_FUNCTION = None     # Note [legacy Function slot]
SCALAR_FIRST = None        # Note [scalar-first slot]
FUNCTION_WRAPPER = None    # Note [Function wrapper slot]


class ZeroDimIndexError(IndexError):
    """An index into a 0-dim tensor (Note [zero-dim index slot])."""


def add_legacy_attribute(name, getter):
    """Give Tensor the legacy attribute ``name`` (Note [legacy attribute slot]).

    >>> import chainrule as cr
    >>> from chainrule import _legacy_slots
    >>> _legacy_slots.add_legacy_attribute("old_size", lambda t: tuple(t.shape))
    >>> cr.zeros(2, 3).old_size
    (2, 3)
    >>> _legacy_slots.remove_legacy_attribute("old_size")
    """
    from ._tensor import Tensor
    if name not in LEGACY_ATTRIBUTES and hasattr(Tensor, name):
        raise ValueError(f"Tensor already has an attribute '{name}'; a legacy attribute "
                         f"may not replace it")
    LEGACY_ATTRIBUTES[name] = getter
    setattr(Tensor, name, property(getter, doc=f"Legacy attribute (Note [legacy "
                                                f"attribute slot]): {name}"))


def remove_legacy_attribute(name):
    """Take away a legacy attribute added by ``add_legacy_attribute``."""
    from ._tensor import Tensor
    if LEGACY_ATTRIBUTES.pop(name, None) is not None:
        delattr(Tensor, name)


def deprecated_kwargs(api, kwargs, stacklevel):
    """The modern keywords for ``kwargs`` of ``api`` (Note [deprecated keyword slot]).

    >>> from chainrule._legacy_slots import deprecated_kwargs
    >>> deprecated_kwargs("backward", {}, 2)
    {}
    """
    if not kwargs:
        return kwargs
    if DEPRECATED_KWARGS is None:
        raise TypeError(f"{api}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return DEPRECATED_KWARGS(api, kwargs, stacklevel + 1)
