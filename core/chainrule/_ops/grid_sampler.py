"""Derivative table: grid_sampler_2d and grid_sampler_3d, one op each like the
reference's (GridSampler2DBackward0, GridSampler3DBackward0).

Note [grid sampling as weighted taps]
    Output point p of (N, C, *out) reads the input (N, C, *in) at the grid's position
    (x, y[, z] in [-1, 1], unnormalized to pixels with slope ``scale``). The
    position's integer part picks the taps (bilinear: the 2**k corners; nearest: the
    rounded point; bicubic: the 4 x 4 neighbours) and its fraction f weighs them: per
    dim, bilinear ``1 - f, f``, bicubic the cubic-convolution polynomials (A = -0.75),
    nearest 1; a tap's weight is the product over dims, times 0 where the tap lies
    outside the input. Padding moves the position (bilinear, nearest: 'border' clamps
    it, 'reflection' folds it back then clamps; bicubic: each tap is moved) before
    the taps are read. So, with the taps and the fraction's slope ``mult`` (scale,
    times the padding's 0 / +-1, borders counted outside as in the reference) found
    once from the grid's values:
        out[n, c, p]      = sum_t w_t(f) * input[n, c, tap_t]
        d input           = the output gradient times w_t, added back into tap_t
        d grid (dim d)    = mult_d * sum_t w_t'(f)_d * sum_c g[n, c, p] * input[n, c, tap_t]
    The weights and slopes are one formula for arrays (the fast backward) and tensors,
    where f is a tensor of the grid with slope ``mult`` (its value the array's);
    reading and adding back are gather / scatter_add / sum on tensors, so double
    backward and tangents follow (the reference has no double backward here), and
    channels-last row reads, a bincount per channel and einsum on arrays. Positions
    are computed in the grid's dtype with the reference's steps, and 16-bit input
    gradients are summed in its order, so bfloat16 and float16 round as it does.
"""
import itertools

import numpy as np

from .._tensor import Tensor, on_device_of
from ._namespaces import ARRAY_NS
from ._registry import apply_op, defop

_ATTRS = ("interpolation_mode", "padding_mode", "align_corners")
_BILINEAR, _NEAREST, _BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2
_CUBIC_A = -0.75


# --- positions (on the grid's values) --------------------------------------------------------
def _unnormalize(coord, size, align_corners):
    """Grid coordinates in [-1, 1] as pixel positions (in the grid's dtype, rounded
    step by step as the reference does) and the slope of that map."""
    one, two = coord.dtype.type(1), coord.dtype.type(2)
    if align_corners:
        return (coord + one) / two * coord.dtype.type(size - 1), \
            coord.dtype.type(size - 1) / two
    return ((coord + one) * coord.dtype.type(size) - one) / two, coord.dtype.type(size) / two


def _clip(x, size):
    """Clamp into [0, size - 1]; the slope is 0 at and beyond the borders."""
    top = x.dtype.type(size - 1)
    inside = (x > 0) & (x < top)
    return np.minimum(np.maximum(x, 0), top), inside


def _reflect(x, size, align_corners):
    """Fold ``x`` back into the input by reflection at its edges (align_corners: at
    the edge pixels' centres, else at their outer sides); the slope is +-1."""
    if align_corners:
        shift, twice_span = 0.0, 2 * (size - 1)
    else:
        shift, twice_span = 0.5, 2 * size
    if twice_span == 0:
        return np.zeros_like(x), np.zeros(x.shape, bool)
    x = x + x.dtype.type(shift)
    span = x.dtype.type(twice_span)
    magnitude = np.abs(x)
    extra = magnitude - np.trunc(magnitude / span) * span
    flipped = span - extra
    flip = extra > flipped
    sign = np.where(flip ^ (x < 0), -1, 1).astype(x.dtype)
    return np.where(flip, flipped, extra) - x.dtype.type(shift), sign


def _padded(x, size, padding_mode, align_corners):
    """The position after padding and its slope (None: 1)."""
    if padding_mode == _BORDER:
        x, inside = _clip(x, size)
        return x, inside.astype(x.dtype)
    if padding_mode == _REFLECTION:
        x, sign = _reflect(x, size, align_corners)
        x, inside = _clip(x, size)
        return x, sign * inside
    return x, None


