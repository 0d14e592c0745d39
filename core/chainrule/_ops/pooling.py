"""Derivative table: pooling ops, recorded as the reference's nodes.

Note [pooling windows]
    A pooling over the last ``k`` dims of an input reads, for each output position, a
    window of input positions: a table ``index`` (outputs, taps) of flat positions in
    one input plane (the product of the pooled dims), computed once per geometry and
    cached. Taps that fall in the padding (or past a short adaptive window) point to
    one extra position past the plane, which holds the padding value (-inf for max,
    0 for average). Each op works on the input as (planes, plane) and restores the
    leading dims (batch and channels, or channels alone), so unbatched inputs need no
    extra node.

    Max pooling: the caller picks each window's first maximum (the reference's
    tie-break) as flat ``indices`` into the plane; the op gathers them (the input's
    gradient is scattered back to them). Average pooling (and adaptive average) is
    linear: ``sum of the window / divisor``; its backward adds ``g / divisor`` to
    every tap, a table op itself so that double backward works.
"""
import functools
import math

import numpy as np

from .._batched import on_values
from .._tensor import Tensor, on_device_of
from ._common import FUNCTIONS, formula_helper
from ._namespaces import array_fn
from ._registry import NONDIFF, apply_op, defop


# --- geometry ------------------------------------------------------------------------------
def out_size(size, k, s, p, d, ceil_mode):
    """The number of windows along one dim (the reference's formula)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1                 # the last window must start inside the input or left pad
    return out


def _table(per_dim, sizes):
    """(outputs, taps) flat positions from per-dim (out, taps) position tables (-1
    outside the plane); positions outside map to the extra position ``prod(sizes)``."""
    n, inside = len(per_dim), np.ones((1,) * (2 * len(per_dim)), bool)
    index = np.zeros((1,) * (2 * n), np.int64)
    for d, t in enumerate(per_dim):
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = t.shape
        index = index + t.reshape(shape) * int(np.prod(sizes[d + 1:], dtype=np.int64))
        inside = inside & (t.reshape(shape) >= 0)
    outputs = int(np.prod([t.shape[0] for t in per_dim]))
    return np.where(inside, index, int(np.prod(sizes))).reshape(outputs, -1)


@functools.lru_cache(maxsize=256)
def window_table(sizes, kernel, stride, padding, dilation, ceil_mode):
    """(output sizes, index table) of a strided pooling (Note [pooling windows])."""
    outs, per_dim = [], []
    for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation):
        o = out_size(n, k, s, p, d, ceil_mode)
        t = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d - p
        per_dim.append(np.where((t >= 0) & (t < n), t, -1))
        outs.append(o)
    return tuple(outs), _table(per_dim, sizes)


def adaptive_bounds(size, out):
    """Window i of ``out`` over ``size`` spans [floor(i size / out), ceil((i+1) size / out))."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


@functools.lru_cache(maxsize=256)
def adaptive_table(sizes, outs):
    """(output sizes, index table) of an adaptive pooling to ``outs``."""
    per_dim = []
    for n, o in zip(sizes, outs):
        start, stop = adaptive_bounds(n, o)
        t = start[:, None] + np.arange(int((stop - start).max()))[None, :]
        per_dim.append(np.where(t < stop[:, None], t, -1))
    return tuple(outs), _table(per_dim, sizes)


@functools.lru_cache(maxsize=256)
def avg_divisor(sizes, kernel, stride, padding, ceil_mode, count_include_pad):
    """Per output: the taps inside the padded input (or inside the input alone)."""
    counts = []
    for n, k, s, p in zip(sizes, kernel, stride, padding):
        start = np.arange(out_size(n, k, s, p, 1, ceil_mode)) * s - p
        stop = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, stop = np.maximum(start, 0), np.minimum(stop, n)
        counts.append(stop - start)
    divisor = counts[0]
    for c in counts[1:]:
        divisor = np.multiply.outer(divisor, c)
    return divisor.reshape(-1)


@functools.lru_cache(maxsize=256)
def adaptive_divisor(sizes, outs):
    table = adaptive_table(sizes, outs)[1]
    return (table < int(np.prod(sizes))).sum(1)


# --- max pooling ---------------------------------------------------------------------------
def max_indices(x, k, table):
    """Flat positions of each window's first maximum (NaN counts as the maximum) in its
    plane, shaped like the output; a window of -inf only picks its first real tap."""
    lead, plane = x.shape[:x.ndim - k], int(np.prod(x.shape[x.ndim - k:]))
    flat = x.reshape(-1, plane)
    ext = np.concatenate([flat, np.full_like(flat[:, :1], -np.inf)], axis=1)
    windows = np.take(ext, on_device_of(table.reshape(-1), x), axis=1)
    windows = windows.reshape(flat.shape[0], table.shape[0], table.shape[1])
    first_real = on_device_of(np.where(table == plane, plane, table).min(1)[None], x)
    taps = on_device_of(table, x)
    pick = np.take_along_axis(taps[None], np.argmax(windows, axis=2)[..., None], 2)[..., 0]
    pick = np.where(pick == plane, first_real, pick)
    return pick.astype(np.int64)


