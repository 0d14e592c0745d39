"""embedding_bag: per bag, the sum, mean or max of embedding rows, one table op
(EmbeddingBagBackward0, Note [bags as weighted lookups] in _ops/embedding_bag.py).

Bags are the rows of a 2-D ``input``, or the slices of a 1-D ``input`` that
``offsets`` start. ``max_norm`` renormalises the looked-up rows first, ``padding_idx``
lookups are left out of their bags, and ``sparse=True`` presents the weight's gradient
as sparse (Note [sparse gradients over dense storage]).
"""
import numpy as np

from .._ops import embedding_bag as _bag_op
from .._tensor import on_device_of, zeros_on
from ._sparse import _check_indices, _factor, _padding_index, _renorm_, mark_sparse_gradient

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
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    bag_ids, bags, flat, psw = _bags(input, offsets, include_last_offset, per_sample_weights)
    if sparse:
        mark_sparse_gradient(weight)
    idx = _lookups(flat, weight)
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    padding = _padding_index(padding_idx, weight.shape[0])
    return _bag_op.embedding_bag(
        weight, psw, indices=idx, bag_ids=bag_ids, bags=bags, mode=mode,
        factor=_bag_factor(idx, bag_ids, bags, mode, padding),
        grad_factor=_factor(idx, None, scale_grad_by_freq, weight.shape[0]))


def _lookups(flat, weight):
    _check_indices(flat)
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    num, idx = weight.shape[0], flat._data.astype(np.int64, copy=False)
    if idx.size and (idx.min() < -num or idx.max() >= num):
        raise IndexError("index out of range in self")
    return idx % num if idx.size and idx.min() < 0 else idx


def _bag_factor(idx, bag_ids, bags, mode, padding):
    """Per-lookup constant (Note [bags as weighted lookups]): 0 at padding lookups,
    1 / the bag's kept lookups for 'mean'; None when all are 1."""
    keep = (idx != (-1 if padding is None else padding)).astype(np.float64)
    if mode == "mean":
        counts = zeros_on((bags,), np.float64, keep)
        np.add.at(counts, bag_ids, keep)
        return keep / np.maximum(counts, 1)[bag_ids]
    return None if padding is None else keep


def _bags(input, offsets, include_last_offset, per_sample_weights):
    """(bag index of each lookup, number of bags, flat indices, flat weights)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        bags, length = input.shape
        ids = on_device_of(np.repeat(np.arange(bags), length), input._data)
        psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
        return ids, bags, input.reshape(-1), psw
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    starts = offsets._data.astype(np.int64, copy=False)
    if include_last_offset:
        starts = starts[:-1]
    return _bag_ids(starts, input.shape[0]), starts.shape[0], input, per_sample_weights


def _bag_ids(starts, n):
    """Each lookup's bag: one mark per bag start, summed along the lookups (computed
    where the offsets live, Note [device arrays])."""
    marks = zeros_on((n + 1,), np.int64, starts)
    np.add.at(marks, np.minimum(starts, n), 1)
    return np.cumsum(marks[:n]) - 1
