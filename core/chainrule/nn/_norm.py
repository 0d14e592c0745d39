"""Normalisation layers' functional forms: batch_norm (running statistics updated in
place), layer_norm, group_norm, instance_norm, rms_norm, local_response_norm.

layer_norm is one table op (native_layer_norm); the others are compositions of table
ops (mean, var, rsqrt, ...), so gradients, double backward and tangents come from
those entries. Running statistics are updated
outside the graph (under no_grad), in place, like the reference's buffers.
"""
import numpy as np

from .. import _dtypes
from .._ops._common import kernel_error
from .._grad_mode import no_grad as _no_grad
from .._ops.nn import native_batch_norm as _native_batch_norm, \
    native_group_norm as _native_group_norm, native_layer_norm as _native_layer_norm


def _normalize(x, dims, eps):
    """``(x - mean) / sqrt(var + eps)`` over ``dims`` (biased variance), and the
    statistics (mean, biased var) with their dims kept."""
    mean = x.mean(dims, keepdim=True)
    var = x.var(dims, keepdim=True, correction=0)
    return (x - mean) * (var + eps).rsqrt(), mean, var


def _affine(y, weight, bias, shape):
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


# Note [low-precision normalisation]
#     A bfloat16 or float16 input (float32 weight and bias allowed, as under autocast) is
#     normalised in float32 and the result rounded once to the input's dtype, as the
#     reference's kernels compute them; the running statistics keep their own dtype.
def _low_precision(input):
    return input.dtype.itemsize == 2 and input.dtype.is_floating_point


def _float(t):
    return None if t is None else t.float()


def _check_running(name, stat, channels):
    if stat is not None and stat.numel() != channels:
        raise RuntimeError(f"{name} should contain {channels} elements not {stat.numel()}")


def _update_running(running, value, momentum):
    """``running = (1 - momentum) * running + momentum * value``, in place, untracked."""
    if running is None:
        return
    with _no_grad():
        value = value.reshape(running.shape)
        running.copy_(value * momentum + running.to(value.dtype) * (1 - momentum))


def _per_channel_count(input):
    return input.numel() // input.shape[1] if input.dim() > 1 else input.numel()


