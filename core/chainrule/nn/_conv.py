"""Convolutions beyond conv2d: conv1d (conv2d over a height-1 plane), conv3d (a sum of
conv2d over the depth taps), conv_transpose1d/2d/3d (the input gradient of a conv2d, the
table entry ``conv2d_input_grad``), and unfold / fold (im2col and col2im by gathered
windows: an index table of flat positions, gathered with index_select).

All of them are compositions of table entries, so gradients, double backward and
tangents come from those entries.
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


def _first(value):
    return value if isinstance(value, (int, str)) else tuple(value)[0]


def _check_weight_dim(input, weight, dims):
    if weight.dim() != dims:
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-"
                           f"dimensional weight {list(weight.shape)}, but got {input.dim()}-"
                           f"dimensional input of size {list(input.shape)} instead")


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation of (N, C, L) or (C, L) input with weight (out_channels,
    C / groups, k); padding is an int, 'valid' or 'same'.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.conv1d(cr.ones(1, 1, 4), cr.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0, 2.0]]]
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got "
                           f"input of size: {list(input.shape)}")
    _check_weight_dim(input, weight, 3)
    pad = padding if isinstance(padding, str) else (0, _first(padding))
    out = _nn.conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, _first(stride)),
                     pad, (1, _first(dilation)), groups)
    return out.squeeze(-2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation of (N, C, D, H, W) or (C, D, H, W) input with weight
    (out_channels, C / groups, kD, kH, kW): for each output depth, the sum over the
    kernel's depth taps of 2-D convolutions.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.conv3d(cr.ones(1, 1, 3, 3, 3), cr.ones(1, 1, 2, 2, 2)).shape
    chainrule.Size([1, 1, 2, 2, 2])
    """
    if input.dim() not in (4, 5):
        raise RuntimeError(f"Expected 4D (unbatched) or 5D (batched) input to conv3d, but got "
                           f"input of size: {list(input.shape)}")
    _check_weight_dim(input, weight, 5)
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input
    (sd, sh, sw), (dd, dh, dw) = _tuple(stride, 3, "stride"), _tuple(dilation, 3, "dilation")
    if isinstance(padding, str):
        raise NotImplementedError("conv3d: string padding is not supported by chainrule")
    pd, ph, pw = _tuple(padding, 3, "padding")
    if pd:
        x = _nn._constant_pad(x, ((0, 0), (0, 0), (pd, pd), (0, 0), (0, 0)), 0.0)
    kd = weight.shape[2]
    depth = _out_size(x.shape[2], kd, sd, 0, dd, False)
    planes = []
    for od in range(depth):
        total = None
        for k in range(kd):
            term = _nn.conv2d(x.select(2, od * sd + k * dd), weight.select(2, k), None,
                              (sh, sw), (ph, pw), (dh, dw), groups)
            total = term if total is None else total + term
        planes.append(total if bias is None else total + bias.reshape(-1, 1, 1))
    out = _FUNCTIONS["stack"](planes, 2)
    return out.squeeze(0) if unbatched else out


def _transposed_geometry(input, weight, stride, padding, output_padding, dilation, groups):
    n, c = input.shape[0], input.shape[1]
    if c != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"input{list(input.shape)} to have {weight.shape[0]} channels, but "
                           f"got {c} channels instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {list(weight.shape)} "
                           "instead")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError(
                f"output padding must be smaller than either stride or dilation, but got "
                f"output_padding_height: {output_padding[0]} output_padding_width: "
                f"{output_padding[1]} stride_height: {stride[0]} stride_width: {stride[1]} "
                f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}")
    sizes = [(input.shape[2 + i] - 1) * stride[i] - 2 * padding[i] +
             dilation[i] * (weight.shape[2 + i] - 1) + output_padding[i] + 1 for i in range(2)]
    return (n, weight.shape[1] * groups) + tuple(sizes)