def _planes(shape, k):
    return int(np.prod(shape[:len(shape) - k], dtype=np.int64))


def _gather_forward(k):
    def forward(x, indices, **attrs):
        rows = _planes(x.shape, k)
        return np.take_along_axis(x.reshape(rows, -1), indices.reshape(rows, -1),
                                  1).reshape(indices.shape)
    return forward


def _scatter_vjp(k):
    def vjp(F, g, self_shape, indices):
        rows = _planes(self_shape, k)
        zeros = F._new_zeros(g, (rows, int(np.prod(self_shape[len(self_shape) - k:]))))
        flat = F.scatter_add(zeros, 1, F.reshape(indices, (rows, -1)), F.reshape(g, (rows, -1)))
        return F.reshape(flat, tuple(self_shape))
    return vjp


def _gather_jvp(k):
    def jvp(F, t, indices):
        rows = _planes(tuple(t[0].shape), k)
        return F.reshape(F.gather(F.reshape(t[0], (rows, -1)), 1, F.reshape(indices, (rows, -1))),
                         tuple(indices.shape))
    return jvp


_MAX_ATTRS = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")


def _max_op(name, node_name, k, attrs):
    return defop(name, _gather_forward(k), inputs=("self", "indices"), attrs=attrs,
                 node_name=node_name, vjp=(_scatter_vjp(k), NONDIFF), jvp=_gather_jvp(k))


MAX_POOL = {2: _max_op("max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0", 2,
                       _MAX_ATTRS),
            3: _max_op("max_pool3d_with_indices", "MaxPool3DWithIndicesBackward0", 3,
                       _MAX_ATTRS)}
ADAPTIVE_MAX_POOL = {2: _max_op("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0", 2,
                                ("output_size",)),
                     3: _max_op("adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0", 3,
                                ("output_size",))}


def max_pool(input, k, kernel, stride, padding, dilation, ceil_mode):
    """(values, indices) of a checked max pooling over the last ``k`` dims."""
    sizes = tuple(input.shape[input.dim() - k:])
    outs, table = window_table(sizes, kernel, stride, padding, dilation, bool(ceil_mode))
    return _max_by_table(input, k, outs, table, MAX_POOL[k], {
        "kernel_size": kernel, "stride": stride, "padding": padding, "dilation": dilation,
        "ceil_mode": bool(ceil_mode)})


def adaptive_max_pool(input, k, outs):
    """(values, indices) of a checked adaptive max pooling over the last ``k`` dims."""
    sizes = tuple(input.shape[input.dim() - k:])
    table = adaptive_table(sizes, outs)[1]
    return _max_by_table(input, k, outs, table, ADAPTIVE_MAX_POOL[k], {"output_size": outs})


def _max_by_table(input, k, outs, table, op, attrs):
    def positions(a):
        return max_indices(a, k, table).reshape(a.shape[:a.ndim - k] + tuple(outs))
    indices = on_values(positions, input)      # under vmap: the whole batch's, in one call
    return apply_op(op, (input, indices), attrs), indices


# --- average pooling -----------------------------------------------------------------------
def _avg_geometry(shape, attrs):
    """(output sizes, index table, divisor per output) of an average pooling op."""
    k = len(attrs.get("output_size") or attrs["kernel_size"])
    sizes = tuple(shape[len(shape) - k:])
    if "output_size" in attrs:
        outs, table = adaptive_table(sizes, attrs["output_size"])
        return outs, table, adaptive_divisor(sizes, outs)
    outs, table = window_table(sizes, attrs["kernel_size"], attrs["stride"], attrs["padding"],
                               (1,) * k, attrs["ceil_mode"])
    if attrs["divisor_override"]:
        return outs, table, np.full(table.shape[0], attrs["divisor_override"])
    return outs, table, avg_divisor(sizes, attrs["kernel_size"], attrs["stride"],
                                    attrs["padding"], attrs["ceil_mode"],
                                    attrs["count_include_pad"])


def _avg_forward(x, **attrs):
    outs, table, divisor = _avg_geometry(x.shape, attrs)
    k = len(outs)
    flat = x.reshape(_planes(x.shape, k), -1)
    ext = np.concatenate([flat, np.zeros_like(flat[:, :1])], axis=1)
    windows = np.take(ext, on_device_of(table.reshape(-1), x), axis=1)
    total = windows.reshape(flat.shape[0], table.shape[0], table.shape[1]).sum(2)
    out = total / on_device_of(divisor.astype(x.dtype), x)
    return out.reshape(x.shape[:x.ndim - k] + outs)


