"""Every loss of ``torch.nn`` as a module; each calls the ``nn.functional`` function
of the same name with its stored arguments (``reduction`` and the rest)."""
from ..._ops.nn import reduction_arg
from .. import functional as F
from .module import Module

__all__ = ["L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
           "KLDivLoss", "HuberLoss", "SmoothL1Loss", "SoftMarginLoss", "PoissonNLLLoss",
           "GaussianNLLLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
           "MarginRankingLoss", "HingeEmbeddingLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss", "NLLLoss2d"]


def legacy_reduction(size_average, reduce, reduction):
    """``reduction``, or what the deprecated ``size_average``/``reduce`` pair means."""
    if size_average is None and reduce is None:
        return reduction
    return reduction_arg(size_average, reduce, reduction)


class _Loss(Module):
    """A loss module: ``reduction`` is 'mean' (default), 'sum' or 'none'; the
    deprecated ``size_average``/``reduce`` pair still sets it."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean absolute error.

    >>> import chainrule as cr
    >>> cr.nn.L1Loss()(cr.tensor([1.0, 2.0]), cr.zeros(2)).item()
    1.5
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error.

    >>> import chainrule as cr
    >>> cr.nn.MSELoss()(cr.tensor([1.0, 2.0]), cr.zeros(2)).item()
    2.5
    """

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities.

    >>> import chainrule as cr
    >>> round(cr.nn.CrossEntropyLoss()(cr.zeros(2, 4), cr.tensor([0, 3])).item(), 4)
    1.3863
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities at class indices.

    >>> import chainrule as cr
    >>> cr.nn.NLLLoss()(cr.tensor([[-1., -2.], [-3., -4.]]), cr.tensor([0, 1])).item()
    2.5
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities.

    >>> import chainrule as cr
    >>> round(cr.nn.BCELoss()(cr.tensor([0.5]), cr.tensor([1.0])).item(), 4)
    0.6931
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (sigmoid inside, computed stably).

    >>> import chainrule as cr
    >>> round(cr.nn.BCEWithLogitsLoss()(cr.zeros(1), cr.ones(1)).item(), 4)
    0.6931
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target``.

    >>> import chainrule as cr
    >>> cr.nn.KLDivLoss(reduction="batchmean")(cr.zeros(1, 2), cr.ones(1, 2)).item()
    0.0
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class HuberLoss(_Loss):
    """Squared error below ``delta``, linear above.

    >>> import chainrule as cr
    >>> cr.nn.HuberLoss()(cr.tensor([3.0]), cr.zeros(1)).item()
    2.5
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SmoothL1Loss(_Loss):
    """Huber loss divided by ``beta``.

    >>> import chainrule as cr
    >>> cr.nn.SmoothL1Loss()(cr.tensor([3.0]), cr.zeros(1)).item()
    2.5
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-y * x))``.

    >>> import chainrule as cr
    >>> round(cr.nn.SoftMarginLoss()(cr.zeros(1), cr.ones(1)).item(), 4)
    0.6931
    """

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Negative log likelihood of a Poisson target.

    >>> import chainrule as cr
    >>> cr.nn.PoissonNLLLoss()(cr.zeros(1), cr.zeros(1)).item()
    1.0
    """

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log likelihood of a Gaussian target with predicted variance.

    >>> import chainrule as cr
    >>> cr.nn.GaussianNLLLoss()(cr.zeros(1), cr.zeros(1), cr.ones(1)).item()
    0.0
    """

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all loss (sigmoid cross entropy averaged over classes).

    >>> import chainrule as cr
    >>> round(cr.nn.MultiLabelSoftMarginLoss()(cr.zeros(1, 2), cr.ones(1, 2)).item(), 4)
    0.6931
    """

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class _MarginLoss(_Loss):
    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class CosineEmbeddingLoss(_MarginLoss):
    """``1 - cos(x1, x2)`` for y = 1, ``max(0, cos(x1, x2) - margin)`` for y = -1.

    >>> import chainrule as cr
    >>> cr.nn.CosineEmbeddingLoss()(cr.ones(1, 2), cr.ones(1, 2), cr.ones(1)).item()
    0.0
    """

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class MarginRankingLoss(_MarginLoss):
    """``max(0, -y * (x1 - x2) + margin)``.

    >>> import chainrule as cr
    >>> cr.nn.MarginRankingLoss()(cr.ones(1), cr.zeros(1), cr.ones(1)).item()
    0.0
    """

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """``x`` for y = 1, ``max(0, margin - x)`` for y = -1.

    >>> import chainrule as cr
    >>> cr.nn.HingeEmbeddingLoss()(cr.zeros(1), -cr.ones(1)).item()
    1.0
    """

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss.

    >>> import chainrule as cr
    >>> cr.nn.MultiMarginLoss()(cr.tensor([[0.0, 2.0]]), cr.tensor([1])).item()
    0.0
    """

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-class multi-classification hinge loss.

    >>> import chainrule as cr
    >>> cr.nn.MultiLabelMarginLoss(reduction="sum").reduction
    'sum'
    """

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the p-norm distance.

    >>> import chainrule as cr
    >>> cr.nn.TripletMarginLoss()(cr.zeros(1, 2), cr.zeros(1, 2), cr.ones(1, 2) * 5).item()
    0.0
    """

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet margin loss with a custom distance function.

    >>> import chainrule as cr
    >>> cr.nn.TripletMarginWithDistanceLoss(margin=0.5).margin
    0.5
    """

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError("TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss.

    >>> import chainrule as cr
    >>> cr.nn.CTCLoss().blank
    0
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class NLLLoss2d(NLLLoss):
    """The deprecated spelling of :class:`NLLLoss` for (N, C, H, W) input (warns).

    >>> import warnings
    >>> import chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     loss = cr.nn.NLLLoss2d()
    >>> loss(cr.zeros(1, 2, 1, 1), cr.tensor([[[1]]])).item()
    -0.0
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        import warnings
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see https://pytorch.org/docs/main/nn.html#torch.nn"
                      ".NLLLoss for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
