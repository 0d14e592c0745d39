"""The losses of ``chainrule.nn.functional`` beyond nll_loss / cross_entropy / mse_loss.

Each is a composition of table ops (so gradients, double backward and tangents come
from those entries) with the reference's reductions, deprecated ``size_average`` /
``reduce`` pair, argument checks and messages.
"""
import math
import warnings

import numpy as np

from .._batched import CONTROL_FLOW_MESSAGE, BatchedTensor, unwrap_all
from .._tensor import asarray, on_device_of
from .. import _grad_mode
from .._ops import elementwise as _elementwise, margin_losses as _margin_losses
from .._ops import nn as _nn, reduction as _reduction
from ._activation import logsigmoid as _logsigmoid
from .._ops._common import FUNCTIONS as _FUNCTIONS
from .._ops._registry import apply_op as _apply_op
from .._tensor import Tensor as _Tensor

_where = _FUNCTIONS["where"]
_EPSILON = 1e-12                 # the reference's guard in cosine_embedding_loss


def _reduce(losses, reduction):
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def _const(value, like):
    """A constant tensor (no history) in ``like``'s dtype."""
    return _Tensor._wrap(asarray(value, dtype=like._data.dtype))


def _warn_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=4)


def _weighted(losses, weight, input, reduction, mean_by_weight):
    """The reference's ``weight=`` of l1/huber: elementwise, same size as input."""
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    losses = losses * weight
    if reduction == "mean" and mean_by_weight:
        return losses.sum() / weight.sum()
    return _reduce(losses, reduction)


