"""chainrule-forward-ad: forward-mode automatic differentiation with dual tensors.

Imported as ``chainrule.autograd.forward_ad``. Inside a ``dual_level``, a dual tensor
(``make_dual(primal, tangent)``) carries a tangent through every op of core's
derivative table (each op's JVP, declared beside its VJP) and through custom
Functions that define ``jvp``; ``unpack_dual`` reads it back. Leaving the level drops
every tangent. Core is reached through Note [dispatch slot] and Note [tangent slot],
both filled only while a level is active.

>>> import chainrule as cr
>>> import chainrule.autograd.forward_ad as fwAD
>>> x = cr.tensor([0.0, 1.0], dtype=cr.float64)
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, cr.ones(2, dtype=cr.float64)).exp()
...     fwAD.unpack_dual(y).tangent.tolist() == y.detach().tolist()
True
"""
import collections
import contextlib
import functools

from chainrule._ops import _registry
from chainrule._ops._common import EMPTY
from chainrule._ops.shape import _ALIAS_VIEW_FN, ALIAS
from chainrule._ops.views import make_view
from chainrule._tensor import Tensor, _differentiable_dtype
from chainrule.autograd import engine, tangent_slot

from ._slot import TangentSlot
from ._tangents import CURRENT, PAUSED, Level, alias_for_dual, dispatch, paused
from ._vmapped import involves_vmap, make_physical_dual, wrapped_tangent

# Note [one dual level]
#     Like the reference, one dual level at most exists at a time, and its index is 0:
#     entering a second ("nesting" dual_level) raises "Nested forward mode AD is not
#     supported at the moment" (higher-order forward derivatives go through
#     chainrule.func.jvp). The ``level=`` arguments follow the reference: a negative
#     level means "none" (unpack_dual returns the tensor itself), any level but 0 is
#     invalid for make_dual, and for unpack_dual of a tensor with a tangent; exiting
#     checks the level is the current one before it checks that one exists.
#
# Note [a transform's dual level]
#     chainrule.func's jvp, jacfwd (hessian) and linearize run forward AD in a level
#     marked ``by_transform`` (``transform_dual_level``; set on the Level there, not
#     in its class, which the C++ engine mirrors). The reference's transforms
#     have levels of their own beside forward_ad's one: a transform nests in a transform
#     (here one inside another computes by reverse mode: Note [nested transforms] in the
#     functional layer), but one called inside a user's dual_level raises the nesting
#     error (``refuse_user_level``), as a user's dual_level inside a transform does.
NESTED = "Nested forward mode AD is not supported at the moment"
__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


def enter_dual_level():
    """Enter a dual level (only one may be active: Note [one dual level]) and return
    its index.

    >>> import chainrule.autograd.forward_ad as fwAD
    >>> level = fwAD.enter_dual_level(); fwAD.exit_dual_level(level=level); level
    0
    """
    if CURRENT[0] is not None:
        raise RuntimeError(NESTED)
    engine.get_engine()     # Note [engine selection]: the C++ engine's dual fast methods
    level = Level(0)
    level.handles = (_registry.add_dispatcher(dispatch),
                     tangent_slot.set_tangent_slot(TangentSlot))
    CURRENT[0] = level
    return level.index


def exit_dual_level(*, level=None):
    """Leave the current dual level; every tangent made in it is dropped.

    >>> import chainrule.autograd.forward_ad as fwAD
    >>> fwAD.exit_dual_level()
    Traceback (most recent call last):
    ...
    RuntimeError: Dual level must be a positive number.
    """
    current = CURRENT[0]
    index = current.index if current is not None else -1
    if level is not None and level != index:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    if current is None:
        raise RuntimeError("Dual level must be a positive number.")
    handle, previous_slot = current.handles
    handle.remove()
    tangent_slot.set_tangent_slot(previous_slot)
    current.tangents.clear()
    current.by_array.clear()
    CURRENT[0] = None


