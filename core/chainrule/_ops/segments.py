"""``torch.segment_reduce``: sum, mean, prod, max or min over consecutive segments of one
axis (their lengths, or offsets, given per row of the dims before it), composed from table
ops so gradients follow (max and min share a tie's gradient among the tied elements).
"""
import numpy as np

from .. import _factories
from ._common import FUNCTIONS, public

_REDUCTIONS = ("sum", "prod", "mean", "max", "min")
_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": float("nan"), "max": float("-inf"),
          "min": float("inf")}


def _segment_lengths(data, lengths, indices, offsets, axis, unsafe):
    """The lengths as an int64 array of shape ``data.shape[:axis] + (segments,)``."""
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if lengths is not None:
        sizes = np.asarray(lengths._data, dtype=np.int64)
    else:
        sizes = np.diff(np.asarray(offsets._data, dtype=np.int64), axis=-1)
    if (sizes < 0).any():
        raise RuntimeError("Expected segment_length >= 0 to be true, but got false.")
    if not unsafe and (sizes.sum(-1) != data.shape[axis]).any():
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                           "to data.size(lengths.dim()-1) when !unsafe.")
    return sizes


def _reduce_segment(part, reduce, axis, initial):
    """One segment (``part``, the axis kept at its length) reduced over ``axis``."""
    length = part.shape[axis]
    if length == 0:
        shape = part.shape[:axis] + part.shape[axis + 1:]
        value = _EMPTY[reduce] if initial is None else initial
        return _factories.full(shape, value, dtype=part.dtype, device=part.device)
    if reduce in ("sum", "mean"):
        total = part.sum(axis) if initial is None else part.sum(axis) + initial
        return total if reduce == "sum" else total / length
    if reduce == "prod":
        return part.prod(axis) if initial is None else part.prod(axis) * initial
    best = part.amax(axis) if reduce == "max" else part.amin(axis)
    if initial is None:
        return best
    wins = best >= initial if reduce == "max" else best <= initial   # (an element wins ties)
    return FUNCTIONS["where"](wins, best, initial)


def _reduce_row(row, sizes, reduce, axis, initial):
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    parts = [_reduce_segment(row.narrow(axis, int(s), int(n)), reduce, axis, initial)
             for s, n in zip(starts, sizes)]
    return FUNCTIONS["stack"](parts, axis)


@public(method=False)
def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce ``data`` over consecutive segments of ``axis``: an empty segment gives
    ``initial`` (else 0, 1, nan, -inf, inf for sum, prod, mean, max, min), and ``initial``
    joins every other segment's reduction (mean divides by the segment's length only).

    >>> import chainrule as cr
    >>> cr.segment_reduce(cr.tensor([1.0, 3.0, 3.0, 2.0]), "sum", lengths=cr.tensor([3, 0, 1]))
    tensor([7., 0., 2.])
    """
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    axis = axis % data.dim()
    sizes = _segment_lengths(data, lengths, indices, offsets, axis, unsafe)
    if sizes.ndim == 1:
        return _reduce_row(data, sizes, reduce, axis, initial)
    rows = [_reduce_row(data[index], sizes[index], reduce, axis - len(index), initial)
            for index in np.ndindex(*sizes.shape[:-1])]
    out = FUNCTIONS["stack"](rows, 0)
    return out.reshape(tuple(sizes.shape[:-1]) + tuple(out.shape[1:]))


