"""``chainrule.nn.functional``: neural-network functions with the signatures of
``torch.nn.functional``.

>>> import chainrule as cr
>>> import chainrule.nn.functional as F
>>> x = cr.randn(4, 3, requires_grad=True)
>>> w = cr.randn(2, 3, requires_grad=True)
>>> loss = F.cross_entropy(F.linear(x, w), cr.tensor([0, 1, 1, 0]))
>>> loss.backward()
>>> w.grad.shape
chainrule.Size([2, 3])
"""
import warnings

from .. import _ops  # noqa: F401  (the table must exist before the functions run)
from .._ops import nn as _nn
from .._ops._common import FUNCTIONS as _FUNCTIONS
from .._tensor import Tensor as _Tensor

from ._activation import *  # noqa: F401,F403  (leaky_relu, elu, ..., prelu, rrelu)
from ._activation import __all__ as _activation_names
from ._dropout import *  # noqa: F401,F403  (dropout and its variants)
from ._dropout import __all__ as _dropout_names, top_level_dropout as _top_level_dropout
from ._loss import *  # noqa: F401,F403  (l1_loss, ..., cosine_similarity, normalize)
from ._loss import __all__ as _loss_names
from ._norm import *  # noqa: F401,F403  (batch_norm, layer_norm, group_norm, ...)
from ._norm import __all__ as _norm_names, TOP_LEVEL as _norm_top_level
from ._pad import pad  # noqa: F401
from ._pool import *  # noqa: F401,F403  (max/avg/adaptive/lp pooling)
from ._pool import __all__ as _pool_names
from ._conv import *  # noqa: F401,F403  (conv1d, conv3d, conv_transpose1d/2d, unfold, fold)
from ._conv import __all__ as _conv_names
from ._vision import *  # noqa: F401,F403  (pixel_shuffle, pixel_unshuffle, interpolate)
from ._vision import __all__ as _vision_names
from ._attention import scaled_dot_product_attention  # noqa: F401
from ._misc import *  # noqa: F401,F403  (bilinear, pdist, max_unpool2d, ...)
from ._misc import __all__ as _misc_names
from ._ctc import ctc_loss  # noqa: F401
from ._pool_extra import *  # noqa: F401,F403  (max_unpool3d, lp_pool3d, fractional pooling)
from ._pool_extra import __all__ as _pool_extra_names
from ._grid import affine_grid, grid_sample  # noqa: F401
from ._grid import GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES  # noqa: F401
from ._grid import affine_grid_generator as _affine_grid_generator, grid_sampler as _grid_sampler
from ._mha import multi_head_attention_forward  # noqa: F401
from ._sparse import embedding, one_hot, top_level_embedding as _top_level_embedding  # noqa
from ._embedding_bag import embedding_bag  # noqa: F401
from ._aten_forms import TOP_LEVEL as _aten_top_level

