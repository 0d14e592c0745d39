"""Pooling: max/avg (1-D and 2-D, with padding, dilation, ceil_mode), adaptive avg/max,
lp pooling.

Note [pooling by gathered windows]
    A pooled output is a reduction over a window of the (padded) input. The windows'
    flat input positions are computed once as an index table (outputs x taps); the
    input, padded by ``constant_pad_nd`` (-inf for max, 0 for average), is gathered
    with ``index_select`` and reduced with ``max_dim`` / ``sum_dim``. Every step is a
    table op, so the gradients (scattered back through index_select's index_add),
    double backward and tangents come from those entries. Adaptive average pooling is
    a product with averaging matrices instead (one matmul per pooled dim).
"""
import math

import numpy as np

from .._ops import nn as _nn
from .._ops._common import FUNCTIONS as _FUNCTIONS
from .._ops._registry import apply_op as _apply_op
from .._tensor import Tensor as _Tensor, on_device_of


def _tuple(value, n, name):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"{name} must either be a single int, or a tuple of {n} ints")
    return value


def _out_size(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1                 # the last window must start inside the input or left pad
    return out


def _taps(out, k, s, d):
    """(out, k) positions in the padded input along one dim."""
    return np.arange(out)[:, None] * s + np.arange(k)[None, :] * d


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
    outs = [_out_size(n, k, s, p, d, ceil_mode)
            for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation)]
    if min(outs) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, shape[-3:]))}). Calculated "
                           f"output size: ({'x'.join(map(str, shape[-3:-2] + tuple(outs)))}). "
                           "Output size is too small")
    return outs, [_taps(o, k, s, d) for o, k, s, d in zip(outs, kernel, stride, dilation)]


def _pad_for(x, taps, padding, value):
    """Pad the pooled dims: ``padding`` before, and after enough to cover every tap."""
    pads = []
    for i, (t, p) in enumerate(zip(taps, padding)):
        size = x.shape[x.dim() - len(taps) + i]
        pads.append((p, max(p, int(t.max()) + 1 - size - p) if t.size else p))
    pairs = ((0, 0),) * (x.dim() - len(taps)) + tuple(pads)
    return _apply_op(_nn.CONSTANT_PAD, (x,), {"pads": pairs, "value": value}), pads


def _flat_windows(taps, widths):
    """(outputs, taps) flat positions in the padded input from per-dim tap tables
    (outputs and taps each in row-major order over the pooled dims)."""
    n = len(taps)
    index = np.zeros((1,) * (2 * n), np.int64)
    for d, t in enumerate(taps):
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = t.shape
        index = index + t.reshape(shape) * int(np.prod(widths[d + 1:], dtype=np.int64))
    outputs = int(np.prod([t.shape[0] for t in taps]))
    return index.reshape(outputs, -1)


def _gather(x, index):
    """x (N, C, *spatial) -> (N, C, outputs, taps) at the flat positions ``index``."""
    n, c = x.shape[0], x.shape[1]
    flat = x.reshape(n, c, -1)
    positions = _Tensor._wrap(on_device_of(index.reshape(-1), x._data))     # a constant
    picked = _FUNCTIONS["index_select"](flat, 2, positions)
    return picked.reshape(n, c, index.shape[0], index.shape[1])


def _batched(name, input, spatial):
    if input.dim() not in (spatial + 1, spatial + 2) or \
            any(s == 0 for s in tuple(input.shape)[-spatial - 1:]):
        raise RuntimeError(f"non-empty {spatial + 1}D or {spatial + 2}D (batch mode) tensor "
                           "expected for input")
    return (input.unsqueeze(0), True) if input.dim() == spatial + 1 else (input, False)


def _unbatch(t, unbatched):
    return t.squeeze(0) if unbatched else t


def _window_max(x, index, padded, pads, sizes, out_shape, return_indices):
    """The maximum of each window, and (if asked) its flat position in the unpadded
    input plane (the padded position ``padded`` sizes, shifted by the ``pads`` before)."""
    values, taps = _FUNCTIONS["max"](_gather(x, index), 3)
    out = values.reshape(out_shape)
    if not return_indices:
        return out, None
    index = on_device_of(index, taps._data)
    flat = np.take_along_axis(index[None, None], taps._data[..., None], axis=3)[..., 0]
    where = _unpadded_positions(flat, padded, pads, sizes)
    return out, _Tensor._wrap(where.reshape(out_shape).astype(np.int64))


