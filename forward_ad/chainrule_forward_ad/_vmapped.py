"""Dual tensors under vmap.

Note [tangents of batched tensors]
    Under ``chainrule.vmap`` a tensor may be a BatchedTensor: a wrapper around a
    physical tensor whose leading dimensions are the vmap levels (Note [batched
    tensors] in core). The tangent of such a dual is kept on the PHYSICAL tensor, laid
    out like it (the batch dimension of Note [batched tangents] first, if the level
    has one, then the vmap dimensions, then the entry's shape), never on the wrapper.
    vmap's dispatcher sends every physical op of its batching rules through this
    layer's dispatcher (Note [tangents under vmap] in core/chainrule/_vmap.py), so an
    op's JVP runs once on the physical tensors for the whole vmap batch, in either
    nesting (vmap of jvp, jvp of vmap).

    Only ``make_dual``/``make_batched_dual`` (which move a wrapper's tangent to its
    physical tensor) and ``unpack_dual`` (which wraps the physical tangent again)
    see wrappers. A primal and a tangent batched at different vmap levels are both
    broadcast to every level either has: the dual is batched wherever one of them is.
"""
from chainrule._batched import BatchedTensor, rewrap, unwrap_all
from chainrule._ops._common import FUNCTIONS

from ._tangents import alias_for_dual, paused


def involves_vmap(primal, tangent):
    return type(primal) is BatchedTensor or type(tangent) is BatchedTensor


def make_physical_dual(level, primal, tangent, batch=None):
    """make_dual of a batched primal or tangent (Note [tangents of batched tensors]):
    the wrapper of a physical dual whose tangent is the physical tangent."""
    p_phys, p_levels = unwrap_all(primal)
    t_phys, t_levels = unwrap_all(tangent)
    levels = sorted({lv.id: lv for lv in p_levels + t_levels}.values(), key=lambda lv: lv.id)
    with paused():
        p_phys = _with_levels(p_phys, p_levels, levels, 0)
        if len(t_levels) < len(levels):     # a broadcast view: a tangent may be written
            t_phys = _with_levels(t_phys, t_levels, levels, 0).clone()
        if batch is not None:           # the tangents' own batch dimension goes first
            t_phys = FUNCTIONS["movedim"](t_phys, len(levels), 0)
    dual = alias_for_dual(p_phys)
    level.set(dual, t_phys)
    return rewrap(dual, levels)


def _with_levels(phys, have, levels, offset):
    """``phys`` (its leading dimensions the levels ``have``) broadcast to ``levels``
    (a superset, ordered by id like every physical layout)."""
    ids = [lv.id for lv in have]
    for i, lv in enumerate(levels):
        if lv.id not in ids:
            phys = FUNCTIONS["unsqueeze"](phys, offset + i)
            shape = list(phys.shape)
            shape[offset + i] = lv.size
            phys = FUNCTIONS["expand"](phys, tuple(shape))
    return phys


def wrapped_tangent(level, tensor):
    """The tangent of a (possibly batched) tensor, as a tensor batched like it."""
    if type(tensor) is not BatchedTensor:
        return level.get(tensor)
    phys, levels = unwrap_all(tensor)
    tangent = level.get(phys)
    if tangent is None:
        return None
    with paused():
        if level.batch is not None:
            tangent = FUNCTIONS["movedim"](tangent, 0, len(levels))
        return rewrap(tangent, levels)
