"""Dropout and its channel-wise and self-normalising variants. Masks come from the
default generator (``chainrule.manual_seed``), drawn on the input's device (Note
[random numbers on a device] in _random.py); the result is ``input * mask`` (a
recorded product with a constant, so gradients and tangents are masked alike)."""
import math
import warnings

from .. import _random
from .._tensor import Tensor as _Tensor

_SELU_NEG = 1.7580993408473766       # -(selu scale * selu alpha), the reference's alpha'


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p, feature):
    """The keep-mask (1 with probability 1 - p) in input's dtype, shaped like input or,
    for feature dropout, one entry per (batch, channel)."""
    shape = tuple(input.shape)
    if feature:
        if len(shape) < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = shape[:2] + (1,) * (len(shape) - 2)
    meta = _random.drawn_on_meta(input, shape, input._data.dtype)
    if meta is not None:
        return meta
    return _random.bernoulli_mask(shape, 1.0 - p, input._data.dtype, like=input._data)


def _apply(input, p, training, inplace, feature=False, alpha=False):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        factor, shift = _Tensor._wrap(input._data.dtype.type(0)), None
    elif alpha:
        noise = _noise(input, p, feature)
        a = 1.0 / math.sqrt((_SELU_NEG * _SELU_NEG * p + 1) * (1 - p))
        factor = _Tensor._wrap(noise * input._data.dtype.type(a))
        shift = _Tensor._wrap(((noise - 1) * (_SELU_NEG * a) + _SELU_NEG * a * p)
                              .astype(input._data.dtype))
    else:
        noise = _noise(input, p, feature)
        factor, shift = _Tensor._wrap(noise / input._data.dtype.type(1 - p)), None
    if inplace:
        input.mul_(factor)
        return input if shift is None else input.add_(shift)
    out = input * factor
    return out if shift is None else out + shift


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (in training; the identity otherwise).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> _ = cr.manual_seed(0)
    >>> y = F.dropout(cr.ones(1000), 0.5)
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    >>> F.dropout(cr.ones(2), 0.5, training=False).tolist()
    [1.0, 1.0]
    """
    return _apply(input, p, training, inplace)


def _channel_dropout(name, input, p, training, inplace, spatial):
    """dropout1d/2d/3d: whole channels; unbatched input gets a batch dim for the mask."""
    _check_p(p)
    dim = input.dim()
    if dim not in (spatial + 1, spatial + 2):
        _wrong_rank(name, dim, spatial)
    unbatched = dim != spatial + 2
    if unbatched:
        input = input.unsqueeze(0)
    out = _apply(input, p, training, inplace, feature=True)
    return out.squeeze(0) if unbatched else out


def _wrong_rank(name, dim, spatial):
    kinds = {1: "1 spatial dimension", 2: "2 spatial dimensions", 3: "3 spatial dimensions"}
    note = (f"Note that {name} exists to provide channel-wise dropout on inputs with "
            f"{kinds[spatial]}, a channel dimension, and an optional batch dimension (i.e. "
            f"{spatial + 1}D or {spatial + 2}D inputs).")
    if spatial == 1:
        raise RuntimeError(f"{name}: Expected 2D or 3D input, but received a {dim}D input. "
                           + note)
    warnings.warn(f"{name}: Received a {dim}-D input to {name}, which is deprecated and will "
                  f"result in an error in a future release. To retain the behavior and "
                  f"silence this warning, please use dropout instead. " + note, stacklevel=4)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.dropout1d(cr.ones(2, 3, 4), 0.5).shape
    chainrule.Size([2, 3, 4])
    """
    return _channel_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) or (C, H, W) input with probability ``p``
    (3-D input is read as (N, C, L), like the reference, with a warning).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.dropout2d(cr.ones(2, 3, 4, 4), 0.5).shape
    chainrule.Size([2, 3, 4, 4])
    """
    _check_p(p)
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=2)
        return _apply(input, p, training, inplace, feature=True)
    return _channel_dropout("dropout2d", input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability
    ``p``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.dropout3d(cr.ones(1, 2, 2, 2, 2), 0.5).shape
    chainrule.Size([1, 2, 2, 2, 2])
    """
    return _channel_dropout("dropout3d", input, p, training, inplace, 3)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's zero mean and unit variance: dropped elements take
    SELU's negative saturation value, then an affine map restores the moments.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.alpha_dropout(cr.ones(3), 0.5).tolist()
    [1.0, 1.0, 1.0]
    """
    return _apply(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """:func:`alpha_dropout` of whole channels (dim 1).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.feature_alpha_dropout(cr.ones(2, 3), 0.5, training=True).shape
    chainrule.Size([2, 3])
    """
    return _apply(input, p, training, inplace, feature=True, alpha=True)


def top_level_dropout(input, p, train):
    """``chainrule.dropout(input, p, train)`` (the reference's top-level form).

    >>> import chainrule as cr
    >>> cr.dropout(cr.ones(2), 0.5, False).tolist()
    [1.0, 1.0]
    """
    return _apply(input, p, train, False)


__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]
