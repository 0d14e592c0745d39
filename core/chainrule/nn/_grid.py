"""Spatial transformers: ``affine_grid`` and ``grid_sample`` (2-D and 3-D; bilinear,
nearest and bicubic; zeros, border and reflection padding; both ``align_corners``).
Each is one table op (_ops/affine_grid.py, _ops/grid_sampler.py); this module checks
the arguments as the reference does.
"""
import warnings


from .._ops import affine_grid as _affine, grid_sampler as _sampler

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


def _default_align(align_corners):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=3)
        return False
    return align_corners


# --- affine_grid -----------------------------------------------------------------------------
def _check_theta(theta, size):
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    rows = {4: 2, 5: 3}.get(len(size))
    if rows is None:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if theta.dim() != 3 or tuple(theta.shape[-2:]) != (rows, rows + 1):
        raise ValueError(f"Expected a batch of {rows}D affine matrices of shape Nx{rows}x"
                         f"{rows + 1} for size {size}. Got {theta.shape}.")


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps ``theta``
    (N, 2, 3) (or (N, 3, 4)) for an output of ``size`` (N, C, H, W) (or (N, C, D, H,
    W)): each output point's normalized (x, y[, z]) mapped by theta.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.affine_grid(cr.tensor([[[1., 0., 0.], [0., 1., 0.]]]), (1, 1, 2, 2),
    ...               align_corners=True)[0].tolist()
    [[[-1.0, -1.0], [1.0, -1.0]], [[-1.0, 1.0], [1.0, 1.0]]]
    """
    align_corners = _default_align(align_corners)
    _check_theta(theta, size)
    spatial = tuple(size)[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _affine._affine_grid(theta, tuple(size), align_corners)   # one table op


# --- grid_sample -----------------------------------------------------------------------------
def _check_sample(input, grid, mode, padding_mode):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    k = input.dim() - 2
    if grid.shape[-1] != k:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {k} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample (N, C, H, W) input at the normalized positions of ``grid`` (N, Ho, Wo, 2)
    (x, y in [-1, 1]; 3-D: (N, C, D, H, W) and (N, Do, Ho, Wo, 3)), giving (N, C, Ho,
    Wo); differentiable with respect to both (Note [grid sampling as weighted taps]
    in _ops/grid_sampler.py).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> image = cr.tensor([[[[0., 1.], [2., 3.]]]])
    >>> F.grid_sample(image, cr.tensor([[[[0., 0.], [1., -1.]]]]), align_corners=True).tolist()
    [[[[1.5, 1.0]]]]
    """
    align_corners = _default_align(align_corners)
    _check_sample(input, grid, mode, padding_mode)
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype} but found {grid.dtype}")
    if input.is_meta or grid.is_meta:
        n, c = input.shape[0], input.shape[1]
        flat, points = input.reshape(n, c, -1), grid.reshape(n, -1, grid.shape[-1])
        return _meta_sample(flat, points).reshape(n, c, *tuple(grid.shape)[1:-1])
    return _sampler.grid_sampler(input, grid, _MODES.index(mode), _PADDINGS.index(padding_mode),
                                 align_corners)


_MODES, _PADDINGS = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")
GRID_SAMPLE_INTERPOLATION_MODES = {name: i for i, name in enumerate(_MODES)}
GRID_SAMPLE_PADDING_MODES = {name: i for i, name in enumerate(_PADDINGS)}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler``: :func:`grid_sample` with the modes as enum integers
    (0 bilinear, 1 nearest, 2 bicubic; 0 zeros, 1 border, 2 reflection).

    >>> import chainrule as cr
    >>> cr.grid_sampler(cr.ones(1, 1, 2, 2), cr.zeros(1, 1, 1, 2), 0, 0, False).tolist()
    [[[[1.0]]]]
    """
    return grid_sample(input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode],
                       align_corners)


def affine_grid_generator(theta, size, align_corners):
    """``torch.affine_grid_generator``: :func:`affine_grid` with ``align_corners`` given.

    >>> import chainrule as cr
    >>> cr.affine_grid_generator(cr.zeros(1, 2, 3), [1, 1, 2, 2], False).shape
    chainrule.Size([1, 2, 2, 2])
    """
    return affine_grid(theta, size, align_corners)


def _meta_sample(flat, points):
    """On meta tensors the taps (which need the grid's values) are unknown: an output
    of the right shape and dtype that depends on both inputs, so meta gradients have
    theirs too."""
    return flat.narrow(2, 0, 1) * points.select(2, 0).unsqueeze(1)


__all__ = ["affine_grid", "grid_sample"]