def _check_vmapped_running(input, running_mean, running_var):
    """Under vmap, running statistics updated in place must be batched like the input
    (one per entry): the reference's error otherwise."""
    from .._batched import BatchedTensor
    if type(input) is not BatchedTensor:
        return
    if any(r is not None and type(r) is not BatchedTensor for r in (running_mean, running_var)):
        raise RuntimeError(
            "Batch norm got a batched tensor as input while the running_mean or running_var, "
            "which will be updated in place, were not batched.\nIf you are using a module "
            "and do not need eval mode, please set `track_running_stats` to be False.If you "
            "are using a prebuilt module and do not need eval mode, please see the functorch "
            "website for resources on how to patch your module to work with vmap")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Normalise each channel (dim 1) over the batch and spatial dims: with the batch's
    statistics in training (updating ``running_mean`` / ``running_var`` in place with
    ``momentum``; the running variance is the unbiased one), with the running ones in
    evaluation.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> rm, rv = cr.zeros(2), cr.ones(2)
    >>> y = F.batch_norm(cr.tensor([[1., 2.], [3., 6.]]), rm, rv, training=True)
    >>> [[round(v, 3) for v in row] for row in y.tolist()]
    [[-1.0, -1.0], [1.0, 1.0]]
    >>> [round(v, 3) for v in rm.tolist()]
    [0.2, 0.4]
    """
    if momentum is None:
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not "
                        "NoneType")
    if _low_precision(input):                   # Note [low-precision normalisation]
        return batch_norm(input.float(), running_mean, running_var, _float(weight),
                          _float(bias), training, momentum, eps).to(input.dtype)
    channels = input.shape[1] if input.dim() > 1 else input.shape[0]
    _check_running("running_mean", running_mean, channels)
    _check_running("running_var", running_var, channels)
    if training:
        count = _per_channel_count(input)
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
        _check_vmapped_running(input, running_mean, running_var)
        _update_batch_stats(input, running_mean, running_var, momentum, count)
    elif running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    elif running_var is None:
        raise RuntimeError("running_var must be defined in evaluation mode")
    if input.dim() < 2 or input.is_complex():
        return _composite_batch_norm(input, running_mean, running_var, weight, bias, training,
                                     eps)
    return _native_batch_norm(input, weight, bias, running_mean, running_var, training, eps)


def _update_batch_stats(input, running_mean, running_var, momentum, count):
    """The running statistics' update with the batch's mean and unbiased variance."""
    if running_mean is None and running_var is None:
        return
    dims = (0,) + tuple(range(2, input.dim()))
    with _no_grad():      # in float64 for float32, as the reference's CPU kernel
        wide = input.double() if input.dtype == _dtypes.float32 else input
        _update_running(running_mean, wide.mean(dims), momentum)
        _update_running(running_var, wide.var(dims, correction=1), momentum)


def _composite_batch_norm(input, running_mean, running_var, weight, bias, training, eps):
    """batch_norm of a 1-D input (its channels are dim 0) as a composition of ops."""
    channels = input.shape[1] if input.dim() > 1 else input.shape[0]
    shape = (channels,) + (1,) * max(input.dim() - 2, 0)
    if training:
        y = _normalize(input, (0,) + tuple(range(2, input.dim())), eps)[0]
    else:
        y = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    return _affine(y, weight, bias, shape)


def _normalized_dims(input, normalized_shape, fn):
    if isinstance(normalized_shape, int):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of "
                        "ints, not int")
    shape = tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.dim() - k:]) != shape or input.dim() < k:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    return shape, tuple(range(input.dim() - k, input.dim()))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalise over the last ``len(normalized_shape)`` dims, then scale by ``weight``
    and shift by ``bias`` (both of ``normalized_shape``).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> [round(v, 3) for v in F.layer_norm(cr.tensor([[1., 3.]]), (2,))[0].tolist()]
    [-1.0, 1.0]
    """
    shape, dims = _normalized_dims(input, normalized_shape, "layer_norm")
    _check_layer_norm_params(input, shape, weight, bias)
    if input._data.dtype.kind in "buic":      # Note [kernels without a dtype]
        raise kernel_error("LayerNormKernelImpl")(input._data.dtype)
    if _low_precision(input):                   # Note [low-precision normalisation]
        return layer_norm(input.float(), shape, _float(weight), _float(bias), eps).to(
            input.dtype)
    return _native_layer_norm(input, weight, bias, len(shape), eps)


