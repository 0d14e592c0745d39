"""Convolutions beyond conv2d: conv1d, conv3d and conv_transpose1d/2d/3d (each one
``convolution`` table op, Note [convolution entries] in _ops/nn.py), and unfold / fold
(the im2col / col2im table ops, Note [im2col and col2im are adjoint] in _ops/im2col.py).
"""
import numpy as np

from .._ops import im2col as _im2col, nn as _nn
from .._ops._common import not_implemented_for as _not_implemented_for


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


# --- unfold / fold: the im2col / col2im table ops (Note [im2col and col2im are adjoint]) ---
def _int_pair(fn, name, position, value):
    """``value`` as the reference's _pair gives it to ``fn``, with its argument errors."""
    value = tuple(value) if hasattr(value, "__iter__") else (value, value)
    for i, v in enumerate(value):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be tuple of "
                            f"ints, but found element of type {type(v).__name__} at pos {i}")
    return tuple(int(v) for v in value)


def _geometry_args(fn, first, **named):
    """The int pairs of ``named`` (name -> value, in the reference's argument order
    after ``first`` positions), their lengths checked."""
    pairs = {k: _int_pair(fn, k, first + i, v) for i, (k, v) in enumerate(named.items())}
    for k, v in pairs.items():
        if len(v) != 2:
            raise RuntimeError(f"It is expected {k} equals to 2, but got size {len(v)}")
    return pairs


_LIMITS = {"kernel_size": ("kernel size should be greater than zero", "kernel", 1),
           "dilation": ("dilation should be greater than zero", "dilation", 1),
           "padding": ("padding should be non-negative", "pad", 0),
           "stride": ("stride should be greater than zero", "stride", 1)}


def _check_geometry(pairs, order):
    for name in order:
        text, short, least = _LIMITS[name]
        h, w = pairs[name]
        if h < least or w < least:
            raise RuntimeError(f"{text}, but got {short}_height: {h} {short}_width: {w}")


def _check_dtype(kernel, x):
    if x._data.dtype.kind in "iu":
        raise _not_implemented_for(kernel, x._data.dtype)


def _unfold_input_error(input):
    if input.dim() < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-input.dim()}, {input.dim() - 1}], but got {input.dim()})")
    return RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                        f"other non-zero dimensions for input, but got: {list(input.shape)}")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks (im2col): (N, C, H, W) -> (N, C * kH * kW, L), one column per
    block position.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.unfold(cr.arange(9.).reshape(1, 1, 3, 3), 2).tolist()
    [[[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]]
    """
    g = _geometry_args("im2col", 2, kernel_size=kernel_size, dilation=dilation,
                       padding=padding, stride=stride)
    _check_geometry(g, ("kernel_size", "dilation", "padding", "stride"))
    if input.dim() not in (3, 4) or 0 in tuple(input.shape)[-3:]:
        raise _unfold_input_error(input)
    _check_dtype("im2col_out", input)
    outs = _im2col.blocks(tuple(input.shape)[-2:], *g.values())
    if min(outs) < 1:
        raise RuntimeError(
            f"Given input with spatial size {tuple(input.shape)[-2:]}, kernel_size="
            f"{g['kernel_size']}, dilation={g['dilation']}, padding={g['padding']}, calculated "
            f"shape of the array of sliding blocks as {outs}, but its components must be at "
            "least one.")
    return _im2col._im2col(input, *g.values())


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of :func:`unfold` (col2im): sums the blocks' columns of (N, C * kH *
    kW, L) back into (N, C, H, W) of ``output_size``, adding where blocks overlap.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.fold(cr.ones(1, 4, 4), (3, 3), 2).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    g = _geometry_args("col2im", 2, output_size=output_size, kernel_size=kernel_size,
                       dilation=dilation, padding=padding, stride=stride)
    _check_geometry(g, ("kernel_size", "stride", "dilation", "padding"))
    if input.dim() not in (2, 3) or 0 in tuple(input.shape)[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    size, geometry = g.pop("output_size"), tuple(g.values())
    _check_fold(input, size, geometry, _im2col.blocks(size, *geometry))
    _check_dtype("col2im_out", input)
    return _im2col._col2im(input, size, *geometry)


def _check_fold(x, size, geometry, outs):
    kernel, dilation, padding, stride = geometry
    if x.shape[-2] % (kernel[0] * kernel[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[-2]} and "
                           f"kernel_size={kernel}.")
    if x.shape[-1] != outs[0] * outs[1]:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, padding="
            f"{padding}, stride={stride}, expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {outs[0]} * {outs[1]} = {outs[0] * outs[1]}, "
            f"but got input.size(2)={x.shape[-1]}.")


__all__ = ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "unfold", "fold"]
