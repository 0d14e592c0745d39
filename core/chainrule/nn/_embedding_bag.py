"""embedding_bag: per bag, the sum, mean or max of embedding rows, without building the
(bags x rows x dim) tensor of a padded ``embedding`` call.

Bags are the rows of a 2-D ``input``, or the slices of a 1-D ``input`` that
``offsets`` start. Rows are looked up with ``embedding`` (so ``max_norm``,
``padding_idx`` and its zero gradient behave as there) and reduced per bag with
``index_add`` / ``scatter_reduce``, so gradients flow to the weight (and to
``per_sample_weights``). An empty bag gives zeros.
"""
import numpy as np

from .. import _factories
from .._ops import FUNCTIONS
from .._tensor import Tensor
from ._sparse import embedding

_MODES = ("sum", "mean", "max")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sum, mean or max of ``weight``'s rows over each bag of indices.

    >>> import chainrule as cr
    >>> w = cr.arange(12.0).reshape(6, 2)
    >>> cr.nn.functional.embedding_bag(cr.tensor([1, 2, 4, 5]), w, cr.tensor([0, 2]), mode="sum")
    tensor([[ 6.,  8.],
            [18., 20.]])
    """
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    bag_ids, bags, flat, psw = _bags(input, offsets, include_last_offset, per_sample_weights)
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
    keep = None
    if padding_idx is not None:
        keep = flat._data != (padding_idx % weight.shape[0])
    if psw is not None:
        rows = rows * FUNCTIONS["unsqueeze"](psw, 1)
    return _reduce(rows, bag_ids, bags, mode, keep, weight)


def _bags(input, offsets, include_last_offset, per_sample_weights):
    """(bag index of each lookup, number of bags, flat indices, flat weights)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        bags, length = input.shape
        ids = np.repeat(np.arange(bags), length)
        psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
        return ids, bags, input.reshape(-1), psw
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    starts = np.asarray(offsets._data, dtype=np.int64)
    n = input.shape[0]
    if include_last_offset:
        starts = starts[:-1]
    bags = len(starts)
    ids = np.searchsorted(starts, np.arange(n), side="right") - 1
    return ids, bags, input, per_sample_weights


def _reduce(rows, bag_ids, bags, mode, keep, weight):
    """Per-bag reduction of ``rows``; lookups of ``padding_idx`` (``keep`` False) are
    left out of their bag entirely."""
    if keep is not None and not keep.all():
        rows = rows[Tensor._wrap(np.flatnonzero(keep))]
        bag_ids = bag_ids[keep]
    index = Tensor._wrap(bag_ids.astype(np.int64))
    zeros = _factories.zeros(bags, weight.shape[1], dtype=rows.dtype)
    counts = np.bincount(bag_ids, minlength=bags)
    if mode == "max":
        expanded = FUNCTIONS["expand"](FUNCTIONS["unsqueeze"](index, 1), tuple(rows.shape))
        return FUNCTIONS["scatter_reduce"](zeros, 0, expanded, rows, "amax", include_self=False)
    total = FUNCTIONS["index_add"](zeros, 0, index, rows)
    if mode == "sum":
        return total
    return total / Tensor._wrap(np.maximum(counts, 1).astype(rows._data.dtype)[:, None])
