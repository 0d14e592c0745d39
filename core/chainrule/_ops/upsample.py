"""Derivative table: upsampling (``interpolate``'s nearest, nearest-exact, linear,
bilinear, bicubic and trilinear modes), one op per reference node
(UpsampleNearest2DBackward0, UpsampleBilinear2DBackward0, ...).

Note [separable upsampling]
    Every mode resamples each spatial dim on its own: output position o reads input
    positions i with weights w, computed with the reference's arithmetic (its scale,
    source index and clamping, in float32 for float32 input and for every nearest
    index). Nearest modes gather one source per output; the others multiply by an
    (out, in) weight matrix along the dim. The map is linear, so its VJP is the
    adjoint (``upsample_backward``: scatter-sums and transposed matrices), the
    adjoint's VJP is the map again, and each one's JVP is itself.
"""
import numpy as np

from .._meta import MetaArray
from .._tensor import on_device_of, zeros_on
from ._common import formula_helper
from ._namespaces import array_fn
from ._registry import apply_op, defop
from .linalg import in_float32

_CUBIC_A = -0.75
_LINEAR_MODES = ("linear", "bilinear", "bicubic", "trilinear")


def _opmath(dtype):
    return np.float64 if dtype == np.float64 else np.float32


def _scales_value(scale, in_size, out_size, real):
    """The reference's compute_scales_value: 1/scale when given, else in/out."""
    if scale is not None and scale > 0:
        return real(1.0 / scale)
    return real(in_size) / real(out_size)


def _nearest_index(in_size, out_size, scale, exact, shortcut):
    o = np.arange(out_size)
    if shortcut and out_size in (in_size, 2 * in_size):
        return o if out_size == in_size else o >> 1
    o = o.astype(np.float32)
    s = _scales_value(scale, in_size, out_size, np.float32)
    src = np.floor((o + np.float32(0.5)) * s if exact else o * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def _source_index(in_size, out_size, scale, align_corners, cubic, real):
    """area_pixel_compute_scale and area_pixel_compute_source_index, in ``real``."""
    o = np.arange(out_size).astype(real)
    if align_corners:
        s = real(in_size - 1) / real(out_size - 1) if out_size > 1 else real(0)
        return s * o
    s = _scales_value(scale, in_size, out_size, real)
    src = s * (o + real(0.5)) - real(0.5)
    return src if cubic else np.maximum(src, real(0))


def _linear_matrix(in_size, out_size, scale, align_corners, real):
    if out_size == in_size and not align_corners:
        return np.eye(out_size, dtype=real)
    src = _source_index(in_size, out_size, scale, align_corners, False, real)
    low = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    high = low + (low < in_size - 1)
    lam = np.clip(src - low.astype(real), real(0), real(1))
    matrix = np.zeros((out_size, in_size), real)
    rows = np.arange(out_size)
    np.add.at(matrix, (rows, low), real(1) - lam)
    np.add.at(matrix, (rows, high), lam)
    return matrix


def _cubic_matrix(in_size, out_size, scale, align_corners, real):
    src = _source_index(in_size, out_size, scale, align_corners, True, real)
    base = np.floor(src)
    t = src - base
    a = real(_CUBIC_A)
    near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1                 # noqa: E731
    far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a           # noqa: E731
    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    matrix = np.zeros((out_size, in_size), real)
    rows, base = np.arange(out_size), base.astype(np.int64)
    for offset, weight in zip(range(-1, 3), weights):
        np.add.at(matrix, (rows, np.clip(base + offset, 0, in_size - 1)), weight)
    return matrix


def _dim_map(mode, in_size, out_size, scale, align_corners, dtype, shortcut):
    """An index vector (nearest modes) or an (out, in) weight matrix for one dim."""
    if mode in ("nearest", "nearest-exact"):
        return _nearest_index(in_size, out_size, scale, mode == "nearest-exact", shortcut)
    build = _cubic_matrix if mode == "bicubic" else _linear_matrix
    return build(in_size, out_size, scale, bool(align_corners), _opmath(dtype))


# Note [the reference's upsampling shortcuts]: its kernels copy where a nearest output
# size equals the input's (and halve the index where it is twice), but not everywhere:
# the 2-D nearest forward and every nearest backward do, the 1-D and 3-D nearest
# forwards do not; the bicubic backward copies when every size is unchanged, its forward
# does not. Followed as is, so values and gradients match it (the backward is then not
# quite the forward's adjoint at those sizes).
def _maps(mode, input_size, output_size, scales, align_corners, dtype, backward):
    shortcut = mode == "nearest" and (backward or len(output_size) == 2)
    if backward and mode == "bicubic" and tuple(input_size) == tuple(output_size):
        return [np.arange(n) for n in output_size]
    return [_dim_map(mode, i, o, s, align_corners, dtype, shortcut)
            for i, o, s in zip(input_size, output_size, scales)]


def _along(x, axis, matrix):
    moved = np.moveaxis(x, axis, -1)
    matrix = on_device_of(matrix.T.astype(x.dtype, copy=False), x)
    return np.moveaxis(np.matmul(moved, matrix), -1, axis)


def scatter_sum(g, axis, index, in_size):
    """The adjoint of gathering ``index`` along ``axis``."""
    out = zeros_on(g.shape[:axis] + (in_size,) + g.shape[axis + 1:], g.dtype, g)
    if type(g) is not MetaArray:                          # (a meta result has no values)
        np.add.at(out, (slice(None),) * axis + (on_device_of(index, g),), g)
    return out


@in_float32
def _upsample_forward(x, mode, output_size, scales, align_corners):
    nd = len(output_size)
    maps = _maps(mode, x.shape[-nd:], output_size, scales, align_corners, x.dtype, False)
    for k, m in enumerate(maps):
        axis = x.ndim - nd + k
        x = np.take(x, on_device_of(m, x), axis=axis) if m.ndim == 1 else _along(x, axis, m)
    return x.copy(order="C")


@in_float32
def _upsample_backward_forward(g, mode, input_size, output_size, scales, align_corners):
    nd = len(output_size)
    maps = _maps(mode, input_size, output_size, scales, align_corners, g.dtype, True)
    for k, (m, n_in) in enumerate(zip(maps, input_size)):
        axis = g.ndim - nd + k
        g = scatter_sum(g, axis, m, n_in) if m.ndim == 1 else _along(g, axis, m.T)
    return g.copy(order="C")


_NAMES = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear",
          "bilinear": "Bilinear", "bicubic": "Bicubic", "trilinear": "Trilinear"}
