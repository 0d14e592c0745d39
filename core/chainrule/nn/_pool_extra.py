"""The 3-D forms pooling lacked (max_unpool3d, lp_pool3d, the ``_with_indices``
spellings of 3-D max pooling), fractional max pooling, native_channel_shuffle.

Note [fractional max pooling]
    Fractional max pooling (Graham, 2014) takes one window of ``kernel_size`` per
    output position, starting at pseudo-random offsets: for each (sample, channel)
    plane and each spatial dim a number ``u`` in [0, 1) (``_random_samples``, drawn
    by ``rand`` when not given) sets the starts ``int((i + u) * a) - int(u * a)``
    with ``a = (in - k) / (out - 1)``; the last window ends at the input's edge.
    The starts differ per plane, so the windows' flat positions form an index
    (N, C, outputs * taps) for ``gather``; ``max_dim`` over the taps gives the
    values and which tap won. Both are table ops: gradients come from their entries.
"""
import numpy as np

from .._ops._common import FUNCTIONS as _FUNCTIONS
from .. import _dtypes, _factories, _grad_mode
from . import _misc, _pool


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool3d`: each value goes back to the flat
    position ``indices`` gives, zeros elsewhere.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> out, idx = F.max_pool3d(cr.arange(8.).reshape(1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(out, idx, 2).flatten().tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0]
    """
    return _misc._max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over each window of x**p) ** (1/p)`` over the last three dims
    (``norm_type`` inf / -inf: max / min of ``|x|``).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.lp_pool3d(cr.ones(1, 2, 2, 2), 2, 2).flatten().tolist()
    [2.8284270763397217]
    """
    kd, kh, kw = _pool._tuple(kernel_size, 3, "kernel_size")
    if norm_type == float("inf"):
        return _pool.max_pool3d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -_pool.max_pool3d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = _pool.avg_pool3d(input ** norm_type, kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu() * (kd * kh * kw)) ** (1.0 / norm_type)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """:func:`max_pool3d` returning (values, indices).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.max_pool3d_with_indices(cr.arange(8.).reshape(1, 2, 2, 2), 2)[1].flatten().tolist()
    [7]
    """
    return _pool.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool3d` returning (values, indices).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_max_pool3d_with_indices(cr.arange(8.).reshape(1, 2, 2, 2), 1)[1].tolist()
    [[[[7]]]]
    """
    return _pool.adaptive_max_pool3d(input, output_size, True)


def native_channel_shuffle(input, groups):
    """:func:`channel_shuffle` (torch's kernel-level spelling): (N, C, *) with C = g * k
    channels reordered as (k, g).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.native_channel_shuffle(cr.arange(4.).reshape(1, 4, 1), 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    return _misc.channel_shuffle(input, groups)


# --- fractional max pooling (Note [fractional max pooling]) ------------------------------------
_NP = {_dtypes.float32: np.float32, _dtypes.float64: np.float64}
_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _window_starts(u, size, out, k):
    """The start of each of ``out`` windows of ``k`` along a dim of ``size`` for the
    draws ``u`` (a (planes,) tensor): a (planes, out) int64 tensor, on u's device."""
    last = _factories.full((u.shape[0], 1), size - k, dtype=_dtypes.int64, device=u.device)
    if out == 1:
        return last
    # in the draws' dtype (float32 for float32 input), as the reference computes
    alpha = float(np.array(size - k, _NP[u.dtype]) / np.array(out - 1, _NP[u.dtype]))
    i = _factories.arange(out - 1, dtype=u.dtype, device=u.device)
    u = u.unsqueeze(1)
    starts = ((i + u) * alpha).long() - (u * alpha).long()
    return _FUNCTIONS["cat"]([starts, last], 1)


def _fractional_index(draws, sizes, outs, kernel):
    """(planes, prod(outs) * prod(kernel)) flat input positions of every window's taps.
    ``draws`` (planes, n) holds one draw per dim, the last dim's first for 2-D."""
    n = len(sizes)
    order = (1, 0) if n == 2 else (0, 1, 2)        # which draw serves which dim
    flat = None
    for d in range(n):
        starts = _window_starts(draws.select(1, order[d]), sizes[d], outs[d], kernel[d])
        taps = _factories.arange(kernel[d], dtype=_dtypes.int64, device=draws.device)
        pos = starts.unsqueeze(2) + taps                              # (planes, out, k)
        shape = [pos.shape[0]] + [1] * (2 * n)
        shape[1 + d], shape[1 + n + d] = outs[d], kernel[d]
        pos = pos.reshape(shape)
        flat = pos if flat is None else flat * sizes[d] + pos
    return flat.reshape(draws.shape[0], -1)


def _fractional_sizes(name, input, n, kernel_size, output_size, output_ratio):
    kernel = _pool._tuple(kernel_size, n, "kernel_size")
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    sizes = tuple(input.shape)[-n:]
    if output_size is None:
        ratio = (output_ratio,) * n if isinstance(output_ratio, (int, float)) else \
            _pool._tuple(output_ratio, n, "output_ratio")
        output_size = [int(s * r) for s, r in zip(sizes, ratio)]
    outs = _pool._tuple(output_size, n, "output_size")
    where = name + ("()" if n == 2 else "_out()")
    for dim, s, o, k in zip(_DIM_NAMES[n], sizes, outs, kernel):
        if o + k - 1 > s:
            raise RuntimeError(f"{where}: pool {dim} {k} too large relative to input {dim} {s}")
    return kernel, sizes, tuple(outs)


def _draws(name, x, n, samples):
    """The (planes, n) draws on x's device: ``samples``, checked, or new ones."""
    if samples is None:
        samples = _factories.rand(x.shape[0], x.shape[1], n, dtype=x.dtype, device=x.device)
    elif samples.shape[1] != x.shape[1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    elif samples.requires_grad and _grad_mode.is_grad_enabled():
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to "
                           "argument 'random_samples'. This input cannot have requires_grad "
                           "True.")
    draws = samples.detach().to(x.device).reshape(-1, n)
    return draws if draws.dtype in _NP else draws.float()


def _fractional_max_pool(name, n, input, kernel_size, output_size, output_ratio,
                         return_indices, samples):
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    kernel, sizes, outs = _fractional_sizes(name, input, n, kernel_size, output_size,
                                            output_ratio)
    x = input.unsqueeze(0) if input.dim() == n + 1 else input
    batch, channels = x.shape[0], x.shape[1]
    draws = _draws(name, x, n, samples)
    index = _fractional_index(draws, sizes, outs, kernel).reshape(batch, channels, -1)
    taps = int(np.prod(kernel))
    picked = _FUNCTIONS["gather"](x.reshape(batch, channels, -1), 2, index)
    values, which = _FUNCTIONS["max"](picked.reshape(batch, channels, -1, taps), 3)
    positions = index.reshape(batch, channels, -1, taps).gather(3, which.unsqueeze(3))
    shape = (batch, channels) + outs
    values, positions = values.reshape(shape), positions.reshape(shape)
    if input.dim() == n + 1:
        values, positions = values.squeeze(0), positions.squeeze(0)
    return (values, positions) if return_indices else values


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """:func:`fractional_max_pool2d` returning (values, indices).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> x = cr.arange(16.).reshape(1, 1, 4, 4)
    >>> F.fractional_max_pool2d_with_indices(x, 2, 2, _random_samples=cr.zeros(1, 1, 2))[1]
    tensor([[[[ 5,  7],
              [13, 15]]]])
    """
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size,
                                output_ratio, True, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-D fractional max pooling of (N, C, H, W) or (C, H, W) input: windows of
    ``kernel_size`` at pseudo-random starts giving ``output_size`` (or
    ``output_ratio`` of the input) outputs (Note [fractional max pooling]).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.fractional_max_pool2d(cr.randn(1, 3, 8, 8), 3, output_ratio=0.5).shape
    chainrule.Size([1, 3, 4, 4])
    """
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """:func:`fractional_max_pool3d` returning (values, indices).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> x = cr.arange(8.).reshape(1, 1, 2, 2, 2)
    >>> F.fractional_max_pool3d_with_indices(x, 2, 1)[1].flatten().tolist()
    [7]
    """
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size,
                                output_ratio, True, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling of (N, C, T, H, W) or (C, T, H, W) input (see
    :func:`fractional_max_pool2d`).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.fractional_max_pool3d(cr.randn(2, 6, 6, 6), 2, output_size=3).shape
    chainrule.Size([2, 3, 3, 3])
    """
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


__all__ = ["max_unpool3d", "lp_pool3d", "max_pool3d_with_indices",
           "adaptive_max_pool3d_with_indices", "native_channel_shuffle",
           "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]
