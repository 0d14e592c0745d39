"""``pad``: constant padding is a table entry (``constant_pad_nd``), reflect and
replicate padding too (one per reference node: Note [gathered padding] in
_ops/padding.py); circular padding copies slices as the reference does (Note [circular
padding as the reference records it])."""
import numpy as np

from .._ops import nn as _nn, padding as _padding
from .._ops._common import FUNCTIONS as _FUNCTIONS
from .._ops._registry import apply_op as _apply_op
from .._batched import BatchedTensor as _BatchedTensor
from .._tensor import Tensor as _Tensor

_MODES = ("constant", "reflect", "replicate", "circular")


def _pairs(pad, ndim):
    """(before, after) per dim of the input from torch's flat, last-dim-first list."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension but got padding length "
                           f"{len(pad)} and input of dimension {ndim}")
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return tuple(pairs)


def _source_index(mode, size, before, after, dim, shape):
    """For each output position along a dim, the input position it copies."""
    if mode == "circular":
        if before > size or after > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        return _circular_index(size, before, after)
    if mode == "reflect" and (before >= size or after >= size):
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({before}, {after}) at dimension "
                           f"{dim} of input {list(shape)}")
    return _padding.source_index(mode, size, before, after)


def _check_non_constant(input, pad):
    """The reference pads 1, 2 or 3 trailing dims of (unbatched or batched) input."""
    k, ndim = len(pad) // 2, input.dim()
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dims; ``pad``
    lists (before, after) amounts starting from the last dim. Modes: 'constant' (with
    ``value``, default 0), 'reflect', 'replicate', 'circular'.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.pad(cr.tensor([[1., 2.]]), (1, 2), value=9.).tolist()
    [[9.0, 1.0, 2.0, 9.0, 9.0]]
    >>> F.pad(cr.tensor([[[1., 2., 3.]]]), (2, 1), mode='reflect').tolist()
    [[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]]
    """
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pairs = _pairs(pad, input.dim())
    if mode == "constant":
        fill = 0.0 if value is None else value
        return _apply_op(_nn.CONSTANT_PAD, (input,), {"pads": pairs, "value": fill})
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    _check_non_constant(input, pad)
    for d, (before, after) in enumerate(pairs):
        if before or after:
            _source_index(mode, input.shape[d], before, after, d, input.shape)  # its errors
    if mode != "circular":
        return _padding._gather_pad(input, mode, pairs[-(len(pad) // 2):])
    if type(input) is _BatchedTensor:      # under vmap: an empty output holds no batch
        return _circular_gather(input, pairs)
    return _circular(input, pairs[-(len(pad) // 2):])


def _circular_gather(input, pairs):
    out = input
    for d, (before, after) in enumerate(pairs):
        if before or after:
            index = _source_index("circular", input.shape[d], before, after, d, input.shape)
            out = _FUNCTIONS["index_select"](out, d, _Tensor._wrap(index.astype(np.int64)))
    return out


def _circular_index(size, before, after):
    """The input position each output position holds after the copies of Note
    [circular padding as the reference records it] (with a crop on one side, the other
    side's padding repeats the kept positions, not the cropped ones)."""
    out = before + size + after
    if out < 0:
        raise RuntimeError("Negative padding value is resulting in an empty dimension")
    b, a = max(before, 0), max(after, 0)
    index = np.zeros(out, np.int64)
    index[b:out - a] = np.arange(max(-before, 0), size - max(-after, 0))
    if before > 0:
        index[:before] = index[out - before - a:out - a]
    if after > 0:
        index[out - after:] = index[b:b + after]
    return index


# Note [circular padding as the reference records it]
#     The reference's circular padding is no kernel of its own: it copies the (cropped)
#     input into the middle of an empty output, then, dim by dim from the last, copies
#     the output's own far end into the front padding and its near end into the back
#     padding (corners are written again by later dims). Done with the same narrow /
#     copy_ steps, the graph is the reference's: a chain of CopySlices over
#     SliceBackward0 nodes, and double backward follows from those ops.
def _circular(input, pairs):
    sizes = tuple(input.shape)[:-len(pairs)] + tuple(
        n + b + a for n, (b, a) in zip(tuple(input.shape)[-len(pairs):], pairs))
    out = input.new_empty(sizes)
    inner, source = out, input
    for dim in range(input.dim() - 1, input.dim() - 1 - len(pairs), -1):
        (b, a), n = pairs[dim - input.dim()], input.shape[dim]
        inner = inner.narrow(dim, max(b, 0), sizes[dim] - max(b, 0) - max(a, 0))
        source = source.narrow(dim, max(-b, 0), n - max(-b, 0) - max(-a, 0))
    inner.copy_(source)
    for dim in range(input.dim() - 1, input.dim() - 1 - len(pairs), -1):
        (b, a), size = pairs[dim - input.dim()], sizes[dim]
        if b > 0:
            out.narrow(dim, 0, b).copy_(out.narrow(dim, size - b - max(a, 0), b))
        if a > 0:
            out.narrow(dim, size - a, a).copy_(out.narrow(dim, max(b, 0), a))
    return out


__all__ = ["pad"]