class _Taps:
    """Where each output point reads (Note [grid sampling as weighted taps]):
    ``index`` (T, N, P) flat input positions, ``inside`` (T, N, P) their 0/1 mask,
    ``corners`` each tap's per-dim offset, ``fraction`` and ``mult`` per dim (N, P)."""

    def __init__(self, grid, sizes, mode, padding_mode, align_corners):
        n, k = grid.shape[0], len(sizes)
        points = np.asarray(grid).reshape(n, -1, k)
        self.fraction, self.mult, lows = [], [], []
        for d, size in enumerate(sizes):
            x, scale = _unnormalize(points[..., k - 1 - d], size, align_corners)
            slope = None
            if mode != _BICUBIC:
                x, slope = _padded(x, size, padding_mode, align_corners)
            low = np.rint(x) if mode == _NEAREST else np.floor(x)
            self.fraction.append(x - low)
            self.mult.append(scale if slope is None else slope * scale)
            lows.append(low)
        offsets = {_BILINEAR: (0, 1), _NEAREST: (0,), _BICUBIC: (-1, 0, 1, 2)}[mode]
        self.corners = list(itertools.product(range(len(offsets)), repeat=k))
        index, inside = [], []
        for corner in self.corners:
            taps = [low + offsets[c] for low, c in zip(lows, corner)]
            if mode == _BICUBIC and padding_mode != _ZEROS:
                taps = [_padded(t, size, padding_mode, align_corners)[0]
                        for t, size in zip(taps, sizes)]
            flat, ok = _flat_index(taps, sizes)
            index.append(flat)
            inside.append(ok)
        self.index, self.inside = np.stack(index), np.stack(inside).astype(points.dtype)


def _flat_index(taps, sizes):
    """Row-major flat positions of integer taps (0 where outside) and the inside mask."""
    ok, flat = True, 0
    for tap, size in zip(taps, sizes):
        ok = ok & (tap >= 0) & (tap <= size - 1)
        flat = flat * size + np.clip(tap, 0, size - 1).astype(np.int64)
    return np.where(ok, flat, 0), ok


# --- weights (formulas: arrays or tensors) ---------------------------------------------------
def _near(x):
    a = _CUBIC_A
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _far(x):
    a = _CUBIC_A
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _near_slope(x):
    a = _CUBIC_A
    return (3 * (a + 2) * x - 2 * (a + 3)) * x


def _far_slope(x):
    a = _CUBIC_A
    return (3 * a * x - 10 * a) * x + 8 * a


def _dim_weights(f, mode):
    """One dim's tap weights and their derivatives in f."""
    if mode == _BILINEAR:
        return [1 - f, f], [-1.0, 1.0]
    if mode == _BICUBIC:
        return ([_far(f + 1), _near(f), _near(1 - f), _far(2 - f)],
                [_far_slope(f + 1), _near_slope(f), -_near_slope(1 - f), -_far_slope(2 - f)])
    return [1.0], [0.0]


def _fractions(F, grid, taps):
    """The fractions as F values: arrays, or tensors of ``grid`` with slope ``mult``."""
    if not F.is_tensor_path():
        return taps.fraction
    points = F.reshape(grid, (grid.shape[0], -1, grid.shape[-1]))
    moved = points - points.detach()                          # value 0, slope 1
    k = len(taps.fraction)
    return [_const(F, f, grid) + F.select(moved, 2, k - 1 - d) * _const(F, m, grid)
            for d, (f, m) in enumerate(zip(taps.fraction, taps.mult))]


def _tap_weights(F, grid, taps, mode):
    """Per tap, its weight (N, P)."""
    per_dim = [_dim_weights(f, mode)[0] for f in _fractions(F, grid, taps)]
    return [_product([w[c] for w, c in zip(per_dim, corner)]) * _const(F, inside, grid)
            for corner, inside in zip(taps.corners, taps.inside)]


def _tap_slopes(F, grid, taps, mode):
    """Per tap and dim, the derivative of the tap's weight in the grid (N, P)."""
    per_dim = [_dim_weights(f, mode) for f in _fractions(F, grid, taps)]
    out = []
    for corner, inside in zip(taps.corners, taps.inside):
        inside = _const(F, inside, grid)
        out.append([_product([s[c] if e == d else w[c]
                              for e, ((w, s), c) in enumerate(zip(per_dim, corner))])
                    * _const(F, taps.mult[d], grid) * inside for d in range(len(corner))])
    return out


def _product(factors):
    out = factors[0]
    for f in factors[1:]:
        out = f * out
    return out


def _const(F, array, like):
    """A constant of the taps (array or scalar) on ``like``'s path and device."""
    if np.ndim(array) == 0:
        return array
    if F.is_tensor_path():
        return Tensor._wrap(on_device_of(array, like._data))
    return on_device_of(array, like)


