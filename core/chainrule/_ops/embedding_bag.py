"""Derivative table: embedding_bag, one op like the reference's (EmbeddingBagBackward0).

Note [bags as weighted lookups]
    Lookup i reads row ``indices[i]`` of the weight into bag ``bag_ids[i]`` (bags are
    contiguous runs of lookups). ``factor`` is a constant per lookup: 0 for padding_idx
    lookups, which no bag sees, and 1 / (the bag's kept lookups) in mode 'mean' (None
    when every factor is 1). Modes 'sum' and 'mean' add factor * per_sample_weight *
    row into the bag; mode 'max' takes, per bag and column, the largest kept row (the
    first lookup reaching it wins, as in the reference's loop; an empty bag gives 0).
    Every derivative is then a weighted lookup: the output gradient is read back per
    lookup (``embedding`` at the bag ids), weighted (factor and per-sample weight, or
    the winners' mask for 'max') and added into the weight's rows (the embedding
    backward, with scale_grad_by_freq's ``grad_factor``). Built on the embedding ops,
    the formulas also give double backward and forward mode, which the reference lacks.
"""
import numpy as np

from .._tensor import Tensor, on_device_of, zeros_on
from ._common import ABSENT, formula_helper
from ._namespaces import array_fn
from ._registry import apply_op, defop

_ATTRS = ("indices", "bag_ids", "bags", "mode", "factor", "grad_factor")


def _segments(bag_ids):
    """The bags that hold lookups and where each one's run starts."""
    starts = np.flatnonzero(np.r_[True, bag_ids[1:] != bag_ids[:-1]]) if bag_ids.size else \
        np.zeros(0, np.int64)
    return bag_ids[starts], starts


def _bag_reduce(rows, bag_ids, bags, ufunc, empty):
    """``ufunc`` over each bag's rows (reduceat over contiguous runs; device arrays,
    which lack it, use ufunc.at); bags without lookups hold ``empty``."""
    out = zeros_on((bags,) + rows.shape[1:], rows.dtype, rows)
    if empty:
        out += empty
    if not rows.shape[0]:
        return out
    if type(rows) is np.ndarray:
        held, starts = _segments(np.asarray(bag_ids))
        out[held] = ufunc.reduceat(rows, starts, axis=0)
    else:
        ufunc.at(out, on_device_of(bag_ids, rows), rows)
    return out


def _lookup_weights(rows, factor):
    if factor is None:
        return rows
    return rows * on_device_of(factor[:, None].astype(rows.dtype, copy=False), rows)


def _bag_forward(weight, per_sample_weights, indices, bag_ids, bags, mode, factor,
                 grad_factor):
    rows = weight[on_device_of(indices, weight)]
    if per_sample_weights.shape[0]:                       # (absent: a 0-size placeholder)
        rows = rows * per_sample_weights[:, None]
    if mode != "max":
        return _bag_reduce(_lookup_weights(rows, factor), bag_ids, bags, np.add, 0)
    if factor is not None:                                  # padding lookups never win
        rows = np.where(on_device_of(factor[:, None] != 0, rows), rows, -np.inf)
    out = _bag_reduce(rows, bag_ids, bags, np.maximum, -np.inf)
    return np.where(np.isneginf(out), 0, out).astype(weight.dtype, copy=False)


def _winners(weight, result, indices, bag_ids, factor):
    """(lookups, D) 1 where the lookup is its bag's first to reach the column's max."""
    rows = weight[on_device_of(indices, weight)]
    hit = rows == result[on_device_of(bag_ids, result)]
    if factor is not None:
        hit &= on_device_of(factor[:, None] != 0, hit)
    n = indices.shape[0]
    position = np.where(hit, on_device_of(np.arange(n)[:, None], hit), n)
    first = _bag_reduce(position, bag_ids, result.shape[0], np.minimum, n)
    return (position == first[on_device_of(bag_ids, first)]).astype(weight.dtype)


def _weighted_lookups(F, g, weight, per_sample_weights, result, indices, bag_ids, mode,
                      factor):
    """Each lookup's share of its bag's gradient (Note [bags as weighted lookups])."""
    if mode == "max":
        return F._embedding(g, bag_ids, None, False) * F._bag_winners(weight, result, indices,
                                                                      bag_ids, factor)
    lookups = F._embedding(g, bag_ids, factor, True)
    if per_sample_weights.shape[0]:
        lookups = lookups * F.unsqueeze(per_sample_weights, 1)
    return lookups


def _weight_grad(F, g, weight, per_sample_weights, result, weight_shape, indices, bag_ids,
                 mode, factor, grad_factor):
    lookups = _weighted_lookups(F, g, weight, per_sample_weights, result, indices, bag_ids,
                                mode, factor)
    return F._embedding_backward(lookups, indices, grad_factor, weight_shape[0])


def _per_sample_weights_grad(F, g, weight, indices, bag_ids, factor):
    rows = F._embedding(weight, indices, None, False)
    return F.sum(F._embedding(g, bag_ids, factor, True) * rows, (1,))


def _bag_jvp(F, t, weight, per_sample_weights, result, indices, bag_ids, bags, mode, factor):
    moved = 0
    if t[0] is not None:
        moved = F._embedding(t[0], indices, None, False)
        if mode == "max":
            moved = moved * F._bag_winners(weight, result, indices, bag_ids, factor)
            return F._embedding_backward(moved, bag_ids, None, bags)
        if per_sample_weights.shape[0]:
            moved = moved * F.unsqueeze(per_sample_weights, 1)
    if per_sample_weights.shape[0] and t[1] is not None:
        moved = moved + F._embedding(weight, indices, None, False) * F.unsqueeze(t[1], 1)
    return F._embedding_backward(moved, bag_ids, factor, bags)


EMBEDDING_BAG = defop("_embedding_bag", _bag_forward, inputs=("weight", "per_sample_weights"),
                      attrs=_ATTRS, node_name="EmbeddingBagBackward0",
                      vjp=(_weight_grad, _per_sample_weights_grad), jvp=_bag_jvp)

array_fn("_bag_winners")(_winners)


@formula_helper
def _bag_winners(weight, result, indices, bag_ids, factor):
    """The constant winners' mask of mode 'max' (Note [bags as weighted lookups])."""
    return Tensor._wrap(_winners(weight._data, result._data, indices, bag_ids, factor))




def embedding_bag(weight, per_sample_weights, **attrs):
    """The table op; ``attrs`` as in Note [bags as weighted lookups]."""
    psw = ABSENT if per_sample_weights is None else per_sample_weights
    return apply_op(EMBEDDING_BAG, (weight, psw), attrs)
