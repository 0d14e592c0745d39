"""The remaining differentiable functions of the reference's functional namespace:
bilinear, channel_shuffle, pdist, gumbel_softmax, max_unpool1d/2d, the *_with_indices
pooling forms, multilabel_margin_loss, triplet_margin_with_distance_loss and the
deprecated upsample_* aliases; compositions of table ops."""
import warnings

import numpy as np

from .. import _dtypes, _random
from .._ops import distance as _distance, nn as _nn, shuffle as _shuffle
from .._ops import margin_losses as _margin_losses, unpooling as _unpooling
from .._ops._common import FUNCTIONS as _FUNCTIONS
from .._tensor import Tensor as _Tensor, on_device_of, zeros_on
from . import _pool, _vision
from ._loss import _clamp_min, _reduce, pairwise_distance


def bilinear(input1, input2, weight, bias=None):
    """``x1^T A_o x2 + b_o`` for each output feature o (weight: (out, in1, in2)).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.bilinear(cr.ones(1, 2), cr.ones(1, 3), cr.ones(4, 2, 3)).tolist()
    [[6.0, 6.0, 6.0, 6.0]]
    """
    _check_bilinear_dtypes(input1, input2, weight, bias)      # before any shape, as the reference
    if weight.dim() != 3 or input1.shape[-1] != weight.shape[1] or \
            input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input sizes {list(input1.shape)} and "
                           f"{list(input2.shape)} do not match the weight of size "
                           f"{list(weight.shape)}")
    out = _FUNCTIONS["einsum"]("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def _check_bilinear_dtypes(input1, input2, weight, bias):
    named = {"input1": input1, "input2": input2, "weight": weight}
    if bias is not None:
        named["bias"] = bias
    if len({t._data.dtype for t in named.values()}) > 1:
        got = ", ".join(f"{k}: {_dtypes.cpp_type_name(t._data.dtype)}" for k, t in named.items())
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")


def channel_shuffle(input, groups):
    """Interleave the channels of ``groups`` groups: (N, g * k, *) read as (N, g, k, *)
    and transposed to (N, k, g, *).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.channel_shuffle(cr.arange(4.).reshape(1, 4, 1), 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return _shuffle._channel_shuffle(input, groups)


def pdist(input, p=2):
    """The p-norm distances between the rows of (N, M) input, for each pair i < j in
    order (N (N - 1) / 2 values).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.pdist(cr.tensor([[0., 0.], [3., 4.], [6., 8.]])).tolist()
    [5.0, 10.0, 5.0]
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if input._data.dtype.itemsize == 2:
        raise NotImplementedError(f"\"pdist\" not implemented for "
                                  f"'{_dtypes.scalar_type_name(input._data.dtype)}'")
    return _distance.pdist(input.contiguous(), p)        # Note [pdist pairs]


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample from the Gumbel-softmax distribution (noise from the default
    generator); ``hard`` returns one-hot samples whose gradient is the soft sample's.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.gumbel_softmax(cr.zeros(2, 3), hard=True).sum(-1).tolist()
    [1.0, 1.0]
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    noise = _Tensor._wrap(np.zeros(tuple(logits.shape), logits._data.dtype))
    gumbels = -_random.exponential_(noise).log()
    soft = _FUNCTIONS["softmax"]((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft._data.argmax(axis=dim)
    one_hot = np.zeros(soft._data.shape, soft._data.dtype)
    np.put_along_axis(one_hot, np.expand_dims(index, dim), 1, axis=dim)
    return _Tensor._wrap(one_hot) - soft.detach() + soft


def _unpool_size(input, kernel, stride, padding, output_size, n):
    """The reference's _unpool_output_size: the default size or the checked
    ``output_size`` (which may carry the batch and channel sizes in front)."""
    sizes = [(input.shape[-n + i] - 1) * stride[i] - 2 * padding[i] + kernel[i]
             for i in range(n)]
    if output_size is None:
        return sizes
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, "
                         f"but it has a length of '{len(output_size)}'")
    for d, (got, default, s) in enumerate(zip(output_size, sizes, stride)):
        if not default - s < got < default + s:
            raise ValueError(f"invalid output_size \"{output_size}\" (dim {d} must be between "
                             f"{default - s} and {default + s})")
    return list(output_size)


def _check_unpool(name, input, indices, n, detail):
    """The reference's max_unpooling{n}d checks, in its order."""
    if indices.dtype != _dtypes.int64:
        raise RuntimeError("elements in indices should be type int64" + detail(indices))
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d Tensor, "
                           f"but got a tensor with {input.dim()} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got {list(input.shape)} with dimension {d} "
                               "being empty.")


def _check_unpool_values(input, indices, sizes):
    if input.dtype.is_complex or not input.dtype.is_floating_point:
        raise NotImplementedError(f'"max_unpool{len(sizes)}d" not implemented for '
                                  f"'{_dtypes.scalar_type_name(input._data.dtype)}'")
    flat = indices._data.reshape(-1)
    bad = (flat < 0) | (flat >= int(np.prod(sizes)))
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {int(flat[bad.argmax()])} (output "
                           f"volumes are of size {'x'.join(str(s) for s in sizes)})")


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n):
    kernel = _pool._tuple(kernel_size, n, "kernel_size")
    stride = kernel if stride is None else _pool._tuple(stride, n, "stride")
    padding = _pool._tuple(padding, n, "padding")
    sizes = _unpool_size(input, kernel, stride, padding, output_size, n)
    if n == 1:                     # the reference's 2-D op over an added trailing dim
        out = _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), kernel + (1,),
                          stride + (1,), padding + (0,), sizes + [1], 2)
        return out.squeeze(-1)
    if n == 2:
        _check_unpool("max_unpooling2d_forward_out_cpu", input, indices, 2,
                      lambda i: f" but got: {_dtypes.scalar_type_name(i._data.dtype)}")
    else:
        _check_unpool("max_unpooling3d_forward_out_cpu", input, indices, 3, lambda i: "")
        if min(stride) <= 0:
            raise RuntimeError(f"strides should be greater than zero, but got stride: "
                               f"{list(stride)}")
    _check_unpool_values(input, indices, sizes)
    return _unpooling._max_unpool(input, indices, tuple(sizes))


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool2d`: each value goes back to the flat
    position ``indices`` gives (from ``return_indices=True``), zeros elsewhere.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> out, idx = F.max_pool2d(cr.arange(4.).reshape(1, 2, 2), 2, return_indices=True)
    >>> F.max_unpool2d(out, idx, 2).tolist()
    [[[0.0, 0.0], [0.0, 3.0]]]
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """:func:`max_unpool2d` for the output of :func:`max_pool1d`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> out, idx = F.max_pool1d(cr.tensor([[1., 3., 2., 0.]]), 2, return_indices=True)
    >>> F.max_unpool1d(out, idx, 2).tolist()
    [[0.0, 3.0, 2.0, 0.0]]
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """:func:`max_pool1d` returning (values, indices).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.max_pool1d_with_indices(cr.tensor([[1., 3.]]), 2)[1].tolist()
    [[1]]
    """
    return _pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """:func:`max_pool2d` returning (values, indices).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.max_pool2d_with_indices(cr.arange(4.).reshape(1, 2, 2), 2)[1].tolist()
    [[[3]]]
    """
    return _pool.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool1d` returning (values, indices).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_max_pool1d_with_indices(cr.tensor([[1., 3.]]), 1)[1].tolist()
    [[1]]
    """
    return _pool.adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool2d` returning (values, indices).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_max_pool2d_with_indices(cr.arange(4.).reshape(1, 2, 2), 1)[1].tolist()
    [[[3]]]
    """
    return _pool.adaptive_max_pool2d(input, output_size, True)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: per sample, ``sum over target classes j and non-target
    classes i of max(0, 1 - (x[j] - x[i])) / C``; ``target`` lists class indices,
    ended by the first -1.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.multilabel_margin_loss(cr.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                                cr.tensor([[3, 0, -1, 1]])).item(), 4)
    0.85
    """
    reduction = _nn.reduction_arg(size_average, reduce, reduction)
    unbatched = input.dim() <= 1
    out_shape = () if unbatched or reduction != "none" else tuple(input.shape)[:1]
    return _margin_losses.multilabel_margin_loss(input, target, reduction, out_shape)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """:func:`triplet_margin_loss` with any ``distance_function`` (default: the
    pairwise Euclidean distance).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.triplet_margin_with_distance_loss(cr.zeros(1, 2), cr.zeros(1, 2),
    ...                                     cr.ones(1, 2) * 3).item()
    0.0
    """
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than "
                         f"0, got {margin} instead")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = _FUNCTIONS["minimum"](d_neg, distance(positive, negative))
    return _reduce(_clamp_min(margin + d_pos - d_neg, 0.0), reduction)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``.

    >>> import chainrule as cr, warnings
    >>> import chainrule.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_nearest(cr.tensor([[[1., 2.]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return _vision.interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``.

    >>> import chainrule as cr, warnings
    >>> import chainrule.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_bilinear(cr.ones(1, 1, 2, 2), size=3).shape
    chainrule.Size([1, 1, 3, 3])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return _vision.interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ = ["bilinear", "channel_shuffle", "pdist", "gumbel_softmax", "max_unpool1d",
           "max_unpool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "multilabel_margin_loss", "triplet_margin_with_distance_loss", "upsample_nearest",
           "upsample_bilinear"]
