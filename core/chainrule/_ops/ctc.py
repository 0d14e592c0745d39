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

from ._namespaces import array_fn
from ._common import formula_helper
from ._registry import NONDIFF, NOT_IMPLEMENTED, apply_op, defop, not_implemented

_NEG_INF = -np.inf


def _extended(targets, target_lengths, blank):
    """Blank-extended labels (N, 2S+1), which states exist, and where a state may be
    entered by skipping the blank before it."""
    n, s = targets.shape
    ext = np.full((n, 2 * s + 1), blank, np.int64)
    ext[:, 1::2] = targets
    exists = np.arange(2 * s + 1)[None, :] < (2 * np.asarray(target_lengths) + 1)[:, None]
    skip = np.zeros(ext.shape, bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, exists, skip


def _step(prev, skip, shift):
    """logsumexp of a state and its one or two predecessors (``shift`` 1: alpha looks
    left; -1: beta looks right)."""
    one, two = np.full_like(prev, _NEG_INF), np.full_like(prev, _NEG_INF)
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
    return np.take_along_axis(log_probs, np.broadcast_to(ext[None], (log_probs.shape[0],)
                                                         + ext.shape), 2)


def _alpha(emit, exists, skip, input_lengths):
    t_max, n, width = emit.shape
    alpha = np.full(emit.shape, _NEG_INF, emit.dtype)
    start = np.full((n, width), _NEG_INF, emit.dtype)
    start[:, :2] = 0.0
    alpha[0] = np.where(exists, emit[0] + start, _NEG_INF) if t_max else alpha[0]
    for t in range(1, t_max):
        alpha[t] = np.where(exists, _step(alpha[t - 1], skip, 1) + emit[t], _NEG_INF)
    return alpha


def _beta(emit, exists, skip, input_lengths, target_lengths):
    t_max, n, width = emit.shape
    beta = np.full(emit.shape, _NEG_INF, emit.dtype)
    rows, last = np.arange(n), 2 * np.asarray(target_lengths)
    end = np.full((n, width), _NEG_INF, emit.dtype)
    end[rows, last] = 0.0
    end[rows[last > 0], last[last > 0] - 1] = 0.0      # the final label, before the blank
    for t in range(t_max - 1, -1, -1):
        later = _step(beta[t + 1], skip, -1) if t + 1 < t_max else beta[t]
        here = np.where((t < input_lengths - 1)[:, None], later,
                        np.where((t == input_lengths - 1)[:, None], end, _NEG_INF))
        beta[t] = np.where(exists, here + emit[t], _NEG_INF)
    return beta


def _nll(alpha, input_lengths, target_lengths):
    n = alpha.shape[1]
    last = 2 * np.asarray(target_lengths)
    final = alpha[np.maximum(np.asarray(input_lengths) - 1, 0), np.arange(n)]
    ends = final[np.arange(n), last]
    before = np.where(last > 0, final[np.arange(n), np.maximum(last - 1, 0)], _NEG_INF)
    return -np.logaddexp(ends, before)


def _ctc_forward(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    ext, exists, skip = _extended(np.asarray(targets), target_lengths, blank)
    emit = _emissions(log_probs, ext)
    lengths = np.asarray(input_lengths)
    return _nll(_alpha(emit, exists, skip, lengths), lengths, target_lengths)


def _occupancy(log_probs, ext, alpha, beta):
    """log of sum over the states showing label c of alpha * beta: (T, N, C)."""
    ab = alpha + beta
    peak = np.max(ab, axis=2, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    acc = np.zeros(log_probs.shape, log_probs.dtype)
    t_max, n = ab.shape[:2]
    np.add.at(acc, (np.arange(t_max)[:, None, None], np.arange(n)[None, :, None], ext[None]),
              np.exp(ab - peak))
    with np.errstate(divide="ignore"):
        return np.log(acc) + peak


def _ctc_backward(grad, log_probs, targets, neg_log_likelihood, input_lengths, target_lengths,
                  blank, zero_infinity):
    """Note [ctc gradient]."""
    ext, exists, skip = _extended(np.asarray(targets), target_lengths, blank)
    emit = _emissions(log_probs, ext)
    lengths = np.asarray(input_lengths)
    alpha = _alpha(emit, exists, skip, lengths)
    beta = _beta(emit, exists, skip, lengths, target_lengths)
    nll = neg_log_likelihood[None, :, None]
    with np.errstate(invalid="ignore", over="ignore"):
        out = (np.exp(log_probs) - np.exp(_occupancy(log_probs, ext, alpha, beta) + nll
                                          - log_probs)) * grad[None, :, None]
    running = np.arange(log_probs.shape[0])[:, None] < lengths[None, :]
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
