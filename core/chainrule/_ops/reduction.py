"""Derivative table: reductions (sum, mean, prod, var, std, amax, amin, max, min,
logsumexp, softmax, log_softmax, norm, cumsum)."""
import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ._common import EMPTY, float_input, public, wrap_dims
from ._registry import apply_op, defop


def _expand_grad(F, g, self_shape, dim, keepdim):
    """Broadcast a reduced gradient back over the reduced dims."""
    if dim is not None and not keepdim:
        for d in dim:
            g = F.unsqueeze(g, d)
    return F.expand(g, self_shape)


SUM = defop("sum", lambda a, dim, keepdim: np.sum(a, axis=dim, keepdims=keepdim),
            attrs=("dim", "keepdim"),
            vjp=(lambda F, g, self_shape, dim, keepdim: _expand_grad(F, g, self_shape, dim, keepdim),),
            jvp=lambda F, t, dim, keepdim: F.sum(t[0], dim, keepdim))
MEAN = defop("mean", lambda a, dim, keepdim: np.mean(a, axis=dim, keepdims=keepdim),
             attrs=("dim", "keepdim"),
             vjp=(lambda F, g, self_shape, dim, keepdim:
                  _expand_grad(F, g, self_shape, dim, keepdim) / _count(self_shape, dim),),
             jvp=lambda F, t, dim, keepdim: F.mean(t[0], dim, keepdim))


def _count(shape, dim):
    n = 1
    for d in (range(len(shape)) if dim is None else dim):
        n *= shape[d]
    return n


def _reduce_args(input, dim, keepdim, dtype, name):
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind in "biu" and name == "sum":
        input = input.to(_dtypes.int64)
    dims = wrap_dims(dim, input._data.ndim)
    if dims == () and dim is not None:
        dims = None if name == "sum" else dims
    return input, {"dim": dims, "keepdim": bool(keepdim)}


@public
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over ``dim`` (an int or a tuple of ints).

    >>> import chainrule as cr
    >>> cr.sum(cr.tensor([[1., 2.], [3., 4.]]), dim=0).tolist()
    [4.0, 6.0]
    """
    input, attrs = _reduce_args(input, dim, keepdim, dtype, "sum")
    return apply_op(SUM, (input,), attrs)


@public
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements, or over ``dim``.

    >>> import chainrule as cr
    >>> cr.mean(cr.tensor([1., 2., 3.])).item()
    2.0
    """
    if input._data.dtype.kind in "biu" and dtype is None:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {input.dtype.name.capitalize()}")
    input, attrs = _reduce_args(input, dim, keepdim, dtype, "mean")
    return apply_op(MEAN, (input,), attrs)


def sum_to(x, shape):
    """Sum a tensor down to ``shape`` (formula helper for broadcast gradients)."""
    from ..autograd._sum_to import sum_to as _sum_to
    return _sum_to(x, shape)


from ._common import FUNCTIONS  # noqa: E402
FUNCTIONS["sum_to"] = sum_to
