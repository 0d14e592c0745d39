"""Connectionist temporal classification: ``_ctc_loss`` (per-sample negative log
likelihoods) and its gradient ``_ctc_loss_backward``, as the reference computes them.

Note [ctc gradient]
    The reference's gradient with respect to ``log_probs`` is exp(log_probs) - gamma
    (gamma: each label's posterior occupancy per frame), zero past an input's length.
    That is the derivative through the log_softmax that usually makes ``log_probs``
    (the exp term sums to 1 per frame, as gamma does), not the derivative with respect
    to ``log_probs`` themselves (-gamma): the two agree once the log_softmax's backward
    has run. Programs print the former, so it is what the table computes. Neither
    ``_ctc_loss_backward`` nor forward mode has a derivative in the reference.

The forward (alpha) and backward (beta) recursions run over time in log space on the
blank-extended targets (N, 2S+1), vectorized over the batch and the states.
"""
import numpy as np

from .._tensor import on_device_of, zeros_on
from ._namespaces import array_fn
from ._common import formula_helper
from ._registry import NONDIFF, NOT_IMPLEMENTED, apply_op, defop, not_implemented

_NEG_INF = -np.inf


def _neg_inf(shape, like):
    out = zeros_on(shape, like.dtype, like)
    out.fill(_NEG_INF)
    return out


def _extended(targets, target_lengths, blank):
    """Blank-extended labels (N, 2S+1), which states exist, and where a state may be
    entered by skipping the blank before it (made where ``targets`` lives)."""
    n, s = targets.shape
    ext = zeros_on((n, 2 * s + 1), np.int64, targets)
    ext.fill(blank)
    ext[:, 1::2] = targets
    exists = np.arange(2 * s + 1)[None, :] < (2 * np.asarray(target_lengths) + 1)[:, None]
    skip = zeros_on(ext.shape, bool, targets)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, on_device_of(exists, targets), skip


def _step(prev, skip, shift):
    """logsumexp of a state and its one or two predecessors (``shift`` 1: alpha looks
    left; -1: beta looks right)."""
    one, two = _neg_inf(prev.shape, prev), _neg_inf(prev.shape, prev)
    if shift > 0:
        one[:, 1:], two[:, 2:] = prev[:, :-1], prev[:, :-2]
        two = np.where(skip, two, _NEG_INF)
    else:
        one[:, :-1], two[:, :-2] = prev[:, 1:], prev[:, 2:]
        two[:, :-2] = np.where(skip[:, 2:], two[:, :-2], _NEG_INF)
    with np.errstate(invalid="ignore"):
        return np.logaddexp(np.logaddexp(prev, one), two)


def _emissions(log_probs, ext):
    """log_probs at each extended state's label: (T, N, 2S+1)."""
    index = np.broadcast_to(ext[None], (log_probs.shape[0],) + ext.shape)
    return np.take_along_axis(log_probs, index, 2)


def _alpha(emit, exists, skip):
    t_max, n, width = emit.shape
    alpha = _neg_inf(emit.shape, emit)
    start = np.full((n, width), _NEG_INF, emit.dtype)
    start[:, :2] = 0.0
    if t_max:
        alpha[0] = np.where(exists, emit[0] + on_device_of(start, emit), _NEG_INF)
    for t in range(1, t_max):
        alpha[t] = np.where(exists, _step(alpha[t - 1], skip, 1) + emit[t], _NEG_INF)
    return alpha


def _time_masks(t_max, input_lengths, like):
    """(T, N, 1) masks: frames before an input's last one, and its last one."""
    t = np.arange(t_max)[:, None, None]
    last = np.asarray(input_lengths)[None, :, None] - 1
    return on_device_of(t < last, like), on_device_of(t == last, like)


def _beta(emit, exists, skip, input_lengths, target_lengths):
    t_max, n, width = emit.shape
    beta = _neg_inf(emit.shape, emit)
    rows, last = np.arange(n), 2 * np.asarray(target_lengths)
    end = np.full((n, width), _NEG_INF, emit.dtype)
    end[rows, last] = 0.0
    end[rows[last > 0], last[last > 0] - 1] = 0.0      # the final label, before the blank
    end = on_device_of(end, emit)
    before, at_end = _time_masks(t_max, input_lengths, emit)
    for t in range(t_max - 1, -1, -1):
        later = _step(beta[t + 1], skip, -1) if t + 1 < t_max else beta[t]
        here = np.where(before[t], later, np.where(at_end[t], end, _NEG_INF))
        beta[t] = np.where(exists, here + emit[t], _NEG_INF)
    return beta


