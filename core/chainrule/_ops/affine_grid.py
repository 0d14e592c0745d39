"""Derivative table: affine_grid_generator, one op like the reference's
(AffineGridGeneratorBackward0).

Note [affine grids are linear in theta]
    The grid is base @ theta^T per batch entry, where base holds each output point's
    normalized coordinates (x, y[, z]) and a 1 (the reference's linspace from -1 to 1
    in theta's dtype, scaled by (n - 1) / n unless align_corners). It is linear in
    theta: the VJP is base^T @ grad (transposed back to theta's layout), the JVP the
    op on the tangent.
"""
import numpy as np

from .._tensor import Tensor, on_device_of
from ._common import formula_helper
from ._namespaces import array_fn
from ._registry import apply_op, defop


def _line(n, align_corners, dtype):
    if n <= 1:
        return np.zeros(n, dtype)
    line = np.linspace(-1, 1, n, dtype=dtype)
    return line if align_corners else line * dtype.type(n - 1) / dtype.type(n)


def _base(size, align_corners, dtype):
    """(points, k + 1): each output point's (x, y[, z], 1), in row-major point order
    (16-bit dtypes: made in float32, then rounded, as under the reference's autocast)."""
    if dtype.itemsize == 2:
        return _base(size, align_corners, np.dtype(np.float32)).astype(dtype)
    spatial = tuple(size)[2:]
    mesh = np.meshgrid(*[_line(n, align_corners, dtype) for n in spatial], indexing="ij")
    columns = list(reversed(mesh)) + [np.ones(spatial, dtype)]
    return np.stack(columns, -1).reshape(-1, len(columns))


def _affine_forward(theta, size, align_corners):
    base = on_device_of(_base(size, align_corners, theta.dtype), theta)
    grid = np.matmul(base, theta.swapaxes(1, 2)).astype(theta.dtype, copy=False)  # (bf16: f32)
    return grid.reshape((theta.shape[0],) + tuple(size)[2:] + (len(size) - 2,))


def _affine_vjp(F, g, theta_shape, size, align_corners):
    n, k = theta_shape[0], len(size) - 2
    rows = F.reshape(g, (n, -1, k))
    return F.transpose(F.matmul(F.transpose(F._affine_base(rows, size, align_corners), 0, 1),
                                rows), 1, 2)


AFFINE_GRID = defop("affine_grid_generator", _affine_forward, inputs=("theta",),
                    attrs=("size", "align_corners"), vjp=(_affine_vjp,),
                    jvp=lambda F, t, size, align_corners: F._affine_grid(t[0], size,
                                                                         align_corners))

array_fn("_affine_grid")(_affine_forward)
array_fn("_affine_base")(lambda like, size, align_corners: on_device_of(
    _base(size, align_corners, like.dtype), like))


@formula_helper
def _affine_grid(theta, size, align_corners):
    """The grid of Note [affine grids are linear in theta]."""
    attrs = {"size": tuple(size), "align_corners": bool(align_corners)}
    return apply_op(AFFINE_GRID, (theta,), attrs)


@formula_helper
def _affine_base(like, size, align_corners):
    """The constant base points (a tensor like ``like``'s dtype)."""
    return Tensor._wrap(on_device_of(_base(size, align_corners, like._data.dtype), like._data))
