"""Dropout layers: zero elements (or channels) with probability ``p`` in training,
scaling the rest by ``1 / (1 - p)``; the identity in evaluation."""
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    _function = "dropout"

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return getattr(F, self._function)(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` in training.

    >>> import chainrule as cr
    >>> cr.nn.Dropout(0.2).eval()(cr.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    >>> cr.nn.Dropout(0.2)
    Dropout(p=0.2, inplace=False)
    """


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) input with probability ``p`` in training.

    >>> import chainrule as cr
    >>> cr.nn.Dropout1d().eval()(cr.ones(1, 2, 3)).shape
    chainrule.Size([1, 2, 3])
    """

    _function = "dropout1d"


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) input with probability ``p`` in training.

    >>> import chainrule as cr
    >>> cr.nn.Dropout2d().eval()(cr.ones(1, 2, 3, 3)).shape
    chainrule.Size([1, 2, 3, 3])
    """

    _function = "dropout2d"


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) input with probability ``p`` in training.

    >>> import chainrule as cr
    >>> cr.nn.Dropout3d().eval()(cr.ones(1, 2, 1, 1, 1)).shape
    chainrule.Size([1, 2, 1, 1, 1])
    """

    _function = "dropout3d"


class AlphaDropout(_DropoutNd):
    """Dropout that keeps the mean and variance of SELU activations.

    >>> import chainrule as cr
    >>> cr.nn.AlphaDropout().eval()(cr.ones(2)).tolist()
    [1.0, 1.0]
    """

    _function = "alpha_dropout"


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels.

    >>> import chainrule as cr
    >>> cr.nn.FeatureAlphaDropout().eval()(cr.ones(1, 2, 2)).shape
    chainrule.Size([1, 2, 2])
    """

    _function = "feature_alpha_dropout"
