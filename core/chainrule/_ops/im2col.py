"""Derivative table: im2col and col2im (``F.unfold`` / ``F.fold``), one op per reference
node (Im2ColBackward0, Col2ImBackward0).

Note [im2col and col2im are adjoint]
    im2col copies each sliding block of the zero-padded (..., C, H, W) input into a
    column of (..., C * kH * kW, L); col2im adds the columns back into place (summing
    where blocks overlap) and drops the padding. Both are linear and each is the
    other's adjoint, so the VJP of one is the other with the same geometry, and each
    one's JVP is itself. Leading dims are batch dims (the public functions accept one
    or none; vmap adds more).
"""
import numpy as np

from .._tensor import strided_view, zeros_on
from ._common import formula_helper
from ._namespaces import array_fn
from ._registry import apply_op, defop

_ATTRS = ("kernel_size", "dilation", "padding", "stride")


def blocks(size, kernel_size, dilation, padding, stride):
    """The number of sliding blocks along each of the two spatial dims."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(size, kernel_size, dilation, padding, stride))


def _im2col_forward(x, kernel_size, dilation, padding, stride):
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    x = x.reshape((-1, c, h, w))
    if any(padding):
        x = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))
    outs = blocks((h, w), kernel_size, dilation, padding, stride)
    s = x.strides
    windows = strided_view(x, x.shape[:2] + tuple(kernel_size) + outs,
                           (s[0], s[1], s[2] * dilation[0], s[3] * dilation[1],
                            s[2] * stride[0], s[3] * stride[1]), writeable=False)
    k = kernel_size[0] * kernel_size[1]
    return windows.copy().reshape(lead + (c * k, outs[0] * outs[1]))


def _col2im_forward(g, output_size, kernel_size, dilation, padding, stride):
    (kh, kw), lead = kernel_size, g.shape[:-2]
    c, outs = g.shape[-2] // (kh * kw), blocks(output_size, kernel_size, dilation, padding,
                                               stride)
    cols = g.reshape((-1, c, kh, kw) + outs)
    padded = zeros_on((cols.shape[0], c) + tuple(n + 2 * p for n, p in
                                                  zip(output_size, padding)), g.dtype, g)
    for i in range(kh):                        # a loop over kernel taps, not over pixels
        for j in range(kw):
            rows = slice(i * dilation[0], i * dilation[0] + stride[0] * (outs[0] - 1) + 1,
                         stride[0])
            columns = slice(j * dilation[1], j * dilation[1] + stride[1] * (outs[1] - 1) + 1,
                            stride[1])
            padded[:, :, rows, columns] += cols[:, :, i, j]
    (h, w), (ph, pw) = output_size, padding
    return padded[:, :, ph:ph + h, pw:pw + w].copy().reshape(lead + (c, h, w))


IM2COL = defop("im2col", _im2col_forward, attrs=_ATTRS, node_name="Im2ColBackward0",
               vjp=(lambda F, g, self_shape, kernel_size, dilation, padding, stride:
                    F._col2im(g, tuple(self_shape)[-2:], kernel_size, dilation, padding,
                              stride),),
               jvp=lambda F, t, kernel_size, dilation, padding, stride:
                   F._im2col(t[0], kernel_size, dilation, padding, stride))
COL2IM = defop("col2im", _col2im_forward, attrs=("output_size",) + _ATTRS,
               node_name="Col2ImBackward0",
               vjp=(lambda F, g, kernel_size, dilation, padding, stride:
                    F._im2col(g, kernel_size, dilation, padding, stride),),
               jvp=lambda F, t, output_size, kernel_size, dilation, padding, stride:
                   F._col2im(t[0], output_size, kernel_size, dilation, padding, stride))
OP_NAMES = ("im2col", "col2im")

array_fn("_im2col")(_im2col_forward)
array_fn("_col2im")(_col2im_forward)


@formula_helper
def _im2col(x, kernel_size, dilation, padding, stride):
    """Columns of ``x``'s sliding blocks (Note [im2col and col2im are adjoint])."""
    attrs = dict(zip(_ATTRS, (kernel_size, dilation, padding, stride)))
    return apply_op(IM2COL, (x,), attrs)


@formula_helper
def _col2im(g, output_size, kernel_size, dilation, padding, stride):
    attrs = dict(zip(_ATTRS, (kernel_size, dilation, padding, stride)),
                 output_size=tuple(output_size))
    return apply_op(COL2IM, (g,), attrs)