def _unpadded_positions(flat, padded, pads, sizes):
    """Flat positions in the padded plane (``padded`` sizes) as flat positions in the
    input plane (``sizes``, the ``pads`` before removed), by arithmetic on ``flat``
    where it lives."""
    coords = []
    for n in reversed(padded):
        coords.append(flat % n)
        flat = flat // n
    where = 0
    for c, (before, _), n in zip(reversed(coords), pads, sizes):
        where = where * n + (c - before)
    return where


def _max_pool(name, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
              n):
    x, unbatched = _batched(name, input, n)
    kernel = _tuple(kernel_size, n, f"{name}: kernel_size")
    stride = kernel if stride is None or stride == [] or stride == () else \
        _tuple(stride, n, f"{name}: stride")
    padding, dilation = _tuple(padding, n, f"{name}: padding"), \
        _tuple(dilation, n, f"{name}: dilation")
    outs, taps = _geometry(name, tuple(x.shape), kernel, stride, padding, dilation, ceil_mode)
    padded, pads = _pad_for(x, taps, padding, -math.inf)
    padded_sizes = tuple(padded.shape)[2:]
    index = _flat_windows(taps, padded_sizes)
    shape = tuple(x.shape[:2]) + tuple(outs)
    out, indices = _window_max(padded, index, padded_sizes, pads, tuple(x.shape)[2:], shape,
                               return_indices)
    if return_indices:
        return _unbatch(out, unbatched), _unbatch(indices, unbatched)
    return _unbatch(out, unbatched)


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


def _avg_divisor(taps, sizes, padding, count_include_pad):
    """Per output position: how many taps fall inside the padded (or the real) input."""
    counts = []
    for t, n, p in zip(taps, sizes, padding):
        lo, hi = (0, n + 2 * p) if count_include_pad else (p, n + p)
        start, stop = t[:, 0], np.minimum(t[:, -1] + 1, n + 2 * p)
        counts.append(np.maximum(np.minimum(stop, hi) - np.maximum(start, lo), 0))
    divisor = counts[0]
    for c in counts[1:]:
        divisor = np.multiply.outer(divisor, c)
    return divisor


def _avg_pool(name, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, n):
    x, unbatched = _batched(name, input, n)
    kernel = _tuple(kernel_size, n, f"{name}: kernel_size")
    stride = kernel if stride is None or stride == [] or stride == () else \
        _tuple(stride, n, f"{name}: stride")
    padding = _tuple(padding, n, f"{name}: padding")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    outs, taps = _geometry(name, tuple(x.shape), kernel, stride, padding, (1,) * n, ceil_mode,
                           effective=False)
    padded, _ = _pad_for(x, taps, padding, 0.0)
    index = _flat_windows(taps, tuple(padded.shape)[2:])
    total = _gather(padded, index).sum(3).reshape(tuple(x.shape[:2]) + tuple(outs))
    if divisor_override is not None:
        return _unbatch(total / divisor_override, unbatched)
    divisor = _avg_divisor(taps, tuple(x.shape)[2:], padding, count_include_pad)
    divisor = on_device_of(divisor.astype(x._data.dtype), x._data)
    return _unbatch(total / _Tensor._wrap(divisor), unbatched)


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
def _adaptive_bounds(size, out):
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _averaging_matrix(size, out, dtype):
    start, stop = _adaptive_bounds(size, out)
    cols = np.arange(size)
    inside = (cols[None, :] >= start[:, None]) & (cols[None, :] < stop[:, None])
    return _Tensor._wrap((inside / (stop - start)[:, None]).astype(dtype))