def _raw(F, t):
    return t._data if F.is_tensor_path() else t


def _taps_of(F, input_shape, grid, attrs):
    return _Taps(_raw(F, grid), tuple(input_shape)[2:], *attrs)


def _pixels(input):
    """(N, C, *in) -> its channels-last rows (N * S, C) and each sample's first row
    (N, 1): a tap reads one row (twice as fast as gathering along the last dim)."""
    n, c = input.shape[0], input.shape[1]
    size = int(np.prod(input.shape[2:]))
    pixels = input.reshape(n, c, size).transpose(0, 2, 1).reshape(n * size, c)
    return pixels, on_device_of(np.arange(n)[:, None] * size, pixels)


def _reader(F, input):
    """A function from taps (N, P) to the input's values there, (N, C, P)."""
    n, c = input.shape[0], input.shape[1]
    if F.is_tensor_path():
        flat = F.reshape(input, (n, c, -1))
        return lambda index: F.gather(flat, 2, F.expand(_const(F, index[:, None, :], flat),
                                                        (n, c, index.shape[-1])))
    pixels, starts = _pixels(input)
    return lambda index: pixels[starts + on_device_of(index, pixels)].transpose(0, 2, 1)


# --- forward, VJPs and JVP -------------------------------------------------------------------
def _sample(F, input, grid, attrs, taps=None):
    """The sampled (N, C, P) (Note [grid sampling as weighted taps]); arrays are summed
    channels-last, in place."""
    taps = taps or _taps_of(F, input.shape, grid, attrs)
    weights = _tap_weights(F, grid, taps, attrs[0])
    if not F.is_tensor_path():
        pixels, starts = _pixels(input)
        out = None
        for index, w in zip(taps.index, weights):
            term = pixels[starts + on_device_of(index, pixels)]        # a fresh array
            term *= w[..., None]
            if out is None:
                out = term
            else:
                out += term
        return out.transpose(0, 2, 1)
    read, out = _reader(F, input), None
    for index, w in zip(taps.index, weights):
        term = read(index) * F.unsqueeze(w, 1)
        out = term if out is None else out + term
    return out


def _forward(input, grid, interpolation_mode, padding_mode, align_corners):
    out = _sample(ARRAY_NS, input, grid, (interpolation_mode, padding_mode, align_corners))
    return np.ascontiguousarray(out).reshape(input.shape[:2] + grid.shape[1:-1])


def _input_grad(F, g, grid, input_shape, interpolation_mode, padding_mode, align_corners):
    attrs = (interpolation_mode, padding_mode, align_corners)
    taps = _taps_of(F, input_shape, grid, attrs)
    n, c = input_shape[0], input_shape[1]
    rows = F.reshape(g, (n, c, -1))
    weights = _tap_weights(F, grid, taps, interpolation_mode)
    size = int(np.prod(input_shape[2:]))
    if F.is_tensor_path():
        spread = _scattered(F, [rows * F.unsqueeze(w, 1) for w in weights], taps.index, size)
    else:
        spread = _spread(rows, np.stack(weights), taps.index, size)
    return F.reshape(spread, tuple(input_shape))


def _scattered(F, shares, index, size):
    """Each tap's (N, C, P) share added into its input positions: (N, C, size)."""
    n, c = shares[0].shape[0], shares[0].shape[1]
    where = F.expand(_const(F, np.concatenate(list(index), 1)[:, None, :], shares[0]),
                     (n, c, index.shape[0] * index.shape[2]))
    return F.scatter_add(F._new_zeros(shares[0], (n, c, size)), 2, where, F.cat(shares, 2))


def _spread(rows, weights, index, size):
    """:func:`_scattered` on arrays, from the output gradient ``rows`` (N, C, P) and
    the taps' ``weights`` (T, N, P): one bincount per channel over all taps."""
    n, c = rows.shape[0], rows.shape[1]
    keys = index + np.arange(n)[:, None] * size                               # (T, N, P)
    if rows.dtype.itemsize == 2:
        return _spread_in_order(rows, weights, keys, size)
    out, flat_keys = np.empty((c, n * size), rows.dtype), keys.reshape(-1)
    for channel in range(c):
        out[channel] = np.bincount(flat_keys, (weights * rows[:, channel]).reshape(-1),
                                   minlength=n * size)
    return np.ascontiguousarray(out.reshape(c, n, size).transpose(1, 0, 2))


