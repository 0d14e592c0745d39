"""Pooling: max/avg (1-D, 2-D and 3-D, with padding, dilation, ceil_mode), adaptive
avg/max, lp pooling: argument checks and the reference's errors here; the 2-D and 3-D
poolings are table ops recorded as the reference's nodes (Note [pooling windows] in
chainrule/_ops/pooling.py); 1-D ones are the 2-D op over an unsqueezed input.
"""
import math

import numpy as np

from .._ops import pooling as _pooling


def _tuple(value, n, name):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"{name} must either be a single int, or a tuple of {n} ints")
    return value


def _geometry(name, shape, kernel, stride, padding, dilation, ceil_mode, effective=True):
    """Output sizes and per-dim tap tables of a pooling over the last len(kernel) dims."""
    if min(stride) == 0:
        raise RuntimeError("stride should not be zero")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[-1]}")
    for k, p, d in zip(kernel, padding, dilation):
        if effective and p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
        if not effective and p > k // 2:
            raise RuntimeError(f"pad should be at most half of kernel size, but got pad={p} "
                               f"and kernel_size={k}")
    sizes = shape[-len(kernel):]
    outs = [_pooling.out_size(n, k, s, p, d, ceil_mode)
            for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation)]
    if min(outs) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, shape[-3:]))}). Calculated "
                           f"output size: ({'x'.join(map(str, shape[-3:-2] + tuple(outs)))}). "
                           "Output size is too small")


def _batched(name, input, spatial):
    if input.dim() not in (spatial + 1, spatial + 2) or \
            any(s == 0 for s in tuple(input.shape)[-spatial - 1:]):
        raise RuntimeError(f"non-empty {spatial + 1}D or {spatial + 2}D (batch mode) tensor "
                           "expected for input")
    return (input.unsqueeze(0), True) if input.dim() == spatial + 1 else (input, False)


def _unbatch(t, unbatched):
    return t.squeeze(0) if unbatched else t


def _max_pool(name, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
              n):
    x, _ = _batched(name, input, n)
    kernel = _tuple(kernel_size, n, f"{name}: kernel_size")
    stride = kernel if stride is None or stride == [] or stride == () else \
        _tuple(stride, n, f"{name}: stride")
    padding, dilation = _tuple(padding, n, f"{name}: padding"), \
        _tuple(dilation, n, f"{name}: dilation")
    _geometry(name, tuple(x.shape), kernel, stride, padding, dilation, ceil_mode)
    out, indices = _pooling.max_pool(input, n, kernel, stride, padding, dilation, ceil_mode)
    return (out, indices) if return_indices else out