def _output_size(output_size, shape, n):
    sizes = _tuple(output_size, n, "output_size")
    return tuple(shape[-n + i] if s is None else s for i, s in enumerate(sizes))


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed ``output_size`` (window i of n over size L spans
    ``[floor(i L / n), ceil((i + 1) L / n))``); None keeps a dim's size.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_avg_pool2d(cr.arange(16.).reshape(1, 4, 4), 1).tolist()
    [[[7.5]]]
    """
    _check_adaptive("adaptive_avg_pool2d", input, 2)
    oh, ow = _output_size(output_size, tuple(input.shape), 2)
    dtype = input._data.dtype
    rows = _averaging_matrix(input.shape[-2], oh, dtype).to(input.device)
    cols = _averaging_matrix(input.shape[-1], ow, dtype).to(input.device)
    matmul = _FUNCTIONS["matmul"]
    return matmul(matmul(rows, input), cols.transpose(0, 1))


def adaptive_avg_pool1d(input, output_size):
    """:func:`adaptive_avg_pool2d` over the last dim of (N, C, L) or (C, L) input.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_avg_pool1d(cr.tensor([[1., 3., 2.]]), 2).tolist()
    [[2.0, 2.5]]
    """
    _check_adaptive("adaptive_avg_pool1d", input, 1)
    (out,) = _output_size(output_size, tuple(input.shape), 1)
    cols = _averaging_matrix(input.shape[-1], out, input._data.dtype).to(input.device)
    return _FUNCTIONS["matmul"](input, cols.transpose(0, 1))


def _check_adaptive(name, input, spatial):
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got "
                           f"{list(input.shape)}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")


def _adaptive_taps(size, out):
    """(out, longest window) positions; short windows repeat their last position."""
    start, stop = _adaptive_bounds(size, out)
    width = int((stop - start).max()) if out else 0
    taps = start[:, None] + np.arange(width)[None, :]
    return np.minimum(taps, stop[:, None] - 1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed ``output_size`` (the windows of
    :func:`adaptive_avg_pool2d`); ``return_indices`` as in :func:`max_pool2d`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_max_pool2d(cr.arange(16.).reshape(1, 4, 4), 1).tolist()
    [[[15.0]]]
    """
    _check_adaptive("adaptive_max_pool2d", input, 2)
    x, unbatched = (input.unsqueeze(0), True) if input.dim() == 3 else (input, False)
    oh, ow = _output_size(output_size, tuple(input.shape), 2)
    h, w = x.shape[2], x.shape[3]
    index = _flat_windows([_adaptive_taps(h, oh), _adaptive_taps(w, ow)], (h, w))
    out, indices = _window_max(x, index, (h, w), ((0, 0), (0, 0)), (h, w),
                               tuple(x.shape[:2]) + (oh, ow), return_indices)
    if return_indices:
        return _unbatch(out, unbatched), _unbatch(indices, unbatched)
    return _unbatch(out, unbatched)


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
    _check_adaptive("adaptive_avg_pool3d", input, 3)
    sizes = _output_size(output_size, tuple(input.shape), 3)
    out = input
    for k, size in enumerate(sizes):
        dim = input.dim() - 3 + k
        matrix = _averaging_matrix(input.shape[dim], size, input._data.dtype).to(input.device)
        out = _FUNCTIONS["matmul"](out.movedim(dim, -1), matrix.transpose(0, 1)).movedim(-1, dim)
    return out


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool2d` over the last three dims.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.adaptive_max_pool3d(cr.arange(8.).reshape(1, 2, 2, 2), 1).flatten().tolist()
    [7.0]
    """
    _check_adaptive("adaptive_max_pool3d", input, 3)
    x, unbatched = (input.unsqueeze(0), True) if input.dim() == 4 else (input, False)
    outs = _output_size(output_size, tuple(input.shape), 3)
    sizes = tuple(x.shape)[2:]
    index = _flat_windows([_adaptive_taps(n, o) for n, o in zip(sizes, outs)], sizes)
    out, indices = _window_max(x, index, sizes, ((0, 0),) * 3, sizes,
                               tuple(x.shape[:2]) + tuple(outs), return_indices)
    if return_indices:
        return _unbatch(out, unbatched), _unbatch(indices, unbatched)
    return _unbatch(out, unbatched)


__all__ = ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d", "lp_pool1d",
           "lp_pool2d"]
