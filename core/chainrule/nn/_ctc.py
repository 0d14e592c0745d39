"""ctc_loss: the forward (alpha) recursion of connectionist temporal classification over
the blank-extended targets, in log space, as a loop over time of table ops (gather,
logsumexp, where), so its gradient is the autograd of the recursion.

Unreachable states hold a large negative finite number instead of -inf: logsumexp's
backward of an all -inf row would be nan even where its gradient is 0. A loss at that
scale means no alignment exists: it is reported as inf (0 with ``zero_infinity``).
"""
import numpy as np

from .._ops import nn as _nn
from .._ops._common import FUNCTIONS as _FUNCTIONS
from .._tensor import Tensor as _Tensor, on_device_of, zeros_on

_NEG = -1e30                 # "log 0" for unreachable states (finite: see above)
_IMPOSSIBLE = 1e29


def _lengths(value, n, name):
    arr = value.cpu()._data if isinstance(value, _Tensor) else np.asarray(value)  # (sizes)
    arr = np.asarray(arr, np.int64).reshape(-1)
    if arr.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return arr


def _padded_targets(targets, target_lengths, n):
    t = targets._data.astype(np.int64)
    if t.ndim == 2:
        return t
    out = zeros_on((n, max(int(target_lengths.max()) if n else 0, 1)), np.int64, t)
    offsets = np.concatenate([[0], np.cumsum(target_lengths)])
    for i in range(n):
        out[i, :target_lengths[i]] = t[offsets[i]:offsets[i + 1]]
    return out


def _extended(targets, target_lengths, blank):
    """Blank-extended label sequences (N, 2S+1) and where a skip over a blank is allowed,
    made where ``targets`` lives (the lengths are host values)."""
    n, s = targets.shape
    ext = zeros_on((n, 2 * s + 1), np.int64, targets)
    ext.fill(blank)
    ext[:, 1::2] = targets
    skip = zeros_on(ext.shape, bool, targets)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    valid = np.arange(2 * s + 1)[None, :] < (2 * target_lengths + 1)[:, None]
    return ext, skip & on_device_of(valid, targets)


def _shift(a, k, fill):
    """a shifted right by k along dim 1, ``fill`` coming in."""
    return _FUNCTIONS["cat"]([fill[:, :k], a[:, :-k]], 1)


def _alpha(log_probs, ext, skip, input_lengths):
    t_max, n, _ = log_probs.shape
    width = ext.shape[1]
    index = _Tensor._wrap(np.broadcast_to(ext[None], (t_max, n, width)).copy())
    emit = log_probs.gather(2, index)                                   # (T, N, 2S+1)
    dtype = log_probs._data.dtype
    like = log_probs._data
    fill = _Tensor._wrap(on_device_of(np.full((n, 2), _NEG, dtype), like))
    start = np.full((n, width), _NEG, dtype)
    start[:, :2] = 0.0
    alpha = emit[0] + _Tensor._wrap(on_device_of(start, like))
    where, allow = _FUNCTIONS["where"], _Tensor._wrap(skip)
    running = on_device_of(np.arange(t_max)[:, None, None] < input_lengths[:, None], like)
    for t in range(1, t_max):
        paths = _FUNCTIONS["stack"]([alpha, _shift(alpha, 1, fill),
                                     where(allow, _shift(alpha, 2, fill), fill[:, :1])], 0)
        step = _FUNCTIONS["logsumexp"](paths, 0) + emit[t]
        alpha = where(_Tensor._wrap(running[t]), step, alpha)
    return alpha


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss of ``log_probs`` (T, N, C) (log-softmax
    outputs) against ``targets`` ((N, S) padded, or the concatenated target sequences);
    'mean' divides each loss by its target length, then averages over the batch.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> lp = cr.zeros(2, 1, 2).log_softmax(2)
    >>> round(F.ctc_loss(lp, cr.tensor([[1]]), [2], [1], reduction='sum').item(), 4)
    0.2877
    """
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.reshape(1, -1)
    n = log_probs.shape[1]
    input_lengths = _lengths(input_lengths, n, "input_lengths")
    target_lengths = _lengths(target_lengths, n, "target_lengths")
    ext, skip = _extended(_padded_targets(targets, target_lengths, n), target_lengths, blank)
    ext, skip = on_device_of(ext, log_probs._data), on_device_of(skip, log_probs._data)
    alpha = _alpha(log_probs, ext, skip, input_lengths)
    last = 2 * target_lengths                           # the final label or blank
    like = log_probs._data
    ends = on_device_of(np.stack([last, np.maximum(last - 1, 0)], 1), like)
    picked = alpha.gather(1, _Tensor._wrap(ends))
    both = _Tensor._wrap(on_device_of(np.stack([np.ones(n, bool), target_lengths > 0], 1), like))
    picked = _FUNCTIONS["where"](both, picked, _Tensor._wrap(np.asarray(_NEG, picked._data.dtype)))
    losses = -_FUNCTIONS["logsumexp"](picked, 1)
    losses = _impossible_to_inf(losses, zero_infinity)
    if unbatched:
        losses = losses.reshape(())
    if reduction == "mean":
        divisor = _Tensor._wrap(on_device_of(np.maximum(target_lengths, 1)
                                             .astype(losses._data.dtype), like))
        return (losses / divisor.reshape(losses.shape)).mean()
    _nn.reduction_arg(None, None, reduction)
    return losses.sum() if reduction == "sum" else losses


def _impossible_to_inf(losses, zero_infinity):
    impossible = _Tensor._wrap(losses._data > _IMPOSSIBLE)
    if not impossible._data.any():
        return losses
    value = 0.0 if zero_infinity else np.inf
    return _FUNCTIONS["where"](impossible, _Tensor._wrap(np.asarray(value, losses._data.dtype)),
                               losses)


__all__ = ["ctc_loss"]