__all__ = ["linear", "conv2d", "relu", "gelu", "silu", "softplus", "sigmoid", "tanh",
           "softmax", "log_softmax", "cross_entropy", "nll_loss", "mse_loss"] + \
    _activation_names + _dropout_names + _loss_names + _norm_names + ["pad"] + \
    _pool_names + _conv_names + ["embedding", "one_hot"] + _vision_names + ["scaled_dot_product_attention"] + \
    _misc_names + ["relu_", "ctc_loss"] + _pool_extra_names + ["affine_grid", "grid_sample"] + \
    ["multi_head_attention_forward"]


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (weight is (out_features, in_features)).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.linear(cr.ones(2, 3), cr.ones(4, 3), cr.zeros(4)).tolist()
    [[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]
    """
    return _nn.linear(input, weight, bias)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation of (N, C, H, W) (or unbatched (C, H, W)) input with weight
    (out_channels, C / groups, kH, kW); padding is an int, a pair, 'valid' or 'same'.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.conv2d(cr.ones(1, 1, 4, 4), cr.ones(2, 1, 3, 3), padding=1).shape
    chainrule.Size([1, 2, 4, 4])
    """
    return _nn.conv2d(input, weight, bias, stride, padding, dilation, groups)


def relu(input, inplace=False):
    """``max(input, 0)``; ``inplace=True`` overwrites ``input``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.relu(cr.tensor([-1., 2.])).tolist()
    [0.0, 2.0]
    """
    if inplace:
        return input.relu_()
    # Note [functional methods]: the Tensor method, not _FUNCTIONS["relu"], because an
    # accelerator may have replaced it (Note [method slot] in _ops/_method_slot.py);
    # either way it is the same function for every argument, a Tensor or not.
    return _Tensor.relu(input)


def relu_(input):
    """In-place :func:`relu`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.relu_(cr.tensor([-1., 2.])).tolist()
    [0.0, 2.0]
    """
    return input.relu_()


def gelu(input, approximate="none"):
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate='tanh'`` uses the tanh
    approximation.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.gelu(cr.tensor([1.])).item(), 4)
    0.8413
    """
    return _nn.gelu(input, approximate)


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (also called swish).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.silu(cr.tensor([1.])).item(), 4)
    0.7311
    """
    return _nn.silu_inplace(input) if inplace else _nn.silu(input)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.softplus(cr.tensor([0.])).item(), 4)
    0.6931
    """
    return _nn.softplus(input, beta, threshold)


def sigmoid(input):
    """Logistic sigmoid ``1 / (1 + exp(-x))``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.sigmoid(cr.tensor([0.])).tolist()
    [0.5]
    """
    return _Tensor.sigmoid(input)       # Note [functional methods]


def tanh(input):
    """Hyperbolic tangent.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.tanh(cr.tensor([0.])).tolist()
    [0.0]
    """
    return _Tensor.tanh(input)          # Note [functional methods]


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (cast to ``dtype`` first if given).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.softmax(cr.tensor([0., 0.]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _FUNCTIONS["softmax"](input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``log(softmax(x))`` along ``dim``, computed stably.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> [round(v, 4) for v in F.log_softmax(cr.tensor([0., 0.]), dim=0).tolist()]
    [-0.6931, -0.6931]
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _FUNCTIONS["log_softmax"](input, dim, dtype=dtype)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of log-probabilities ``input`` (N, C, ...) at the class
    indices ``target`` (N, ...), optionally weighted per class; targets equal to
    ``ignore_index`` contribute nothing.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.nll_loss(cr.tensor([[-1., -2.], [-3., -4.]]), cr.tensor([0, 1])).item()
    2.5
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    return _nn.nll_loss(input, target, weight, ignore_index, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross entropy of logits ``input`` (C), (N, C) or (N, C, d1, ...) against class
    indices or class probabilities (same shape as ``input``).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.cross_entropy(cr.zeros(2, 4), cr.tensor([0, 3])).item(), 4)
    1.3863
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    return _nn.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target) ** 2``, reduced by ``reduction``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.mse_loss(cr.tensor([1., 2.]), cr.tensor([0., 0.])).item()
    2.5
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    return _nn.mse_loss(input, target, reduction, weight)



# The reference's top-level forms (``torch.conv2d``, ``torch.dropout``, ...) of these
# functions; chainrule/__init__.py installs them as ``chainrule.<name>``. (The losses'
# top-level forms take the reduction as an enum integer: not offered.)
TOP_LEVEL = {"conv2d": conv2d, "conv1d": conv1d, "conv3d": conv3d,  # noqa: F405
             "conv_transpose1d": conv_transpose1d,  # noqa: F405
             "conv_transpose2d": conv_transpose2d,  # noqa: F405
             "conv_transpose3d": conv_transpose3d,  # noqa: F405
             "grid_sampler": _grid_sampler, "affine_grid_generator": _affine_grid_generator,
             "native_channel_shuffle": native_channel_shuffle,  # noqa: F405
             "pixel_shuffle": pixel_shuffle, "pdist": pdist,  # noqa: F405
             "bilinear": bilinear, "channel_shuffle": channel_shuffle,  # noqa: F405
             "pixel_unshuffle": pixel_unshuffle,  # noqa: F405
             "dropout": _top_level_dropout, "embedding": _top_level_embedding,
             "alpha_dropout": alpha_dropout,  # noqa: F405
             "feature_alpha_dropout": feature_alpha_dropout,  # noqa: F405
             "selu": selu, "celu": celu, "prelu": prelu, "rrelu": rrelu,  # noqa: F405
             "hardshrink": hardshrink, "threshold": threshold,  # noqa: F405
             **_norm_top_level,
             "max_pool1d": max_pool1d, "max_pool2d": max_pool2d,  # noqa: F405
             "max_pool3d": max_pool3d,  # noqa: F405
             "avg_pool1d": avg_pool1d, "adaptive_avg_pool1d": adaptive_avg_pool1d,  # noqa
             "pairwise_distance": pairwise_distance,  # noqa: F405
             "cosine_similarity": cosine_similarity,  # noqa: F405
             **_aten_top_level}