def _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    return _max_pool("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, 2)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The maximum over each (dilated) window of (N, C, H, W) or (C, H, W) input
    (padding counts as -inf); ``return_indices`` also gives each maximum's flat
    position in its input plane.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.max_pool2d(cr.arange(16.).reshape(1, 4, 4), 2).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """
    return _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _as_2d(input, name):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"{name}: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got:{list(input.shape)}")
    return input.unsqueeze(-2)


def _first(value):
    return value if isinstance(value, int) else tuple(value)[0]


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """:func:`max_pool2d` over the last dim of (N, C, L) or (C, L) input.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.max_pool1d(cr.tensor([[1., 3., 2., 0.]]), 2).tolist()
    [[3.0, 2.0]]
    """
    x = _as_2d(input, "max_pool1d")
    stride = None if stride is None or stride == [] or stride == () else (1, _first(stride))
    out = _max_pool2d(x, (1, _first(kernel_size)), stride, (0, _first(padding)),
                      (1, _first(dilation)), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def _avg_pool(name, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, n):
    x, _ = _batched(name, input, n)
    kernel = _tuple(kernel_size, n, f"{name}: kernel_size")
    stride = kernel if stride is None or stride == [] or stride == () else \
        _tuple(stride, n, f"{name}: stride")
    padding = _tuple(padding, n, f"{name}: padding")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _geometry(name, tuple(x.shape), kernel, stride, padding, (1,) * n, ceil_mode,
              effective=False)
    return _pooling.avg_pool(input, n, kernel, stride, padding, ceil_mode, count_include_pad,
                             divisor_override)


def _avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    return _avg_pool("avg_pool2d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override, 2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean over each window of (N, C, H, W) or (C, H, W) input; padded positions
    count in the divisor when ``count_include_pad``; ``divisor_override`` replaces it.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.avg_pool2d(cr.arange(16.).reshape(1, 4, 4), 2).tolist()
    [[[2.5, 4.5], [10.5, 12.5]]]
    """
    return _avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """:func:`avg_pool2d` over the last dim of (N, C, L) or (C, L) input.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.avg_pool1d(cr.tensor([[1., 3., 2., 0.]]), 2).tolist()
    [[2.0, 1.0]]
    """
    x = _as_2d(input, "avg_pool1d")
    stride = None if stride is None or stride == [] or stride == () else (1, _first(stride))
    return _avg_pool2d(x, (1, _first(kernel_size)), stride, (0, _first(padding)), ceil_mode,
                       count_include_pad, None).squeeze(-2)


# --- adaptive pooling -------------------------------------------------------------------------
def _output_size(output_size, shape, n):
    sizes = _tuple(output_size, n, "output_size")
    return tuple(shape[-n + i] if s is None else s for i, s in enumerate(sizes))


def _adaptive_avg(name, input, output_size, n):
    """The reference's choice: a mean over the pooled dims for an output of ones."""
    _check_adaptive(name, input, n)
    outs = _output_size(output_size, tuple(input.shape), n)
    if all(o == 1 for o in outs):
        return input.mean(tuple(range(-n, 0)), keepdim=True)
    return _pooling.adaptive_avg_pool(input, n, outs)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed ``output_size`` (window i of n over size L spans
    ``[floor(i L / n), ceil((i + 1) L / n))``); None keeps a dim's size.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_avg_pool2d(cr.arange(16.).reshape(1, 4, 4), 1).tolist()
    [[[7.5]]]
    """
    return _adaptive_avg("adaptive_avg_pool2d", input, output_size, 2)


def adaptive_avg_pool1d(input, output_size):
    """:func:`adaptive_avg_pool2d` over the last dim of (N, C, L) or (C, L) input.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_avg_pool1d(cr.tensor([[1., 3., 2.]]), 2).tolist()
    [[2.0, 2.5]]
    """
    _check_adaptive("adaptive_avg_pool1d", input, 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _first(output_size))).squeeze(-2)


def _check_adaptive(name, input, spatial):
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got "
                           f"{list(input.shape)}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")


def _adaptive_max(name, input, output_size, return_indices, n):
    _check_adaptive(name, input, n)
    outs = _output_size(output_size, tuple(input.shape), n)
    out, indices = _pooling.adaptive_max_pool(input, n, outs)
    return (out, indices) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed ``output_size`` (the windows of
    :func:`adaptive_avg_pool2d`); ``return_indices`` as in :func:`max_pool2d`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_max_pool2d(cr.arange(16.).reshape(1, 4, 4), 1).tolist()
    [[[15.0]]]
    """
    return _adaptive_max("adaptive_max_pool2d", input, output_size, return_indices, 2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool2d` over the last dim of (N, C, L) or (C, L) input.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_max_pool1d(cr.tensor([[1., 3., 2.]]), 2).tolist()
    [[3.0, 3.0]]
    """
    _check_adaptive("adaptive_max_pool1d", input, 1)
    out = adaptive_max_pool2d(input.unsqueeze(-2), (1, _first(output_size)), return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


# --- lp pooling -------------------------------------------------------------------------------
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over each window of x**p) ** (1/p)``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.lp_pool2d(cr.ones(1, 2, 2), 2, 2).tolist()
    [[[2.0]]]
    """
    kh, kw = _tuple(kernel_size, 2, "kernel_size")
    out = avg_pool2d(input ** norm_type, (kh, kw), stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu() * (kh * kw)) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """:func:`lp_pool2d` over the last dim.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.lp_pool1d(cr.ones(1, 4), 1, 2).tolist()
    [[2.0, 2.0]]
    """
    out = avg_pool1d(input ** norm_type, kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu() * _first(kernel_size)) ** (1.0 / norm_type)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """:func:`max_pool2d` over the last three dims of (N, C, D, H, W) or (C, D, H, W)
    input.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.max_pool3d(cr.arange(8.).reshape(1, 2, 2, 2), 2).flatten().tolist()
    [7.0]
    """
    return _max_pool("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, 3)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """:func:`avg_pool2d` over the last three dims of (N, C, D, H, W) or (C, D, H, W)
    input.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.avg_pool3d(cr.arange(8.).reshape(1, 2, 2, 2), 2).flatten().tolist()
    [3.5]
    """
    return _avg_pool("avg_pool3d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override, 3)


def adaptive_avg_pool3d(input, output_size):
    """:func:`adaptive_avg_pool2d` over the last three dims.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_avg_pool3d(cr.arange(8.).reshape(1, 2, 2, 2), 1).flatten().tolist()
    [3.5]
    """
    return _adaptive_avg("adaptive_avg_pool3d", input, output_size, 3)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool2d` over the last three dims.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_max_pool3d(cr.arange(8.).reshape(1, 2, 2, 2), 1).flatten().tolist()
    [7.0]
    """
    return _adaptive_max("adaptive_max_pool3d", input, output_size, return_indices, 3)


__all__ = ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d", "lp_pool1d",
           "lp_pool2d"]