_ATTRS = ("mode", "output_size", "scales", "align_corners")


def _upsample_op(mode, nd):
    """The entry for one mode and dimensionality (its own node name)."""
    name = f"upsample_{mode.replace('-', '_')}{nd}d"
    return defop(name, _upsample_forward, inputs=("self",), attrs=_ATTRS,
                 node_name=f"Upsample{_NAMES[mode]}{nd}DBackward0",
                 vjp=(lambda F, g, self_shape, mode, output_size, scales, align_corners:
                      F._upsample_backward(g, mode, tuple(self_shape)[-len(output_size):],
                                           output_size, scales, align_corners),),
                 jvp=lambda F, t, mode, output_size, scales, align_corners:
                     F._upsample(t[0], mode, output_size, scales, align_corners))


UPSAMPLE = {(mode, nd): _upsample_op(mode, nd)
            for mode, dims in (("nearest", (1, 2, 3)), ("nearest-exact", (1, 2, 3)),
                               ("linear", (1,)), ("bilinear", (2,)), ("bicubic", (2,)),
                               ("trilinear", (3,)))
            for nd in dims}
UPSAMPLE_BACKWARD = defop(
    "upsample_backward", _upsample_backward_forward, inputs=("grad_output",),
    attrs=("mode", "input_size", "output_size", "scales", "align_corners"),
    vjp=(lambda F, g, mode, output_size, scales, align_corners:
         F._upsample(g, mode, output_size, scales, align_corners),),
    jvp=lambda F, t, mode, input_size, output_size, scales, align_corners:
        F._upsample_backward(t[0], mode, input_size, output_size, scales, align_corners))


OP_NAMES = tuple(op.name for op in UPSAMPLE.values()) + (UPSAMPLE_BACKWARD.name,)


def upsample(x, mode, output_size, scales, align_corners):
    """``x`` (N, C, *spatial) resampled to ``output_size`` (Note [separable upsampling]);
    ``scales`` has one entry (a float or None) per spatial dim."""
    _check_sizes(tuple(x.shape)[2:], tuple(output_size))
    attrs = {"mode": mode, "output_size": tuple(output_size), "scales": tuple(scales),
             "align_corners": align_corners}
    return apply_op(UPSAMPLE[(mode, len(output_size))], (x,), attrs)


def _check_sizes(input_size, output_size):
    if min(input_size + output_size) > 0:
        return
    names = ("D", "H", "W")[-len(input_size):]
    shown = [", ".join(f"{n}: {v}" for n, v in zip(names, sizes))
             for sizes in (input_size, output_size)]
    joint = " and output" if len(input_size) == 1 else " output"      # (the reference's)
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                       f"({shown[0]}){joint} ({shown[1]})")


array_fn("_upsample")(_upsample_forward)
array_fn("_upsample_backward")(_upsample_backward_forward)


@formula_helper
def _upsample(x, mode, output_size, scales, align_corners):
    return upsample(x, mode, output_size, scales, align_corners)


@formula_helper
def _upsample_backward(g, mode, input_size, output_size, scales, align_corners):
    attrs = {"mode": mode, "input_size": tuple(input_size), "output_size": tuple(output_size),
             "scales": tuple(scales), "align_corners": align_corners}
    return apply_op(UPSAMPLE_BACKWARD, (g,), attrs)
