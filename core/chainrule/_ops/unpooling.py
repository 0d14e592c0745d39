"""Derivative table: max_unpool2d and max_unpool3d, one op per reference node
(MaxUnpool2DBackward0, MaxUnpool3DBackward0; the 1-D form is the 2-D op over an added
trailing dim, as in the reference).

Note [unpooling writes at the pooling's indices]
    max unpooling writes each input value at the flat position (over the trailing
    ``len(output_size)`` dims) that ``indices`` gives, zeros elsewhere; where indices
    repeat, the last write wins (the reference's sequential loop). Its VJP reads the
    output gradient back at those positions (a gather over the flattened plane, the
    reference's max_pool_double_backward), its JVP unpools the tangent.
"""
import numpy as np

from .._meta import MetaArray
from .._tensor import on_device_of, zeros_on
from ._common import formula_helper
from ._namespaces import array_fn
from ._registry import NONDIFF, apply_op, defop


def _unpool_forward(x, indices, output_size):
    n = len(output_size)
    lead, plane = x.shape[:-n], int(np.prod(output_size))
    out = zeros_on(lead + (plane,), x.dtype, x)
    if type(x) is not MetaArray and x.size:           # (a meta result has no values)
        rows = int(np.prod(lead))
        flat = out.reshape(rows, plane)
        where = indices.reshape(rows, -1)
        flat[on_device_of(np.arange(rows)[:, None], x), where] = x.reshape(rows, -1)
    return out.reshape(lead + tuple(output_size))


def _gather_back(F, g, indices, indices_shape, output_size):
    n = len(output_size)
    lead = tuple(indices_shape)[:-n]
    picked = F.gather(F.reshape(g, lead + (-1,)), len(lead), F.reshape(indices, lead + (-1,)))
    return F.reshape(picked, tuple(indices_shape))


def _unpool_op(k):
    return defop(f"max_unpool{k}d", _unpool_forward, inputs=("self", "indices"),
                 attrs=("output_size",), node_name=f"MaxUnpool{k}DBackward0",
                 vjp=(lambda F, g, indices, indices_shape, output_size:
                      _gather_back(F, g, indices, indices_shape, output_size), NONDIFF),
                 jvp=lambda F, t, indices, output_size: F._max_unpool(t[0], indices,
                                                                      output_size))


UNPOOLS = {k: _unpool_op(k) for k in (2, 3)}
OP_NAMES = tuple(op.name for op in UNPOOLS.values())

array_fn("_max_unpool")(_unpool_forward)


@formula_helper
def _max_unpool(x, indices, output_size):
    """``x`` written at ``indices`` into zeros of trailing size ``output_size`` (Note
    [unpooling writes at the pooling's indices])."""
    return apply_op(UNPOOLS[len(output_size)], (x, indices), {"output_size": tuple(output_size)})