def _clamp_min(x, low):
    """``clamp_min``, as the reference's losses clamp (their node: ClampMinBackward0)."""
    return _FUNCTIONS["clamp_min"](x, low)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|input - target|``, reduced by ``reduction``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.l1_loss(cr.tensor([1., -2.]), cr.tensor([0., 0.])).item()
    1.5
    """
    _warn_size(input, target)
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    losses = (input - target).abs()
    if weight is not None:
        return _weighted(losses, weight, input, reduction, True)
    return _reduce(losses, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d**2 / beta`` where ``|d| < beta``, ``|d| - beta / 2`` elsewhere
    (``d = input - target``; beta 0 is the L1 loss).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.smooth_l1_loss(cr.tensor([0.5, 3.]), cr.zeros(2), reduction='none').tolist()
    [0.125, 2.5]
    """
    _warn_size(input, target)
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:                               # the reference's: an L1 loss
        return _reduce((input - target).abs(), reduction)
    return _nn.smooth_l1_loss(input, target, reduction, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d**2`` where ``|d| < delta``, ``delta * (|d| - delta / 2)`` elsewhere.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.huber_loss(cr.tensor([0.5, 3.]), cr.zeros(2), reduction='none', delta=2.).tolist()
    [0.125, 4.0]
    """
    _warn_size(input, target)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return _nn.smooth_l1_loss(input, target, reduction, delta, huber=True)
    d = input - target
    ad = d.abs()
    losses = _where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    return _weighted(losses, weight, input, reduction, False)


def _check_unit_interval(t, what):
    arr = unwrap_all(t)[0]._data            # under vmap: every entry's values at once
    if arr.size and (np.min(arr) < 0 or np.max(arr) > 1):
        raise RuntimeError(f"all elements of {what} should be between 0 and 1")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """``-w * (t log x + (1 - t) log(1 - x))`` of probabilities ``x``; each log is
    clamped at -100, like the reference, so the loss stays finite.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.binary_cross_entropy(cr.tensor([0.5]), cr.tensor([1.])).item(), 4)
    0.6931
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the "
                         "same size.")
    _check_unit_interval(input, "input")
    _check_unit_interval(target, "target")
    if weight is not None and weight.requires_grad:
        raise RuntimeError("The function 'binary_cross_entropy' is not differentiable with "
                           "respect to argument 'weight'. This input cannot have "
                           "requires_grad True.")
    if _one_real_dtype(input, target, weight):
        return _nn.binary_cross_entropy(input, target, weight, reduction)
    log_x = _clamp_min(input.log(), -100.0)
    log_1mx = _clamp_min((1 - input).log(), -100.0)
    losses = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        losses = losses * weight
    return _reduce(losses, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """Binary cross entropy of ``sigmoid(input)``, computed stably from the logits;
    ``pos_weight`` weighs the positive term (broadcast along the last dim).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.binary_cross_entropy_with_logits(cr.tensor([0.]), cr.tensor([1.])).item(), 4)
    0.6931
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    if _one_real_dtype(input, target, weight, pos_weight):
        return _nn.binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                                    reduction)
    softplus_neg = _nn.softplus(-input, 1.0, 20.0)          # -log(sigmoid(x)), stably
    if pos_weight is None:
        losses = (1 - target) * input + softplus_neg
    else:
        losses = (1 - target) * input + ((pos_weight - 1) * target + 1) * softplus_neg
    if weight is not None:
        losses = losses * weight
    return _reduce(losses, reduction)


def _one_real_dtype(input, *others):
    """The table op's case: real floating Tensors of one dtype, the optional ones
    broadcasting to the input's shape (anything else takes the composite path)."""
    if not input.is_floating_point():
        return False
    for t in others:
        if t is not None and (not isinstance(t, _Tensor) or t.dtype != input.dtype or
                              _broadcast(t.shape, input.shape) != tuple(input.shape)):
            return False
    return True


def _broadcast(a, b):
    try:
        return np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        return None


def _xlogx(t):
    """``t * log(t)``, 0 where t is 0 (and no nan in its gradient there)."""
    positive = t > 0
    safe = _where(positive, t, _const(1.0, t))
    return _where(positive, t * safe.log(), t * 0)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence with ``input`` as log-probabilities: ``t * (log t -
    input)`` (``exp(t) * (t - input)`` when ``log_target``); ``'batchmean'`` divides
    the sum by the batch size.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.kl_div(cr.tensor([0., 0.]).log_softmax(0), cr.tensor([0.5, 0.5]),
    ...          reduction='batchmean').item()
    0.0
    """
    if size_average is not None or reduce is not None:
        reduction = _nn.reduction_arg(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if log_target:
        losses = target.exp() * (target - input)
    else:
        losses = _xlogx(target) - target * input
    if reduction == "batchmean":
        total = losses.sum()
        return total / input.shape[0] if input.dim() else total
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _reduce(losses, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Negative log likelihood of ``target`` under Poisson(rate): ``exp(x) - t x`` for
    log rates (``log_input``), ``x - t log(x + eps)`` for rates; ``full`` adds
    Stirling's approximation of ``log(t!)`` where t > 1.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.poisson_nll_loss(cr.tensor([0.]), cr.tensor([1.])).item()
    1.0
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    if log_input:
        losses = input.exp() - target * input
    else:
        losses = input - target * (input + eps).log()
    if full:
        above = target > 1
        safe = _where(above, target, _const(1.0, target))
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        losses = losses + _where(above, stirling, stirling * 0)
    return _reduce(losses, reduction)


def _gaussian_var(var, input):
    if not isinstance(var, _Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        return _const(np.full(input.shape, var), input)
    if type(var) is BatchedTensor:          # the reference's `if torch.any(var < 0)`
        raise RuntimeError(CONTROL_FLOW_MESSAGE)
    if var._data.size and np.min(var._data) < 0:
        raise ValueError("var has negative entry/entries")
    vs, xs = tuple(var.shape), tuple(input.shape)
    if vs != xs:
        if xs[:-1] == vs:
            return var.unsqueeze(-1)
        if len(xs) != len(vs) or sum(v for x, v in zip(xs, vs) if x != v) != 1:
            raise ValueError("var is of incorrect size")
    return var


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log likelihood of ``target`` under Normal(input, var):
    ``0.5 * (log var + (input - target)**2 / var)`` (+ ``0.5 log 2 pi`` if ``full``);
    var is clamped at ``eps`` without changing its gradient, like the reference.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.gaussian_nll_loss(cr.tensor([1.]), cr.tensor([1.]), cr.tensor([1.])).item()
    0.0
    """
    var = _gaussian_var(var, input)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (_clamp_min(var, eps) - var).detach()       # the clamp, invisible to autograd
    d = input - target
    losses = 0.5 * (var.log() + d * d / var)
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce(losses, reduction)


def _target_mask(target, value, like):
    return _const((target._data == value), like)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos(x1, x2) - margin)`` where it
    is -1 (cosines along the last dim of 1-D or 2-D inputs).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.cosine_embedding_loss(cr.tensor([[1., 0.]]), cr.tensor([[1., 0.]]),
    ...                         cr.tensor([1])).item()
    0.0
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    if input1.dim() not in (1, 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = input1.dim() - 1
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + _EPSILON
    mag2 = (input2 * input2).sum(dim) + _EPSILON
    cos = prod / (mag1 * mag2).sqrt()
    losses = (1 - cos) * _target_mask(target, 1, cos) + \
        _clamp_min(cos - margin, 0.0) * _target_mask(target, -1, cos)
    return _reduce(losses, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.margin_ranking_loss(cr.tensor([1.]), cr.tensor([2.]), cr.tensor([1.])).item()
    1.0
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    return _reduce(_clamp_min(-target * (input1 - input2) + margin, 0.0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``x`` where target is 1, ``max(0, margin - x)`` where it is -1.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.hinge_embedding_loss(cr.tensor([0.3, 2.]), cr.tensor([-1., 1.]),
    ...                        reduction='none').tolist()
    [0.699999988079071, 2.0]
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    margin_part = _clamp_min(margin - input, 0.0) * _const(target._data != 1, input)
    self_part = input * _const(target._data != -1, input)
    return _reduce(margin_part + self_part, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.soft_margin_loss(cr.tensor([0.]), cr.tensor([1.])).item(), 4)
    0.6931
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    _not_differentiable("soft_margin_loss", "target", target)
    target = target.to(input.dtype)                       # Note [margin losses by their direction]
    return _margin_losses.soft_margin_loss(input, target, reduction)


def _not_differentiable(name, argument, tensor):
    if tensor is not None and tensor.requires_grad and _grad_mode.is_grad_enabled():
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to "
                           f"argument '{argument}'. This input cannot have requires_grad True.")


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per sample, the mean over classes (last dim) of the binary cross entropy of
    ``sigmoid(input)`` against 0/1 ``target``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.multilabel_soft_margin_loss(cr.zeros(1, 2), cr.tensor([[1., 0.]])).item(), 4)
    0.6931
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    # the reference's own composite, op for op (its graph and rounding)
    losses = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        losses = losses * weight
    class_dim = input.dim() - 1
    losses = losses.sum(class_dim) / input.shape[class_dim]
    return _reduce(losses, reduction)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of ``x1 - x2 + eps`` along the last dim.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.pairwise_distance(cr.tensor([[3., 0.]]), cr.tensor([[0., 4.]]), eps=0.).tolist()
    [5.0]
    """
    diff = x1 - x2
    if not diff.dtype.is_floating_point and not diff.dtype.is_complex:
        diff = diff + eps                                    # (no gradient: any node)
    else:                                                    # the reference's at::norm graph
        diff = _apply_op(_elementwise.ADD_SCALAR, (diff,), {"other": eps})
    dim = (diff.dim() - 1,) if diff.dim() else None
    return _apply_op(_reduction.NORM_DIM, (diff,), {"p": p, "dim": dim, "keepdim": keepdim})


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, d(a, p) - d(a, n) + margin)`` with pairwise p-norm distances; ``swap``
    uses ``min(d(a, n), d(p, n))``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.triplet_margin_loss(cr.tensor([[0., 0.]]), cr.tensor([[0., 1.]]),
    ...                       cr.tensor([[0., 3.]]), eps=0.).item()
    0.0
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {dims[0]}D, "
                           f"positive {dims[1]}D, and negative {dims[2]}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _FUNCTIONS["minimum"](d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_clamp_min(margin + d_pos - d_neg, 0.0), reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss: per sample, the mean over classes j != y of
    ``w[y] * max(0, margin - x[y] + x[j]) ** p`` (p is 1 or 2).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.multi_margin_loss(cr.tensor([[0.1, 0.2, 0.4, 0.8]]), cr.tensor([3])).item()
    0.32499998807907104
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    unbatched = input.dim() <= 1
    n, c = (1, input.numel()) if unbatched else tuple(input.shape)
    if target.numel() != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got "
                           f"{list(target.shape)}")
    t = unwrap_all(target)[0]._data         # under vmap: every entry's values at once
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    _not_differentiable("multi_margin_loss", "weight", weight)
    out_shape = (tuple(target.shape) if unbatched else (n,)) if reduction == "none" else ()
    return _margin_losses.multi_margin_loss(input, target, weight, p, float(margin), reduction,
                                            out_shape)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``x1 . x2 / (max(|x1|, eps) * max(|x2|, eps))`` along ``dim`` (broadcasting); the
    clamps do not enter the gradient, like the reference's.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.cosine_similarity(cr.tensor([[1., 0.]]), cr.tensor([[2., 0.]])).tolist()
    [1.0]
    """
    x1, x2 = _FUNCTIONS["broadcast_tensors"](x1, x2)
    n1 = _quiet_clamp(_FUNCTIONS["norm"](x1, 2, dim, True), eps)
    n2 = _quiet_clamp(_FUNCTIONS["norm"](x2, 2, dim, True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _quiet_clamp(t, low):
    """``t`` clamped below at ``low`` in value only (the gradient is t's)."""
    return t + (_clamp_min(t, low) - t).detach()


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.normalize(cr.tensor([[3., 4.]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    denom = _clamp_min(_FUNCTIONS["norm"](input, p, dim, True), eps)
    result = input / denom
    if out is not None:
        return out.copy_(result)
    return result


__all__ = ["l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
           "gaussian_nll_loss", "cosine_embedding_loss", "margin_ranking_loss",
           "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
           "pairwise_distance", "triplet_margin_loss", "multi_margin_loss",
           "cosine_similarity", "normalize"]
