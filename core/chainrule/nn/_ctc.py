"""ctc_loss: the reference's composite around its ``_ctc_loss`` op (chainrule._ops.ctc):
per-sample losses, inf made 0 under ``zero_infinity``, then the reduction ('mean'
divides each loss by its target length before averaging)."""
import numpy as np

from .._ops import nn as _nn
from .._ops._common import FUNCTIONS as _FUNCTIONS
from .._ops.ctc import ctc_losses
from .._tensor import Tensor as _Tensor


def _lengths(value, n, name):
    arr = value.cpu()._data if isinstance(value, _Tensor) else np.asarray(value)  # (sizes)
    arr = np.asarray(arr, np.int64).reshape(-1)
    if arr.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return tuple(int(v) for v in arr)


def _padded_targets(targets, target_lengths, n):
    """(N, S) targets; concatenated 1-D targets are split by their lengths."""
    if targets.ndim == 2:
        return targets
    flat = targets.cpu()._data.astype(np.int64)
    out = np.zeros((n, max(max(target_lengths, default=0), 1)), np.int64)
    offsets = np.concatenate([[0], np.cumsum(target_lengths)]).astype(int)
    for i in range(n):
        out[i, :target_lengths[i]] = flat[offsets[i]:offsets[i + 1]]
    return _Tensor._wrap(out)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss of ``log_probs`` (T, N, C) (log-softmax
    outputs) against ``targets`` ((N, S) padded, or the concatenated target sequences);
    'mean' divides each loss by its target length, then averages over the batch. The
    gradient is the reference's (Note [ctc gradient] in chainrule/_ops/ctc.py).

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
    targets = _padded_targets(targets, target_lengths, n)
    losses = ctc_losses(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
    if zero_infinity:
        losses = _FUNCTIONS["where"](losses == np.inf, losses.new_zeros(()), losses)
    if unbatched:
        losses = losses.squeeze(0)
    if reduction == "mean":
        divisor = _Tensor._wrap(np.maximum(np.asarray(target_lengths), 1)
                                .astype(losses._data.dtype)).to(losses.device)
        return (losses / divisor.reshape(losses.shape)).mean()
    _nn.reduction_arg(None, None, reduction)
    return losses.sum() if reduction == "sum" else losses


__all__ = ["ctc_loss"]