def _nll(alpha, input_lengths, target_lengths):
    n, width = alpha.shape[1:]
    times = np.broadcast_to(np.maximum(np.asarray(input_lengths) - 1, 0)[None, :, None],
                            (1, n, width))
    final = np.take_along_axis(alpha, on_device_of(times, alpha), 0)[0]     # (N, 2S+1)
    last = 2 * np.asarray(target_lengths)
    ends = np.take_along_axis(final, on_device_of(np.stack([last, np.maximum(last - 1, 0)], 1),
                                                  alpha), 1)
    before = np.where(on_device_of(last > 0, alpha), ends[:, 1], _NEG_INF)
    return -np.logaddexp(ends[:, 0], before)


def _ctc_forward(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    ext, exists, skip = _extended(targets, target_lengths, blank)
    alpha = _alpha(_emissions(log_probs, ext), exists, skip)
    return _nll(alpha, input_lengths, target_lengths)


def _occupancy(log_probs, ext, alpha, beta):
    """log of the sum over the states showing label c of alpha * beta: (T, N, C), by a
    product with the states' one-hot labels."""
    ab = alpha + beta
    peak = np.max(ab, axis=2, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    classes = on_device_of(np.arange(log_probs.shape[2]), ext)
    one_hot = (ext[:, :, None] == classes).astype(log_probs.dtype)       # (N, 2S+1, C)
    acc = np.einsum("tns,nsc->tnc", np.exp(ab - peak), one_hot)
    with np.errstate(divide="ignore"):
        return np.log(acc) + peak


def _ctc_backward(grad, log_probs, targets, neg_log_likelihood, input_lengths, target_lengths,
                  blank, zero_infinity):
    """Note [ctc gradient]."""
    ext, exists, skip = _extended(targets, target_lengths, blank)
    emit = _emissions(log_probs, ext)
    alpha = _alpha(emit, exists, skip)
    beta = _beta(emit, exists, skip, input_lengths, target_lengths)
    nll = neg_log_likelihood[None, :, None]
    with np.errstate(invalid="ignore", over="ignore"):
        out = (np.exp(log_probs) - np.exp(_occupancy(log_probs, ext, alpha, beta) + nll
                                          - log_probs)) * grad[None, :, None]
    running = np.arange(log_probs.shape[0])[:, None] < np.asarray(input_lengths)[None, :]
    running = on_device_of(running, log_probs)
    if zero_infinity:
        running = running & ~np.isinf(neg_log_likelihood)[None, :]
    return np.where(running[..., None], out, 0).astype(log_probs.dtype, copy=False)


CTC_LOSS = defop(
    "_ctc_loss", _ctc_forward, inputs=("log_probs", "targets"),
    attrs=("input_lengths", "target_lengths", "blank", "zero_infinity"),
    node_name="CtcLossBackward0",
    vjp=(lambda F, g, log_probs, targets, result, input_lengths, target_lengths, blank,
         zero_infinity: F._ctc_loss_backward(g, log_probs, targets, result, input_lengths,
                                             target_lengths, blank, zero_infinity), NONDIFF),
    jvp=not_implemented("_ctc_loss"))
CTC_LOSS_BACKWARD = defop(
    "_ctc_loss_backward", _ctc_backward,
    inputs=("grad", "log_probs", "targets", "neg_log_likelihood"),
    attrs=("input_lengths", "target_lengths", "blank", "zero_infinity"),
    node_name="NotImplemented",     # the reference names nodes without a formula so
    vjp=(NOT_IMPLEMENTED, NOT_IMPLEMENTED, NONDIFF, NOT_IMPLEMENTED), jvp=NOT_IMPLEMENTED)
_ATTRS = CTC_LOSS.attrs
array_fn("_ctc_loss_backward")(_ctc_backward)


@formula_helper
def _ctc_loss_backward(grad, log_probs, targets, nll, *attrs):
    return apply_op(CTC_LOSS_BACKWARD, (grad, log_probs, targets, nll), dict(zip(_ATTRS, attrs)))


def ctc_losses(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """Per-sample losses (N,) of (T, N, C) ``log_probs`` against padded (N, S) targets;
    the lengths are tuples of ints."""
    attrs = {"input_lengths": input_lengths, "target_lengths": target_lengths,
             "blank": blank, "zero_infinity": zero_infinity}
    return apply_op(CTC_LOSS, (log_probs, targets), attrs)