def _check_layer_norm_params(input, shape, weight, bias):
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        if tuple(p.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(p.shape)} and normalized_shape = "
                               f"{list(shape)}")
        if p.dtype != input.dtype and not _low_precision(input):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{_dtypes.scalar_type_name(input._data.dtype)}")


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x**2) + eps)`` over the last dims (eps: the dtype's machine
    epsilon by default), times ``weight``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> [round(v, 4) for v in F.rms_norm(cr.tensor([[3., 4.]]), (2,), eps=0.)[0].tolist()]
    [0.8485, 1.1314]
    """
    shape, dims = _normalized_dims(input, normalized_shape, "rms_norm")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    y = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return _affine(y, weight, None, shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalise each group of ``C / num_groups`` channels (with its spatial dims) per
    sample, then a per-channel affine map.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> [round(v, 3) for v in F.group_norm(cr.tensor([[1., 3., 5., 9.]]), 2)[0].tolist()]
    [-1.0, 1.0, -1.0, 1.0]
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    if _low_precision(input):                   # Note [low-precision normalisation]
        return group_norm(input.float(), num_groups, _float(weight), _float(bias), eps).to(
            input.dtype)
    if input.is_complex():
        grouped = input.reshape(n, num_groups, -1)
        y = _normalize(grouped, (2,), eps)[0].reshape(tuple(input.shape))
        return _affine(y, weight, bias, (c,) + (1,) * (input.dim() - 2))
    return _native_group_norm(input, weight, bias, num_groups, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """Normalise each channel of each sample over its spatial dims (with the running
    statistics instead when ``use_input_stats`` is False; updating them otherwise).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> [round(v, 3) for v in F.instance_norm(cr.tensor([[[1., 3.]]]))[0, 0].tolist()]
    [-1.0, 1.0]
    """
    n, c = input.shape[0], input.shape[1]
    if use_input_stats and int(np.prod(input.shape[2:])) <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{input.shape}")
    _check_running("running_mean", running_mean, c)
    _check_running("running_var", running_var, c)
    # the reference's form: a batch norm of one sample with N * C channels
    folded = input.reshape((1, n * c) + tuple(input.shape[2:]))
    stats = [None if r is None else r.repeat(n) for r in (running_mean, running_var)]
    y = batch_norm(folded, stats[0], stats[1], _repeat(weight, n), _repeat(bias, n),
                   use_input_stats, momentum, eps)
    with _no_grad():
        for running, folded_stat in zip((running_mean, running_var), stats):
            if running is not None and use_input_stats:
                running.copy_(folded_stat.reshape(n, c).mean(0))
    return y.view(tuple(input.shape))


def _repeat(param, n):
    return None if param is None else param.repeat(n)


def local_response_norm(input, size, alpha=0.0001, beta=0.75, k=1.0):
    """``x / (k + alpha * mean of x**2 over a window of `size` channels) ** beta`` (the
    window is centred, zero-padded at the ends).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.local_response_norm(cr.ones(1, 3, 1), 2, alpha=1., beta=1., k=0.).tolist()
    [[[2.0], [1.0], [1.0]]]
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} "
                         f"dimensions)")
    if input.numel() == 0:
        return input
    from ._pad import pad
    sq = input * input
    c = input.shape[1]
    padding = [0, 0] * (input.dim() - 2) + [size // 2, (size - 1) // 2]
    padded = pad(sq, padding)
    window = padded.narrow(1, 0, c)
    for i in range(1, size):
        window = window + padded.narrow(1, i, c)
    return input / (window * (alpha / size) + k) ** beta


def top_level_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                         eps, cudnn_enabled):
    """``chainrule.batch_norm``: the reference's top-level argument order.

    >>> import chainrule as cr
    >>> cr.batch_norm(cr.zeros(2, 1), None, None, cr.zeros(1), cr.ones(1), False, 0.1, 0.,
    ...               False).tolist()
    [[0.0], [0.0]]
    """
    return batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def top_level_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                            momentum, eps, cudnn_enabled):
    """``chainrule.instance_norm``: the reference's top-level argument order.

    >>> import chainrule as cr
    >>> cr.instance_norm(cr.zeros(1, 1, 2), None, None, None, None, True, 0.1, 1e-5,
    ...                  False).tolist()
    [[[0.0, 0.0]]]
    """
    return instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                         momentum, eps)


def top_level_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
                         cudnn_enable=True):
    """``chainrule.layer_norm`` (the reference's top-level form).

    >>> import chainrule as cr
    >>> cr.layer_norm(cr.zeros(1, 2), (2,)).tolist()
    [[0.0, 0.0]]
    """
    return layer_norm(input, normalized_shape, weight, bias, eps)


def top_level_group_norm(input, num_groups, weight=None, bias=None, eps=1e-05,
                         cudnn_enabled=True):
    """``chainrule.group_norm`` (the reference's top-level form).

    >>> import chainrule as cr
    >>> cr.group_norm(cr.zeros(1, 2, 2), 1).tolist()
    [[[0.0, 0.0], [0.0, 0.0]]]
    """
    return group_norm(input, num_groups, weight, bias, eps)


TOP_LEVEL = {"batch_norm": top_level_batch_norm, "instance_norm": top_level_instance_norm,
             "layer_norm": top_level_layer_norm, "group_norm": top_level_group_norm,
             "rms_norm": rms_norm}


__all__ = ["batch_norm", "layer_norm", "rms_norm", "group_norm", "instance_norm",
           "local_response_norm"]