def _spread_in_order(rows, weights, keys, size):
    """:func:`_spread` for 16-bit dtypes, rounding after each addition in the
    reference's order (output point by point, its taps in turn), so the sums match."""
    n, c = rows.shape[0], rows.shape[1]
    values = weights.transpose(1, 2, 0)[..., None] * rows.transpose(0, 2, 1)[:, :, None, :]
    out = np.zeros((n * size, c), rows.dtype)
    np.add.at(out, keys.transpose(1, 2, 0).reshape(-1), values.reshape(-1, c))
    return np.ascontiguousarray(out.reshape(n, size, c).transpose(0, 2, 1))


def _seen(F, input, g, taps):
    """Per tap, sum over channels of the output gradient times the input there (N, P)."""
    n, c = input.shape[0], input.shape[1]
    if F.is_tensor_path():
        read, rows = _reader(F, input), F.reshape(g, (n, c, -1))
        return [F.sum(rows * read(index), 1) for index in taps.index]
    pixels, starts = _pixels(input)
    points = np.ascontiguousarray(g.reshape(n, c, -1).transpose(0, 2, 1))       # (N, P, C)
    if points.dtype.itemsize == 2:                   # (no einsum for bfloat16)
        return [F.sum(pixels[starts + index] * points, 2) for index in taps.index]
    return [np.einsum("npc,npc->np", pixels[starts + index], points) for index in taps.index]


def _grid_grad(F, g, input, grid, interpolation_mode, padding_mode, align_corners):
    attrs = (interpolation_mode, padding_mode, align_corners)
    if interpolation_mode == _NEAREST:
        return F._new_zeros(g, tuple(grid.shape))
    taps = _taps_of(F, input.shape, grid, attrs)
    slopes = _tap_slopes(F, grid, taps, interpolation_mode)
    per_dim = [None] * len(taps.fraction)
    for seen, tap_slopes in zip(_seen(F, input, g, taps), slopes):
        for d, s in enumerate(tap_slopes):
            term = seen * s
            per_dim[d] = term if per_dim[d] is None else per_dim[d] + term
    return F.reshape(F.stack(per_dim[::-1], 2), tuple(grid.shape))


def _jvp(F, t, input, grid, interpolation_mode, padding_mode, align_corners):
    attrs = (interpolation_mode, padding_mode, align_corners)
    taps = _taps_of(F, input.shape, grid, attrs)
    out = None if t[0] is None else _sample(F, t[0], grid, attrs, taps)
    if t[1] is None or interpolation_mode == _NEAREST:
        if out is None:                          # nearest: the grid moves nothing
            return F._new_zeros(grid, tuple(input.shape)[:2] + tuple(grid.shape)[1:-1])
        return _out_shaped(F, out, grid)
    read, moves = _reader(F, input), F.reshape(t[1], (input.shape[0], -1, t[1].shape[-1]))
    k = len(taps.fraction)
    slopes = _tap_slopes(F, grid, taps, interpolation_mode)
    for i, tap_slopes in enumerate(slopes):
        speed = sum(F.select(moves, 2, k - 1 - d) * s for d, s in enumerate(tap_slopes))
        term = read(taps.index[i]) * F.unsqueeze(speed, 1)
        out = term if out is None else out + term
    return _out_shaped(F, out, grid)


def _out_shaped(F, out, grid):
    """(N, C, P) -> (N, C, *grid's points)."""
    return F.reshape(out, tuple(out.shape)[:2] + tuple(grid.shape)[1:-1])


GRID_SAMPLER_2D = defop("grid_sampler_2d", _forward, inputs=("input", "grid"), attrs=_ATTRS,
                        node_name="GridSampler2DBackward0", vjp=(_input_grad, _grid_grad),
                        jvp=_jvp)
GRID_SAMPLER_3D = defop("grid_sampler_3d", _forward, inputs=("input", "grid"), attrs=_ATTRS,
                        node_name="GridSampler3DBackward0", vjp=(_input_grad, _grid_grad),
                        jvp=_jvp)
OP_NAMES = ("grid_sampler_2d", "grid_sampler_3d")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """The table op for a 4-D or 5-D input (Note [grid sampling as weighted taps])."""
    op = GRID_SAMPLER_2D if input.dim() == 4 else GRID_SAMPLER_3D
    attrs = {"interpolation_mode": int(interpolation_mode), "padding_mode": int(padding_mode),
             "align_corners": bool(align_corners)}
    return apply_op(op, (input, grid), attrs)
