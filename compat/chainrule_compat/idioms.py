"""Old tensor idioms, through core's legacy slots (chainrule/_legacy_slots.py):
``.creator``, ``loss.data[0]`` on a one-element result,
``backward(retain_variables=...)``. (``.new(...)`` and ``resize_`` are core's, as
they are torch's.)"""
import numpy as np

import chainrule as cr
from chainrule._tensor import Tensor

from ._warn import warn_once


def creator(tensor):
    """``tensor.creator``, the 0.2 name of ``grad_fn``.

    >>> import chainrule as cr, chainrule_compat
    >>> x = cr.ones(1, requires_grad=True)
    >>> (x * 2).creator.name()
    'MulBackward0'
    """
    warn_once("Variable.creator is deprecated; use .grad_fn", DeprecationWarning, 1)
    return tensor.grad_fn


def _new(tensor, *args):
    """A tensor of ``tensor``'s dtype from sizes or a Size (zero-filled), data (a list
    or tuple), or nothing: the typed constructors' rules, as the reference keeps them."""
    dtype = tensor.dtype
    if not args:
        return cr.empty(0, dtype=dtype)
    if all(isinstance(a, (int, np.integer)) for a in args):
        return cr.zeros(*args, dtype=dtype)
    if len(args) == 1 and isinstance(args[0], cr.Size):
        return cr.zeros(*args[0], dtype=dtype)
    if len(args) == 1:
        return cr.tensor(args[0], dtype=dtype)
    raise TypeError(f"new() received an invalid combination of arguments: {args!r}")


def zero_dim_index(tensor, key, frames_up):
    """``loss.data[0]`` / ``[0, 0]`` on a 0-dim result: the number, as 0.2 gave it
    (Note [zero-dim index slot]); other keys raise as modern code does.

    >>> import chainrule as cr, chainrule_compat
    >>> cr.tensor(2.5).data[0]
    2.5
    """
    keys = key if isinstance(key, tuple) else (key,)
    if not all(type(k) is int and k in (0, -1) for k in keys):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    warn_once("invalid index of a 0-dim tensor: indexing a one-element result to get its "
              "number is deprecated; use tensor.item()", UserWarning, frames_up)
    return tensor.item()


_RENAMED = {"retain_variables": "retain_graph"}


def deprecated_kwargs(api, kwargs, frames_up):
    """The modern keywords of ``api``'s deprecated ``kwargs`` (Note [deprecated
    keyword slot]), with a warning naming each replacement.

    >>> from chainrule_compat.idioms import deprecated_kwargs
    >>> deprecated_kwargs("backward", {"retain_variables": True}, 1)
    {'retain_graph': True}
    """
    modern = {}
    for name, value in kwargs.items():
        if name not in _RENAMED:
            raise TypeError(f"{api}() got an unexpected keyword argument '{name}'")
        warn_once(f"{name} option is deprecated; use {_RENAMED[name]} instead",
                  DeprecationWarning, frames_up)
        modern[_RENAMED[name]] = value
    return modern


def scalar_first(name, args, frames_up):
    """``(other, alpha)`` for the 0.2 order ``add_(scalar, tensor)`` (Note
    [scalar-first slot]), or None when ``args`` are not that.

    >>> import chainrule as cr, chainrule_compat
    >>> cr.zeros(2).add_(-2, cr.ones(2)).tolist()
    [-2.0, -2.0]
    """
    if name not in ("add", "sub") or len(args) != 2:
        return None
    scalar, other = args
    if not isinstance(scalar, (int, float, np.number)) or isinstance(scalar, bool) \
            or not isinstance(other, Tensor):
        return None
    warn_once(f"{name}_(scalar, tensor) is deprecated; use {name}_(tensor, alpha=scalar)",
              DeprecationWarning, frames_up)
    return other, scalar


def typed_constructor(name, dtype):
    """``chainrule.FloatTensor``-style constructors: ``(*sizes)`` gives zeros,
    ``(data)`` a tensor of that dtype, ``()`` an empty one.

    >>> import chainrule as cr, chainrule_compat
    >>> cr.FloatTensor(2, 3).shape, cr.LongTensor([1, 2]).dtype, cr.DoubleTensor().numel()
    (chainrule.Size([2, 3]), chainrule.int64, 0)
    """
    def construct(*args):
        warn_once(f"chainrule.{name} is deprecated; use chainrule.tensor(data, dtype=...) or "
                  f"chainrule.zeros(*sizes, dtype=...)", DeprecationWarning, 2)
        return _new(cr.empty(0, dtype=dtype), *args)
    construct.__name__ = construct.__qualname__ = name
    return construct


TYPED_CONSTRUCTORS = {
    name: typed_constructor(name, dtype) for name, dtype in (
        ("FloatTensor", cr.float32), ("DoubleTensor", cr.float64), ("HalfTensor", cr.float16),
        ("LongTensor", cr.int64), ("IntTensor", cr.int32), ("ShortTensor", cr.int16),
        ("CharTensor", cr.int8), ("ByteTensor", cr.uint8), ("BoolTensor", cr.bool))}
