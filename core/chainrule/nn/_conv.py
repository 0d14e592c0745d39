"""Convolutions beyond conv2d: conv1d, conv3d and conv_transpose1d/2d/3d (each one
``convolution`` table op, Note [convolution entries] in _ops/nn.py), and unfold / fold
(im2col and col2im by gathered windows: an index table of flat positions, gathered with
index_select; compositions of table entries).
"""
import numpy as np

from .._ops import nn as _nn
from .._ops._common import FUNCTIONS as _FUNCTIONS
from .._tensor import Tensor as _Tensor, on_device_of, zeros_on
from .._ops.pooling import out_size as _out_size
from ._pool import _tuple


def _taps(out, k, s, d):
    """(out, k) positions in the padded input along one dim."""
    return np.arange(out)[:, None] * s + np.arange(k)[None, :] * d


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


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation of (N, C, L) or (C, L) input with weight (out_channels,
    C / groups, k); padding is an int, 'valid' or 'same'.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.conv1d(cr.ones(1, 1, 4), cr.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0, 2.0]]]
    """
    return _nn.convolution_nd("conv1d", 1, input, weight, bias, stride, padding, dilation,
                              groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation of (N, C, D, H, W) or (C, D, H, W) input with weight
    (out_channels, C / groups, kD, kH, kW).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.conv3d(cr.ones(1, 1, 3, 3, 3), cr.ones(1, 1, 2, 2, 2)).shape
    chainrule.Size([1, 1, 2, 2, 2])
    """
    return _nn.convolution_nd("conv3d", 3, input, weight, bias, stride, padding, dilation,
                              groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 1-D convolution of (N, C_in, L) or (C_in, L) input with weight
    (C_in, C_out / groups, k).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.conv_transpose1d(cr.ones(1, 1, 2), cr.ones(1, 1, 2)).tolist()
    [[[1.0, 2.0, 1.0]]]
    """
    return _nn.conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding,
                                 output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 2-D convolution (the gradient of conv2d with respect to its input)
    of (N, C_in, H, W) or unbatched input with weight (C_in, C_out / groups, kH, kW);
    ``output_padding`` adds rows/columns on one side of the output.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.conv_transpose2d(cr.ones(1, 1, 2, 2), cr.ones(1, 1, 2, 2)).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    return _nn.conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding,
                                 output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 3-D convolution of (N, C_in, D, H, W) or unbatched input with weight
    (C_in, C_out / groups, kD, kH, kW).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.conv_transpose3d(cr.ones(1, 1, 2, 2, 2), cr.ones(1, 1, 2, 2, 2))[0, 0, 1].tolist()
    [[2.0, 4.0, 2.0], [4.0, 8.0, 4.0], [2.0, 4.0, 2.0]]
    """
    return _nn.conv_transpose_nd("conv_transpose3d", 3, input, weight, bias, stride, padding,
                                 output_padding, groups, dilation)


# --- unfold / fold ----------------------------------------------------------------------------
def _block_geometry(spatial, kernel_size, dilation, padding, stride):
    kernel, dilation = _tuple(kernel_size, 2, "kernel_size"), _tuple(dilation, 2, "dilation")
    padding, stride = _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride")
    outs = [_out_size(n, k, s, p, d, False)
            for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation)]
    taps = [_taps(o, k, s, d) for o, k, s, d in zip(outs, kernel, stride, dilation)]
    widths = tuple(n + 2 * p for n, p in zip(spatial, padding))
    return kernel, padding, outs, _flat_windows(taps, widths)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks (im2col): (N, C, H, W) -> (N, C * kH * kW, L), one column per
    block position.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.unfold(cr.arange(9.).reshape(1, 1, 3, 3), 2).tolist()
    [[[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]]
    """
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got "
                           f"{input.dim()}D)")
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    kernel, padding, outs, index = _block_geometry(tuple(x.shape)[2:], kernel_size, dilation,
                                                   padding, stride)
    if any(padding):
        x = _nn._constant_pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding), 0.0)
    n, c = x.shape[0], x.shape[1]
    blocks = _gather(x, index).permute(0, 1, 3, 2)            # (N, C, K, L)
    out = blocks.reshape(n, c * kernel[0] * kernel[1], index.shape[0])
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of :func:`unfold` (col2im): sums the blocks' columns of (N, C * kH *
    kW, L) back into (N, C, H, W) of ``output_size``, adding where blocks overlap.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.fold(cr.ones(1, 4, 4), (3, 3), 2).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                           f"supported (got {input.dim()}D)")
    unbatched = input.dim() == 2
    x = input.unsqueeze(0) if unbatched else input
    size = _tuple(output_size, 2, "output_size")
    kernel, pad, outs, index = _block_geometry(size, kernel_size, dilation, padding, stride)
    _check_fold(x, size, kernel, dilation, pad, stride, outs)
    n, k = x.shape[0], kernel[0] * kernel[1]
    c = x.shape[1] // k
    columns = x.reshape(n, c, k, x.shape[2]).permute(0, 1, 3, 2).reshape(n, c, -1)
    hp, wp = size[0] + 2 * pad[0], size[1] + 2 * pad[1]
    plane = _Tensor._wrap(zeros_on((n, c, hp * wp), x._data.dtype, x._data))
    index = _Tensor._wrap(on_device_of(index.reshape(-1), x._data))     # a constant
    summed = _FUNCTIONS["index_add"](plane, 2, index, columns)
    out = summed.reshape(n, c, hp, wp)
    if any(pad):
        out = _nn._constant_pad(out, ((0, 0), (0, 0)) + tuple((-p, -p) for p in pad), 0.0)
    return out.squeeze(0) if unbatched else out


def _check_fold(x, size, kernel, dilation, padding, stride, outs):
    k = kernel[0] * kernel[1]
    if x.shape[1] % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={tuple(kernel)}.")
    if x.shape[2] != outs[0] * outs[1]:
        raise RuntimeError(
            f"Given output_size={tuple(size)}, kernel_size={tuple(kernel)}, dilation="
            f"{_tuple(dilation, 2, 'dilation')}, padding={tuple(padding)}, stride="
            f"{_tuple(stride, 2, 'stride')}, expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {outs[0]} * {outs[1]} = {outs[0] * outs[1]}, "
            f"but got input.size(2)={x.shape[2]}.")


__all__ = ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "unfold", "fold"]
