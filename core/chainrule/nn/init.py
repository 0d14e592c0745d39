"""``nn.init``: fill a tensor in place with values from a distribution or a scheme
(Kaiming, Xavier, orthogonal, ...), under no_grad, as torch's functions do. Random
values come from chainrule's generator (``chainrule.manual_seed``).

>>> import chainrule as cr
>>> w = cr.empty(3, 5)
>>> _ = cr.nn.init.kaiming_uniform_(w, nonlinearity="relu")
>>> bool((w.abs() <= (6 / 5) ** 0.5).all())
True
"""
import math
import warnings

import numpy as _np

from .._grad_mode import no_grad as _no_grad
from .. import _random
from .. import _cpu_stream
from .._tensor import Tensor, asarray as _asarray, zeros_on as _zeros_on

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]


def _fill(tensor, values):
    """Write ``values`` (an ndarray of the tensor's shape) into ``tensor`` in place."""
    with _no_grad():
        tensor.copy_(Tensor._wrap(_asarray(values).astype(tensor._data.dtype, copy=False)))
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for an activation (torch's table): 1 for linear and
    sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu,
    3/4 for selu.

    >>> import chainrule as cr
    >>> round(cr.nn.init.calculate_gain("leaky_relu", 0.2), 4)
    1.3868
    """
    linear = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d"]
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive = int(_np.prod(tensor.shape[2:])) if tensor.dim() > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with samples of U(a, b).

    >>> import chainrule as cr
    >>> bool((cr.nn.init.uniform_(cr.empty(10), -1, 1).abs() <= 1).all())
    True
    """
    with _no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with samples of N(mean, std^2).

    >>> import chainrule as cr
    >>> cr.nn.init.normal_(cr.empty(2, 3), std=0.02).shape
    chainrule.Size([2, 3])
    """
    with _no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with samples of N(mean, std^2) truncated to [a, b], the reference's way
    (Note [truncated normal by rejection]).

    >>> import chainrule as cr
    >>> bool((cr.nn.init.trunc_normal_(cr.empty(100), a=-1, b=1).abs() <= 1).all())
    True
    """
    if tensor.is_meta:               # nothing to fill, nothing drawn (Note [meta arrays])
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    cdf = lambda x: (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0   # noqa: E731
    with _no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            result = _redraw_outside(tensor, mean, std, a, b, generator)
        else:
            result = _uniform_rejection(tensor, mean, std, a, b, generator)
        if result is not tensor:
            tensor.copy_(result)
    return tensor


def _redraw_outside(tensor, mean, std, a, b, generator):
    """Note [truncated normal by rejection]
    The reference samples a truncated normal by rejection, drawing as it does so that a
    seeded program gets its numbers: when [a, b] holds more than 0.3 of the mass, normal
    samples, every one outside [a, b] (bounds in the dtype) replaced from a fresh full
    draw, until none is; else uniform candidates on [a, b], each accepted when the log
    of a fresh uniform does not exceed its log density relative to the peak, the
    pending ones redrawn (both draws full-size) until none is pending.
    """
    low, high = (tensor.new_tensor(v).item() for v in (a, b))
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        outside = (result < low) | (result > high)
        if not outside.any():
            return result
        fresh = _empty_like(result).normal_(mean, std, generator=generator)
        result = _where(outside, fresh, result)


def _log_density(candidates, mean, std, log_peak):
    return ((candidates - mean) / std).pow(2).mul(-0.5).sub(log_peak)


def _uniform_rejection(tensor, mean, std, a, b, generator):
    """The uniform-candidate branch of Note [truncated normal by rejection]."""
    log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2
    result = tensor.uniform_(a, b, generator=generator)
    accept_buf = _empty_like(tensor)
    pending = accept_buf.uniform_(generator=generator).log() > _log_density(
        result, mean, std, log_peak)
    while pending.any():
        candidates = _empty_like(tensor).uniform_(a, b, generator=generator)
        result = _where(pending, candidates, result)
        rejected = accept_buf.uniform_(generator=generator).log() > _log_density(
            candidates, mean, std, log_peak)
        pending = _where(pending, rejected, pending)
    return result


def _empty_like(tensor):
    from .._factories import empty_like
    return empty_like(tensor)


def _where(condition, x, y):
    from .._ops.elementwise import where
    return where(condition, x, y)


def constant_(tensor, val):
    """Fill with ``val``.

    >>> import chainrule as cr
    >>> cr.nn.init.constant_(cr.empty(2), 0.5).tolist()
    [0.5, 0.5]
    """
    return _fill(tensor, _zeros_on(tuple(tensor.shape), _np.float64, tensor._data) + val)


def ones_(tensor):
    """Fill with ones.

    >>> import chainrule as cr
    >>> cr.nn.init.ones_(cr.empty(2)).tolist()
    [1.0, 1.0]
    """
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill with zeros.

    >>> import chainrule as cr
    >>> cr.nn.init.zeros_(cr.empty(2)).tolist()
    [0.0, 0.0]
    """
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix.

    >>> import chainrule as cr
    >>> cr.nn.init.eye_(cr.empty(2, 3)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:               # nothing to fill, nothing drawn (Note [meta arrays])
        return tensor
    return _fill(tensor, _np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta (the convolution
    keeps its input's channels), per group.

    >>> import chainrule as cr
    >>> w = cr.nn.init.dirac_(cr.empty(2, 2, 3, 3))
    >>> w[0, 0, 1, 1].item(), w[0, 1, 1, 1].item()
    (1.0, 0.0)
    """
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tuple(tensor.shape)
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if tensor.is_meta:               # nothing to fill, nothing drawn (Note [meta arrays])
        return tensor
    out_per_group = shape[0] // groups
    values = _np.zeros(shape)
    centre = tuple(k // 2 for k in shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, shape[1])):
            values[(g * out_per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).

    >>> import chainrule as cr
    >>> bool((cr.nn.init.xavier_uniform_(cr.empty(4, 4)).abs() <= 6 ** 0.5 / 8 ** 0.5).all())
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * (gain * math.sqrt(2.0 / float(fan_in + fan_out)))   # torch's order
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> import chainrule as cr
    >>> cr.nn.init.xavier_normal_(cr.empty(3, 4)).shape
    chainrule.Size([3, 4])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-b, b) with b = gain * sqrt(3 / fan) (fan by ``mode``).

    >>> import chainrule as cr
    >>> cr.nn.init.kaiming_uniform_(cr.empty(3, 4), a=5 ** 0.5).shape
    chainrule.Size([3, 4])
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * (calculate_gain(nonlinearity, a) / math.sqrt(fan))  # torch's order
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std^2) with std = gain / sqrt(fan).

    >>> import chainrule as cr
    >>> cr.nn.init.kaiming_normal_(cr.empty(3, 4), mode="fan_out", nonlinearity="relu").shape
    chainrule.Size([3, 4])
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix (the trailing dimensions flattened), times ``gain``.

    >>> import chainrule as cr
    >>> w = cr.nn.init.orthogonal_(cr.empty(3, 5))
    >>> bool(((w @ w.T) - cr.eye(3)).abs().max() < 1e-5)
    True
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    if tensor.is_meta:               # nothing to fill, nothing drawn (Note [meta arrays])
        return tensor
    flat = _cpu_stream.normal(_random.cpu_generator(generator), (rows, cols),
                              tensor._data.dtype).astype(_np.float64)
    if rows < cols:
        flat = flat.T
    q, r = _np.linalg.qr(flat)
    q = q * _np.sign(_np.diag(r))           # a uniform draw from the orthogonal group
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tuple(tensor.shape)))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor with N(0, std^2) entries and a fraction ``sparsity`` of each column
    zero.

    >>> import chainrule as cr
    >>> w = cr.nn.init.sparse_(cr.empty(10, 3), sparsity=0.5)
    >>> int((w == 0).sum())
    15
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    if tensor.is_meta:               # nothing to fill, nothing drawn (Note [meta arrays])
        return tensor
    gen = _random.cpu_generator(generator)
    values = _cpu_stream.normal(gen, (rows, cols), tensor._data.dtype, 0.0, std)
    zeros = int(math.ceil(sparsity * rows))
    for col in range(cols):
        values[_cpu_stream.randperm(gen, rows)[:zeros], col] = 0
    return _fill(tensor, values)


def _deprecated(new):
    def old(*args, **kwargs):
        warnings.warn(f"nn.init.{new.__name__[:-1]} is now deprecated in favor of "
                      f"nn.init.{new.__name__}.", FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    old.__name__ = new.__name__[:-1]
    old.__doc__ = f"Deprecated alias of ``{new.__name__}``."
    return old


uniform, normal, constant = _deprecated(uniform_), _deprecated(normal_), _deprecated(constant_)
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
orthogonal, sparse = _deprecated(orthogonal_), _deprecated(sparse_)
eye, dirac = _deprecated(eye_), _deprecated(dirac_)