def make_dual(tensor, tangent, *, level=None):
    """A dual tensor: an alias of ``tensor`` whose tangent is ``tangent`` (recorded as
    the reference records it, a ViewBackward0).

    Gradients flow back to ``tensor``; ``tangent`` is kept as is (not copied), so a
    tangent that requires grad makes the JVP differentiable. The dual is a view of
    ``tensor`` (of its root, where ``tensor`` is a view itself), as the reference's:
    ``dual._base``, the version counter and in-place writes are shared; the tangent
    belongs to the dual alone.

    >>> import chainrule as cr
    >>> import chainrule.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     d = fwAD.make_dual(cr.tensor([2.0]), cr.tensor([1.0]))
    ...     fwAD.unpack_dual(d * d).tangent.tolist()
    [4.0]
    """
    current = CURRENT[0]
    if ((current.index if current is not None else -1) if level is None else level) < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    _check_dual_args(tensor, tangent, level)
    if current is None:
        raise RuntimeError("Trying to access a forward AD level with an invalid index. This "
                           "index was either not created or is already deleted.")
    if wrapped_tangent(current, tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {current.index} is not supported.")
    if involves_vmap(tensor, tangent):          # Note [tangents of batched tensors]
        return make_physical_dual(current, tensor, tangent)
    dual = alias_for_dual(tensor)
    current.set(dual, tangent)
    return dual


def _check_dual_args(tensor, tangent, level):
    """make_dual's checks in the reference's order: types, dtypes, the level (only
    level 0 can exist: Note [one dual level]), then the sizes."""
    for name, value in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(value, Tensor):
            raise TypeError(f"make_dual(): argument '{name}' must be Tensor, not "
                            f"{type(value).__name__}")
        if not _differentiable_dtype(value._data.dtype):
            raise ValueError(f"Expected {name} to be floating point or complex, but got: "
                             f"{value.dtype}")
    if level is not None and level != 0:
        raise RuntimeError("Invalid level given to _make_dual")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor._data.shape)} while the given forward gradient "
                           f"is of size {list(tangent._data.shape)}.")


# unpack_dual's primal: an alias, recorded as the reference's torch::autograd::Identity
# node (not a table op: vmap and forward AD take it for the alias it is)
_PRIMAL = _registry.OpDef("alias", ALIAS.forward, ALIAS.inputs, (lambda F, g: g,),
                          lambda F, t: t[0], (), "torch::autograd::Identity", False)


class UnpackedDualTensor(collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """What ``unpack_dual`` returns: ``primal`` (a view of the dual without its
    tangent) and ``tangent`` (None when there is none).

    >>> import chainrule as cr
    >>> import chainrule.autograd.forward_ad as fwAD
    >>> fwAD.unpack_dual(cr.ones(1)).tangent is None
    True
    """


def unpack_dual(tensor, *, level=None):
    """Split a dual tensor into its primal (an alias recorded as the reference's
    ``torch::autograd::Identity`` node) and its tangent (at the current level).

    >>> import chainrule as cr
    >>> import chainrule.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     t = cr.tensor([3.0])
    ...     fwAD.unpack_dual(fwAD.make_dual(cr.tensor([1.0]), t)).tangent is t
    True
    """
    return _unpacked(tensor, level, _PRIMAL)


def unpack_transform_output(tensor):
    """``unpack_dual`` of a chainrule.func transform's output: its primal is an alias
    recorded as the reference's transforms record theirs (AliasBackward0)."""
    return _unpacked(tensor, None, ALIAS)


def _unpacked(tensor, level, primal_op):
    current = CURRENT[0]
    if ((current.index if current is not None else -1) if level is None else level) < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = wrapped_tangent(current, tensor) if current is not None else None
    if tangent is not None and level is not None and level != current.index:
        raise RuntimeError("Invalid level given to _fw_primal")
    with paused():
        primal = make_view(primal_op, tensor, EMPTY, _ALIAS_VIEW_FN)
    if PAUSED.on:                 # e.g. in a Function's forward: no tangents there
        tangent = None
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager (and decorator) for one dual level: tangents live inside it.

    >>> import chainrule as cr
    >>> import chainrule.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     d = fwAD.make_dual(cr.tensor([1.0]), cr.tensor([2.0]))
    >>> fwAD.unpack_dual(d).tangent is None
    True
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


@contextlib.contextmanager
def transform_dual_level():
    """A transform's dual level (Note [a transform's dual level])."""
    with dual_level():
        CURRENT[0].by_transform = True
        yield


def refuse_user_level():
    """Raise the nesting error inside a user's dual level (Note [a transform's dual
    level])."""
    current = CURRENT[0]
    if current is not None and not getattr(current, "by_transform", False):
        raise RuntimeError(NESTED)
