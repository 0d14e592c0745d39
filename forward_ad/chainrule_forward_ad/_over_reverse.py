"""Forward-over-reverse without a recorded backward: gradients that carry tangents.

Note [untracked forward-over-reverse]
    ``H v`` (hvp, vhp, ``jvp(grad(f))``) is the tangent, along ``v``, of a gradient. The
    general way records the backward pass (``create_graph=True``) so that tangents can
    flow through it, and records every tangent computation of the forward pass too
    (its inputs require grad): each op of both passes then costs a graph node. When
    neither the tangents nor the gradient will be differentiated again, nothing needs
    recording but the forward pass itself:

    1. ``tangents_untracked()``: the forward runs with its graph recorded as usual,
       while each op's tangent is computed on ndarrays (Note [raw tangent path]) and
       stored by the output and by its array (a node rebuilds saved outputs from
       their arrays: Note [tangent slot], ``saved_output``).
    2. ``gradient_with_tangents``: the backward runs with ``create_graph=True`` (the
       formulas run on Tensors, Note [one formula, two namespaces]) but grad mode
       off, so nothing is recorded; each formula's ops find the tangents of the
       saved values and of the incoming gradient in the level and propagate them on
       the raw path. The gradients it returns carry their tangents: ``H v``.

    So each op costs its forward, its raw JVP, its VJP formula's ops and their raw
    JVPs, and no node beyond the forward's. The result equals the recorded
    forward-over-reverse (the same formulas run, on the same values) and the
    double-backward trick (by symmetry of the Hessian, for real inputs).
"""
import numpy as np

from chainrule import _grad_mode
from chainrule._batched import rewrap, unwrap_all
from chainrule._ops import _registry
from chainrule._tensor import Tensor
from chainrule.autograd.engine import get_engine
from chainrule.autograd.node import gradient_edge

from ._tangents import (CURRENT, PAUSED, _RAW, _raw_plan, _raw_tangent, attach_tangents,
                        dispatch)


def applies(leaves):
    """Whether a gradient of a function of ``leaves`` may take Note [untracked
    forward-over-reverse]: ``only_for_dual_level`` and ``untracked_possible``."""
    return only_for_dual_level(leaves) and untracked_possible()


def untracked_possible():
    """The active level not batched and its dispatcher the only one (no vmap, no
    profiler around)."""
    return CURRENT[0].batch is None and len(_registry._DISPATCHERS) == 1


def only_for_dual_level(leaves):
    """Whether a reverse transform of a function of ``leaves`` differentiates only for
    the tangents of a dual level: one is active (not paused) and nothing that an outer
    reverse pass could differentiate, no leaf and no leaf's tangent, requires grad (a
    batched leaf's tangent is its physical tensor's: Note [tangents of batched
    tensors]). Its results then leave it by ``detached_with_tangent``."""
    level = CURRENT[0]
    if level is None or PAUSED.on:
        return False
    for x in leaves:
        x = unwrap_all(x)[0]
        if x._requires_grad:
            return False
        tangent = level.tangents.get(id(x))
        if tangent is not None and type(tangent[1]) is not np.ndarray and \
                tangent[1]._requires_grad:
            return False
    return True


def recording_dispatch(run, op, inputs, attrs, view_base):
    """The level's dispatcher inside ``tangents_untracked``: the op runs (and records)
    as usual; its tangent is computed on ndarrays whatever requires grad. The C++
    engine's fast methods do the same in C (Note [dual fast methods] in
    engine_cpp/src/fast_methods.cc; fingerprinted: change both together)."""
    level = CURRENT[0]
    if level is None or PAUSED.on:
        return run(op, inputs, attrs, view_base)
    get = level.tangents.get
    t, found, missing = [], False, False
    for x in inputs:
        entry = get(id(x))
        if entry is not None and entry[0]() is x:
            g = entry[1]
            t.append(g if type(g) is np.ndarray else g._data)
            found = True
        else:
            t.append(None)
            missing = True
    out = run(op, inputs, attrs, view_base)
    if not found:
        return out
    raw = _RAW.get(op)
    if raw is None:
        raw = _raw_plan(op)
    if raw and level.batch is None:
        r = _raw_tangent(raw, inputs, attrs, out, t, missing, view_base is not None)
        if r is not None:
            level.set_output(out, r)
        return out
    tangents = [None if g is None else level.get(x) for x, g in zip(inputs, t)]
    state = _grad_mode.STATE
    previous, state.grad_enabled = state.grad_enabled, False
    try:
        attach_tangents(level, op, inputs, attrs, out, tangents, view_base is not None)
    finally:
        state.grad_enabled = previous
    return out


class tangents_untracked:
    """Context manager, inside a dual level: step 1 of Note [untracked
    forward-over-reverse] (the level's dispatcher is swapped for
    ``recording_dispatch`` while it is open)."""

    __slots__ = ("level",)

    def __enter__(self):
        self.level = level = CURRENT[0]
        _swap_dispatcher(level, recording_dispatch)
        return level

    def __exit__(self, *exc):
        _swap_dispatcher(self.level, dispatch)


def _swap_dispatcher(level, fn):
    handle, slot = level.handles
    handle.remove()
    level.handles = (_registry.add_dispatcher(fn), slot)


def gradient_with_tangents(output, inputs):
    """Step 2 of Note [untracked forward-over-reverse]: the gradients of the scalar
    ``output`` with respect to ``inputs`` (None for an unused input), as Tensors that
    require no grad and whose tangents (``level.get``) are the directional
    derivatives of the gradient."""
    roots = [gradient_edge(output)]
    targets = [gradient_edge(x) for x in inputs]
    root = Tensor._wrap(np.ones_like(output._data))
    state = _grad_mode.STATE
    previous, state.grad_enabled = state.grad_enabled, False
    try:
        captured = get_engine().execute(roots, [root], False, True, targets,
                                        accumulate_grad=False)
    finally:
        state.grad_enabled = previous
    return [None if g is None else g if isinstance(g, Tensor) else Tensor._wrap(g)
            for g in captured]


def detached_with_tangent(t):
    """``t`` without its history, with its tangent (without history either): how a
    result leaves a reverse transform run inside a user's dual level (the
    reference's transforms unwrap their own level and keep the dual's tangent). A
    batched ``t`` keeps its tangent on its physical tensor (Note [tangents of batched
    tensors])."""
    level = CURRENT[0]
    physical, levels = unwrap_all(t)
    tangent = level.get(physical) if level is not None else None
    plain = physical.detach()
    if tangent is not None:
        level.set(plain, tangent.detach())
    return rewrap(plain, levels)
