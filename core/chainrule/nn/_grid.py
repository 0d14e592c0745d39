"""Spatial transformers: ``affine_grid`` and ``grid_sample`` (2-D and 3-D; bilinear,
nearest and bicubic; zeros, border and reflection padding; both ``align_corners``).

Note [grid sampling by gathered corners]
    Each output point reads the input at a real-valued position (the grid, in
    [-1, 1], unnormalized to pixel units). The integer parts of the positions pick
    input pixels -- constants of the graph, found on the host -- which ``gather``
    reads from the flattened input; the fractional parts give the interpolation
    weights as tensor expressions of the grid (bilinear: ``1 - f`` and ``f`` per
    dim; bicubic: the cubic-convolution polynomials with A = -0.75). Padding maps
    positions before that: 'border' clamps them, 'reflection' folds them back by
    ``fmod`` and ``abs``; taps that still fall outside read zero (their weight is
    multiplied by a 0/1 mask). So the output is a sum of products of table ops:
    gradients with respect to the input and the grid, double backward and
    tangents come from their entries, and the grid's gradient is zero wherever the
    reference's is (rounding in 'nearest', clamped positions).
"""
import itertools
import warnings

from .. import _dtypes, _factories
from .._ops import affine_grid as _affine
from .._ops._common import FUNCTIONS as _FUNCTIONS

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")
_CUBIC_A = -0.75


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


# --- grid_sample: positions ------------------------------------------------------------------
def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """Fold ``coord`` (a tensor) into [low, high] by reflection at the bounds."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    folded = (coord - low).abs()
    even = (folded.detach() / span).floor().remainder(2) == 0
    extra = _FUNCTIONS["fmod"](folded, span)
    return _FUNCTIONS["where"](even, extra + low, span - extra + low)


def _padded_position(coord, size, padding_mode, align_corners):
    """The position (in pixels) a grid coordinate reads after padding."""
    if padding_mode == "border":
        return coord.clamp(0, size - 1)
    if padding_mode == "reflection":
        bounds = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        return _reflect(coord, *bounds).clamp(0, size - 1)
    return coord


def _tap_position(position, size, padding_mode, align_corners):
    """An integer tap position (a detached tensor) after the padding map (bicubic)."""
    if padding_mode == "border":
        return position.clamp(0, size - 1)
    if padding_mode == "reflection":
        bounds = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        return _reflect(position, *bounds).clamp(0, size - 1)
    return position


# --- grid_sample: reading taps ---------------------------------------------------------------
def _read(flat, taps, sizes):
    """The input values at integer positions ``taps`` (one detached (N, P) tensor per
    dim) and the 0/1 mask of those inside: ((N, C, P), (N, 1, P)). Computed on the
    input's device: no copy to the host."""
    inside, index = None, None
    for tap, size in zip(taps, sizes):
        tap = tap.long()
        ok = (tap >= 0) & (tap < size)
        inside = ok if inside is None else inside & ok
        tap = tap.clamp(0, size - 1)
        index = tap if index is None else index * size + tap
    n, c = flat.shape[0], flat.shape[1]
    index = index.unsqueeze(1).expand(n, c, index.shape[1])
    return _FUNCTIONS["gather"](flat, 2, index), inside.unsqueeze(1).to(flat.dtype)


def _bilinear(flat, positions, sizes):
    out = None
    lows = [p.detach().floor() for p in positions]
    fractions = [p - low for p, low in zip(positions, lows)]
    for corner in itertools.product((0, 1), repeat=len(sizes)):
        weight = None
        for f, up in zip(fractions, corner):
            w = f if up else 1 - f
            weight = w if weight is None else weight * w
        values, mask = _read(flat, [low + up for low, up in zip(lows, corner)], sizes)
        term = values * (weight.unsqueeze(1) * mask)
        out = term if out is None else out + term
    return out


def _nearest(flat, positions, sizes):
    values, mask = _read(flat, [p.detach().round() for p in positions], sizes)
    # rounding has a zero derivative: keep the grid in the graph (a zero gradient,
    # as the reference gives) by adding where(False, position, 0)
    never = _factories.zeros_like(positions[0], dtype=_dtypes.bool_)
    return values * mask + _FUNCTIONS["where"](never, positions[0], 0.0).unsqueeze(1)


def _cubic_weights(t):
    """The four cubic-convolution weights of the fraction ``t`` (A = -0.75)."""
    a = _CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _bicubic(flat, coords, sizes, padding_mode, align_corners):
    lows = [c.detach().floor() for c in coords]
    weights = [_cubic_weights(c - low) for c, low in zip(coords, lows)]
    out = None
    for i, j in itertools.product(range(4), repeat=2):
        taps = [_tap_position(lows[0] - 1 + i, sizes[0], padding_mode, align_corners),
                _tap_position(lows[1] - 1 + j, sizes[1], padding_mode, align_corners)]
        values, mask = _read(flat, taps, sizes)
        term = values * ((weights[0][i] * weights[1][j]).unsqueeze(1) * mask)
        out = term if out is None else out + term
    return out


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
    Wo); differentiable with respect to both (Note [grid sampling by gathered
    corners]).

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
    n, c, sizes = input.shape[0], input.shape[1], tuple(input.shape)[2:]
    out_spatial = tuple(grid.shape)[1:-1]
    flat = input.reshape(n, c, -1)
    points = grid.reshape(n, -1, len(sizes))
    if input.is_meta or grid.is_meta:
        return _meta_sample(flat, points).reshape(n, c, *out_spatial)
    coords = [_unnormalize(points.select(2, len(sizes) - 1 - d), size, align_corners)
              for d, size in enumerate(sizes)]                   # per dim of ``sizes``
    if mode == "bicubic":
        out = _bicubic(flat, coords, sizes, padding_mode, align_corners)
    else:
        positions = [_padded_position(co, size, padding_mode, align_corners)
                     for co, size in zip(coords, sizes)]
        out = (_bilinear if mode == "bilinear" else _nearest)(flat, positions, sizes)
    return out.reshape(n, c, *out_spatial)


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