def _avg_backward_forward(g, self_shape, geometry):
    """The input's gradient: ``g / divisor`` added to every tap of its window."""
    outs, table, divisor = _avg_geometry(self_shape, dict(geometry))
    k = len(outs)
    rows, plane = _planes(self_shape, k), int(np.prod(self_shape[len(self_shape) - k:]))
    share = g.reshape(rows, -1) / on_device_of(divisor.astype(g.dtype), g)
    out = np.zeros_like(g, shape=(rows * (plane + 1),))
    where = on_device_of(np.arange(rows)[:, None, None] * (plane + 1) + table[None], g)
    np.add.at(out, where.reshape(-1), np.broadcast_to(share[..., None], where.shape).reshape(-1))
    return out.reshape(rows, plane + 1)[:, :plane].reshape(self_shape)


def _geometry_key(op_name, attrs):
    return (("op", op_name),) + tuple(sorted(attrs.items()))


def _avg_by_key(x, geometry):
    return _avg_forward(x, **{k: v for k, v in geometry if k != "op"})


@formula_helper
def _avg_pool(x, geometry):
    name = dict(geometry)["op"]
    return apply_op(AVG_POOL[name], (x,), {k: v for k, v in geometry if k != "op"})


@formula_helper
def _avg_pool_backward(g, self_shape, geometry):
    return apply_op(AVG_POOL_BACKWARD, (g,), {"self_shape": tuple(self_shape),
                                              "geometry": geometry})


array_fn("_avg_pool")(_avg_by_key)
array_fn("_avg_pool_backward")(_avg_backward_forward)


def _avg_op(name, node_name):
    key = functools.partial(_geometry_key, name)
    return defop(
        name, _avg_forward, attrs=_AVG_ATTRS, node_name=node_name,
        vjp=(lambda F, g, self_shape, kernel_size, stride, padding, ceil_mode,
             count_include_pad, divisor_override: F._avg_pool_backward(g, self_shape, key(dict(
                 kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                 count_include_pad=count_include_pad, divisor_override=divisor_override))),),
        jvp=lambda F, t, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override: F._avg_pool(t[0], key(dict(
            kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
            count_include_pad=count_include_pad, divisor_override=divisor_override))))


def _adaptive_avg_op(name, node_name):
    key = functools.partial(_geometry_key, name)
    return defop(
        name, _avg_forward, attrs=("output_size",), node_name=node_name,
        vjp=(lambda F, g, self_shape, output_size:
             F._avg_pool_backward(g, self_shape, key({"output_size": output_size})),),
        jvp=lambda F, t, output_size: F._avg_pool(t[0], key({"output_size": output_size})))


_AVG_ATTRS = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
              "divisor_override")
AVG_POOL = {"avg_pool2d": _avg_op("avg_pool2d", "AvgPool2DBackward0"),
            "avg_pool3d": _avg_op("avg_pool3d", "AvgPool3DBackward0"),
            "adaptive_avg_pool2d": _adaptive_avg_op("adaptive_avg_pool2d",
                                                    "AdaptiveAvgPool2DBackward0"),
            "adaptive_avg_pool3d": _adaptive_avg_op("adaptive_avg_pool3d",
                                                    "AdaptiveAvgPool3DBackward0")}
# the input's gradient of every average pooling (linear: its VJP is the pooling)
AVG_POOL_BACKWARD = defop(
    "avg_pool_backward", _avg_backward_forward, inputs=("grad_output",),
    attrs=("self_shape", "geometry"),
    vjp=(lambda F, g, geometry: F._avg_pool(g, geometry),),
    jvp=lambda F, t, self_shape, geometry: F._avg_pool_backward(t[0], self_shape, geometry))


OP_NAMES = tuple(op.name for op in (*MAX_POOL.values(), *ADAPTIVE_MAX_POOL.values(),
                                    *AVG_POOL.values(), AVG_POOL_BACKWARD))


def avg_pool(input, k, kernel, stride, padding, ceil_mode, count_include_pad,
             divisor_override):
    """A checked average pooling over the last ``k`` dims (AvgPool2D/3DBackward0)."""
    return apply_op(AVG_POOL[f"avg_pool{k}d"], (input,), {
        "kernel_size": kernel, "stride": stride, "padding": padding,
        "ceil_mode": bool(ceil_mode), "count_include_pad": bool(count_include_pad),
        "divisor_override": divisor_override})


def adaptive_avg_pool(input, k, outs):
    """A checked adaptive average pooling over the last ``k`` dims to ``outs``."""
    return apply_op(AVG_POOL[f"adaptive_avg_pool{k}d"], (input,), {"output_size": tuple(outs)})
