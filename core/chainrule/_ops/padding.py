"""Derivative table: reflection and replication padding, one op per reference node
(ReflectionPad{1,2,3}DBackward0, ReplicationPad{1,2,3}DBackward0).

Note [gathered padding]
    Each padded dim copies input positions: reflect mirrors at the edges (without
    repeating the edge), replicate repeats the edge. The forward gathers an index per
    padded trailing dim; the map is linear, so its VJP is the adjoint
    (``pad_backward``: the gradient scatter-added back to those positions), the
    adjoint's VJP is the gather again, and each one's JVP is itself.
"""
import numpy as np

from .._tensor import on_device_of
from ._common import formula_helper
from ._namespaces import array_fn
from ._registry import apply_op, defop
from .upsample import scatter_sum as _scatter_sum


def source_index(mode, size, before, after):
    """For each output position along a dim, the input position it copies."""
    i = np.arange(-before, size + after)
    if mode == "replicate":
        return np.clip(i, 0, size - 1)
    i = np.abs(i)
    return np.where(i >= size, 2 * (size - 1) - i, i)


def _indices(mode, sizes, pads):
    return [source_index(mode, n, b, a) for n, (b, a) in zip(sizes, pads)]


def _pad_forward(x, mode, pads):
    k = len(pads)
    for d, index in enumerate(_indices(mode, x.shape[-k:], pads)):
        x = np.take(x, on_device_of(index, x), axis=x.ndim - k + d)
    return x.copy(order="C")


def _pad_backward_forward(g, mode, pads, input_size):
    k = len(pads)
    for d, (index, n) in enumerate(zip(_indices(mode, input_size, pads), input_size)):
        g = _scatter_sum(g, g.ndim - k + d, index, n)
    return g.copy(order="C")


_NAMES = {"reflect": "Reflection", "replicate": "Replication"}


def _pad_op(mode, k):
    return defop(f"{_NAMES[mode].lower()}_pad{k}d", _pad_forward, attrs=("mode", "pads"),
                 node_name=f"{_NAMES[mode]}Pad{k}DBackward0",
                 vjp=(lambda F, g, self_shape, mode, pads:
                      F._pad_backward(g, mode, pads, tuple(self_shape)[-len(pads):]),),
                 jvp=lambda F, t, mode, pads: F._gather_pad(t[0], mode, pads))


PADS = {(mode, k): _pad_op(mode, k) for mode in _NAMES for k in (1, 2, 3)}
PAD_BACKWARD = defop(
    "pad_backward", _pad_backward_forward, inputs=("grad_output",),
    attrs=("mode", "pads", "input_size"),
    vjp=(lambda F, g, mode, pads: F._gather_pad(g, mode, pads),),
    jvp=lambda F, t, mode, pads, input_size: F._pad_backward(t[0], mode, pads, input_size))
OP_NAMES = tuple(op.name for op in PADS.values()) + (PAD_BACKWARD.name,)

array_fn("_gather_pad")(_pad_forward)
array_fn("_pad_backward")(_pad_backward_forward)


@formula_helper
def _gather_pad(x, mode, pads):
    """``x`` padded on its last len(pads) dims by ``mode`` ('reflect' or 'replicate');
    ``pads`` is ((before, after), ...) in dim order (Note [gathered padding])."""
    return apply_op(PADS[(mode, len(pads))], (x,), {"mode": mode, "pads": tuple(pads)})


@formula_helper
def _pad_backward(g, mode, pads, input_size):
    attrs = {"mode": mode, "pads": tuple(pads), "input_size": tuple(input_size)}
    return apply_op(PAD_BACKWARD, (g,), attrs)