def _conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation):
    if isinstance(padding, str):
        raise TypeError("conv_transpose2d(): argument 'padding' must be tuple of ints, not str")
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    stride, padding = _tuple(stride, 2, "stride"), _tuple(padding, 2, "padding")
    output_padding = _tuple(output_padding, 2, "output_padding")
    dilation = _tuple(dilation, 2, "dilation")
    shape = _transposed_geometry(x, weight, stride, padding, output_padding, dilation, groups)
    pads = tuple((p, p) for p in padding)
    out = _nn._conv2d_input_grad(x, weight, shape, stride, pads, dilation, groups)
    if bias is not None:
        out = out + bias.reshape(-1, 1, 1)
    return out.squeeze(0) if unbatched else out


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
    return _conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 1-D convolution of (N, C_in, L) or (C_in, L) input with weight
    (C_in, C_out / groups, k).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.conv_transpose1d(cr.ones(1, 1, 2), cr.ones(1, 1, 2)).tolist()
    [[[1.0, 2.0, 1.0]]]
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, "
                           f"but got input of size: {list(input.shape)}")
    _check_weight_dim(input, weight, 3)
    out = _conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias,
                            (1, _first(stride)), (0, _first(padding)),
                            (0, _first(output_padding)), groups, (1, _first(dilation)))
    return out.squeeze(-2)


def _depth_terms(depth_in, kd, sd, dd, pd, depth_out):
    """For each output depth, the (input depth, kernel tap) pairs that land on it."""
    terms = [[] for _ in range(depth_out)]
    for i in range(depth_in):
        for k in range(kd):
            o = i * sd + k * dd - pd
            if 0 <= o < depth_out:
                terms[o].append((i, k))
    return terms


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 3-D convolution of (N, C_in, D, H, W) or unbatched input with weight
    (C_in, C_out / groups, kD, kH, kW): per kernel depth tap, one transposed 2-D
    convolution of every input depth plane, added at depth ``i * stride + k * dilation``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.conv_transpose3d(cr.ones(1, 1, 2, 2, 2), cr.ones(1, 1, 2, 2, 2))[0, 0, 1].tolist()
    [[2.0, 4.0, 2.0], [4.0, 8.0, 4.0], [2.0, 4.0, 2.0]]
    """
    if isinstance(padding, str):
        raise TypeError("conv_transpose3d(): argument 'padding' must be tuple of ints, not str")
    _check_transposed3d(input, weight)
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input
    (sd, sh, sw), (pd, ph, pw) = _tuple(stride, 3, "stride"), _tuple(padding, 3, "padding")
    (od, oh, ow), (dd, dh, dw) = (_tuple(output_padding, 3, "output_padding"),
                                  _tuple(dilation, 3, "dilation"))
    n, c, depth_in, kd = x.shape[0], x.shape[1], x.shape[2], weight.shape[2]
    depth_out = (depth_in - 1) * sd - 2 * pd + dd * (kd - 1) + od + 1
    planes = x.permute(0, 2, 1, 3, 4).reshape(n * depth_in, c, x.shape[3], x.shape[4])
    taps = []
    for k in range(kd):
        y = _conv_transpose2d(planes, weight.select(2, k), None, (sh, sw), (ph, pw), (oh, ow),
                              groups, (dh, dw))
        taps.append(y.reshape(n, depth_in, *y.shape[1:]))
    out = _FUNCTIONS["stack"]([_depth_plane(taps, t) for t in
                               _depth_terms(depth_in, kd, sd, dd, pd, depth_out)], 2)
    if bias is not None:
        out = out + bias.reshape(-1, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


def _check_transposed3d(input, weight):
    if input.dim() not in (4, 5):
        raise RuntimeError(f"Expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, "
                           f"but got input of size: {list(input.shape)}")
    _check_weight_dim(input, weight, 5)
    shape = [1] + list(input.shape) if input.dim() == 4 else list(input.shape)
    if shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"input{shape} to have {weight.shape[0]} channels, but got "
                           f"{shape[1]} channels instead")


def _depth_plane(taps, terms):
    """One output depth plane: the sum of its (input depth, tap) planes (zeros if none)."""
    if not terms:
        like = taps[0].select(1, 0)
        return _Tensor._wrap(zeros_on(tuple(like.shape), like._data.dtype, like._data))
    total = None
    for i, k in terms:
        total = taps[k].select(1, i) if total is None else total + taps[k].select(1, i)
    return total

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
