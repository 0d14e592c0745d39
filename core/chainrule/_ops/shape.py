"""Derivative table: shape ops, views and indexing."""
import numpy as np

from .._tensor import Tensor
from ._common import EMPTY, public, wrap_dim
from ._registry import defop
from .views import make_view


def _view_fn(op, attrs, public_fn, *args):
    """How a view re-makes itself from its base, on ndarrays or Tensors."""
    def view_fn(x):
        if isinstance(x, Tensor):
            return public_fn(x, *args)
        return op.forward(x, **attrs)
    return view_fn


RESHAPE = defop("reshape", lambda a, shape: np.reshape(a, shape), attrs=("shape",),
                node_name="ViewBackward0",
                vjp=(lambda F, g, self_shape: F.reshape(g, self_shape),),
                jvp=lambda F, t, shape: F.reshape(t[0], shape))
EXPAND = defop("expand", lambda a, shape: np.broadcast_to(a, shape), attrs=("shape",),
               vjp=(lambda F, g, self_shape: F.sum_to(g, self_shape),),
               jvp=lambda F, t, shape: F.expand(t[0], shape))
PERMUTE = defop("permute", lambda a, dims: np.transpose(a, dims), attrs=("dims",),
                vjp=(lambda F, g, dims: F.permute(g, tuple(np.argsort(dims))),),
                jvp=lambda F, t, dims: F.permute(t[0], dims))
TRANSPOSE = defop("transpose", lambda a, dim0, dim1: np.swapaxes(a, dim0, dim1),
                  attrs=("dim0", "dim1"),
                  vjp=(lambda F, g, dim0, dim1: F.transpose(g, dim0, dim1),),
                  jvp=lambda F, t, dim0, dim1: F.transpose(t[0], dim0, dim1))
UNSQUEEZE = defop("unsqueeze", lambda a, dim: np.expand_dims(a, dim), attrs=("dim",),
                  vjp=(lambda F, g, dim: F.squeeze(g, dim),),
                  jvp=lambda F, t, dim: F.unsqueeze(t[0], dim))
SQUEEZE = defop("squeeze", lambda a, dim: np.squeeze(a, dim), attrs=("dim",),
                vjp=(lambda F, g, self_shape: F.reshape(g, self_shape),),
                jvp=lambda F, t, dim: F.squeeze(t[0], dim))


def _infer_shape(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    total = 1
    for s in shape:
        total *= s
    if total != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


@public
def reshape(input, *shape):
    """The same data with a new shape (a view when the layout allows, like NumPy).

    >>> import chainrule as cr
    >>> cr.reshape(cr.arange(6), (2, 3)).shape
    chainrule.Size([2, 3])
    """
    shape = _infer_shape(_shape_arg(shape), input._data.size)
    attrs = {"shape": shape}
    return make_view(RESHAPE, input, attrs, _view_fn(RESHAPE, attrs, reshape, shape))


@public
def expand(input, *sizes):
    """Broadcast singleton dims to ``sizes`` (-1 keeps a dim) without copying.

    >>> import chainrule as cr
    >>> cr.ones(3, 1).expand(3, 4).shape
    chainrule.Size([3, 4])
    """
    sizes = _shape_arg(sizes)
    lead = len(sizes) - input._data.ndim
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater "
                           f"or equal to the number of dimensions in the tensor "
                           f"({input._data.ndim})")
    shape = tuple(input._data.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    for i, s in enumerate(input._data.shape):
        if s != 1 and s != shape[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[lead + i]}) must match "
                               f"the existing size ({s}) at non-singleton dimension {lead + i}.  "
                               f"Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(input._data.shape)}")
    attrs = {"shape": shape}
    return make_view(EXPAND, input, attrs, _view_fn(EXPAND, attrs, expand, shape))


@public
def permute(input, *dims):
    """Reorder the dimensions (a view).

    >>> import chainrule as cr
    >>> cr.zeros(2, 3, 4).permute(2, 0, 1).shape
    chainrule.Size([4, 2, 3])
    """
    dims = tuple(wrap_dim(d, input._data.ndim) for d in _shape_arg(dims))
    if sorted(dims) != list(range(input._data.ndim)):
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input._data.ndim} is not equal to len(dims) = "
                           f"{len(dims)}" if len(dims) != input._data.ndim
                           else f"permute(): duplicate dims are not allowed.")
    attrs = {"dims": dims}
    return make_view(PERMUTE, input, attrs, _view_fn(PERMUTE, attrs, permute, dims))


@public
def transpose(input, dim0, dim1):
    """Swap two dimensions (a view).

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).transpose(0, 1).shape
    chainrule.Size([3, 2])
    """
    nd = input._data.ndim
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    if nd == 0:
        return input
    attrs = {"dim0": d0, "dim1": d1}
    return make_view(TRANSPOSE, input, attrs, _view_fn(TRANSPOSE, attrs, transpose, d0, d1))


@public
def unsqueeze(input, dim):
    """Insert a dimension of size 1 at ``dim`` (a view).

    >>> import chainrule as cr
    >>> cr.zeros(3).unsqueeze(0).shape
    chainrule.Size([1, 3])
    """
    d = wrap_dim(dim, input._data.ndim + 1)
    attrs = {"dim": d}
    return make_view(UNSQUEEZE, input, attrs, _view_fn(UNSQUEEZE, attrs, unsqueeze, d))


@public
def squeeze(input, dim=None):
    """Remove dimensions of size 1 (all of them, or those in ``dim``) (a view).

    >>> import chainrule as cr
    >>> cr.zeros(1, 3, 1).squeeze().shape
    chainrule.Size([3])
    """
    shape = input._data.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(d for d in (wrap_dim(d, len(shape)) for d in dims) if shape and shape[d] == 1)
    attrs = {"dim": dims}
    return make_view(SQUEEZE, input, attrs, _view_fn(SQUEEZE, attrs, squeeze, dims or ()))
