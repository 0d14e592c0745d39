"""What core reports through Note [tangent slot]: in-place writes and custom Functions."""
import numpy as np

from chainrule import _grad_mode
from chainrule._tensor import Tensor

from ._tangents import CURRENT, PAUSED, paused
from ._vmapped import wrapped_tangent


class TangentSlot:
    """The forward_ad layer's implementation of core's tangent slot."""

    @staticmethod
    def inplace(t, result):
        """``result`` was written into ``t`` in place: so is its tangent."""
        level = CURRENT[0]
        new = level.get(result)
        if new is None:
            return
        if level.batch is not None and t._base is not None:
            # Note [batched tangents]: a view's batched tangent need not be a view of
            # its base's, so the write could not reach the base's tangent
            raise NotImplementedError("forward AD with batched tangents: an in-place op on "
                                      "a view is not supported")
        old = level.get(t)
        if old is None:
            old = _view_of_base_tangent(level, t)
        if old is None:
            level.set(t, new.clone() if new._requires_grad else Tensor._wrap(new._data.copy()))
        elif new._requires_grad and not old._requires_grad and t._base is None and \
                _grad_mode.STATE.grad_enabled:
            # a recorded tangent over a plain one (a clone's): writing it in place would
            # drop its history (reverse-over-forward through exp_ would see none), and
            # no view shares the plain one (t is no view; its own views' tangents are
            # found through their base's only when they have none of their own)
            level.set(t, new.clone())
        else:
            write_tangent(old, new)

    @staticmethod
    def run_forward(run):
        with paused():                 # like the reference: forward sees no tangents
            return run()

    @staticmethod
    def function_applied(ctx, args, outputs):
        level = CURRENT[0]
        tangents = [level.get(a) if isinstance(a, Tensor) else None for a in args]
        if all(g is None for g in tangents):
            return
        if level.batch is not None:             # Note [batched tangents]
            from ._batched import function_jvp_rows
            results = function_jvp_rows(lambda row: _call_jvp(ctx, row), args, tangents,
                                        level.batch)
        else:
            tangents = [_zero_like(a) if g is None and isinstance(a, Tensor) else g
                        for a, g in zip(args, tangents)]
            results = _call_jvp(ctx, tangents)
        dirty = {id(d) for d in ctx._dirty}
        for out, tangent in zip(outputs, results):
            if not isinstance(out, Tensor) or tangent is None:
                continue
            if id(out) in dirty and level.get(out) is not None:
                write_tangent(level.get(out), tangent)
            else:
                level.set_output(out, tangent)

    @staticmethod
    def kept_original(t, copy):
        tangent = CURRENT[0].get(t)
        if tangent is not None:
            CURRENT[0].set(copy, tangent.clone() if tangent._requires_grad else
                           Tensor._wrap(tangent._data.copy()))

    @staticmethod
    def tangent_of(t):
        level = CURRENT[0]
        return None if level is None or PAUSED.on else wrapped_tangent(level, t)

    @staticmethod
    def saved_output(t):
        tangent = CURRENT[0].get_by_array(t._data)
        if tangent is not None:
            CURRENT[0].set(t, tangent)


def _call_jvp(ctx, tangents):
    ctx._jvp_saved = tuple(getattr(ctx, "saved_for_forward", ()))
    try:
        with paused():
            results = ctx._forward_cls.jvp(ctx, *tangents)
    finally:
        ctx._jvp_saved = None
    return results if isinstance(results, tuple) else (results,)


def _zero_like(t):
    return Tensor._wrap(np.zeros(t._data.shape, t._data.dtype))


def write_tangent(old, new):
    """Write ``new`` into the tangent ``old`` in place (recorded when it must be)."""
    basis = getattr(CURRENT[0], "basis", None)
    if basis:                       # no longer basis directions (Note [basis tangents])
        basis.pop(id(old._data), None)
    if new._requires_grad and _grad_mode.STATE.grad_enabled and not old.is_leaf:
        with paused():
            old.copy_(new)
        return
    np.copyto(old._data, new._data, casting="unsafe")
    old._bump_version()


def _view_of_base_tangent(level, t):
    """For a view ``t`` without a tangent: the view of its base's tangent (the base
    gets a zero one if it has none), like the reference."""
    base = t._base
    view_fn = t._extra.view_fn if t._extra is not None else None
    if base is None or view_fn is None:
        return None
    base_tangent = level.get(base)
    if base_tangent is None:
        base_tangent = _zero_like(base)
        level.set(base, base_tangent)
    tangent = Tensor._wrap(view_fn(base_tangent._data))
    level.set(t, tangent)
    return tangent
