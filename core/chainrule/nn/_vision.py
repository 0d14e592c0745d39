"""Resampling: pixel_shuffle / pixel_unshuffle (reshape and permute) and interpolate.

Every mode of ``interpolate`` but 'area' (adaptive average pooling, as the
reference's) is one upsample table op: Note [separable upsampling] in _ops/upsample.py.
"""
import math
import warnings

from .._ops import shuffle as _shuffle, upsample as _upsample
from . import _pool


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels becomes an
    r x r block of pixels.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.pixel_shuffle(cr.arange(4.).reshape(1, 4, 1, 1), 2).tolist()
    [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    r = upscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = tuple(input.shape)
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return _shuffle._pixel_shuffle(input, r)


def pixel_unshuffle(input, downscale_factor):
    """The inverse of :func:`pixel_shuffle`: (*, C, H r, W r) -> (*, C r^2, H, W).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.pixel_unshuffle(cr.arange(4.).reshape(1, 1, 2, 2), 2).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    r = downscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = tuple(input.shape)
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({dim})={size} is not "
                               f"divisible by {r}")
    return _shuffle._pixel_unshuffle(input, r)


# --- interpolate -------------------------------------------------------------------------------
_MODES = {"nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area"}
_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
def _output_sizes(input, size, scale_factor, recompute_scale_factor):
    spatial = tuple(input.shape)[2:]
    k = len(spatial)
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None:
        sizes = (size,) * k if isinstance(size, int) else tuple(size)
        if len(sizes) != k:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, "
                             f"but got input with spatial dimensions of {list(spatial)} and "
                             f"output size of {size}. Please provide input tensor in (N, C, d1, "
                             f"d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        return sizes, [None] * k
    scales = (scale_factor,) * k if isinstance(scale_factor, (int, float)) else \
        tuple(scale_factor)
    if len(scales) != k:
        raise ValueError(f"Input and scale_factor must have the same number of spatial "
                         f"dimensions, but got input with spatial dimensions of {list(spatial)} "
                         f"and scale_factor of shape {scale_factor}. Please provide input tensor "
                         f"in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                         f"format.")
    sizes = tuple(int(math.floor(float(n) * s)) for n, s in zip(spatial, scales))
    return sizes, [None] * k if recompute_scale_factor else list(scales)


def _check_mode(input, mode, align_corners):
    if mode not in _MODES or input.dim() not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
            f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})")
    if align_corners is not None and mode not in _MODE_DIMS:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    needed = _MODE_DIMS.get(mode)
    if needed is not None and input.dim() != needed + 2:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{needed + 2}D input")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample the spatial dims of (N, C, d1, ...) input to ``size`` or by
    ``scale_factor``; modes 'nearest', 'nearest-exact', 'linear', 'bilinear',
    'bicubic', 'trilinear', 'area' (Note [separable upsampling]).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.interpolate(cr.tensor([[[1., 2.]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    >>> F.interpolate(cr.tensor([[[1., 2.]]]), size=3, mode='linear',
    ...               align_corners=True).tolist()
    [[[1.0, 1.5, 2.0]]]
    """
    _check_mode(input, mode, align_corners)
    if antialias:
        raise NotImplementedError("interpolate(): antialias=True is not supported by chainrule")
    sizes, scales = _output_sizes(input, size, scale_factor, recompute_scale_factor)
    if mode == "area":              # the reference's: an adaptive average pooling
        return getattr(_pool, f"adaptive_avg_pool{input.dim() - 2}d")(input, tuple(sizes))
    if mode in _MODE_DIMS and align_corners is None:
        align_corners = False
    return _upsample.upsample(input, mode, sizes, scales, align_corners)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate` (with the reference's warning).

    >>> import chainrule as cr, warnings
    >>> import chainrule.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample(cr.tensor([[[1., 2.]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


__all__ = ["pixel_shuffle", "pixel_unshuffle", "interpolate", "upsample"]
