"""Summing a broadcast gradient back to an input's shape, for arrays and tensors."""
import numpy as np


def reduced_axes(shape, target):
    """Axes of ``shape`` to sum so that the result has ``target``'s shape."""
    lead = len(shape) - len(target)
    axes = list(range(lead))
    for i, t in enumerate(target):
        if t == 1 and shape[lead + i] != 1:
            axes.append(lead + i)
    return tuple(axes)


def add_reduce(grad, axis, keepdims=False):
    """np.add.reduce; bfloat16 and float16 accumulate in float32 (as the reference's sums
    do) and round once."""
    if grad.dtype.itemsize == 2 and grad.dtype.kind in "fV":
        return np.add.reduce(grad, axis=axis, dtype=np.float32, keepdims=keepdims).astype(
            grad.dtype)
    return np.add.reduce(grad, axis=axis, keepdims=keepdims)


def sum_to(grad, shape):
    """Sum ``grad`` (array or Tensor) down to ``shape``."""
    shape = tuple(shape)
    grad_shape = grad.shape
    if grad_shape == shape:
        return grad
    lead = len(grad_shape) - len(shape)
    if shape and lead > 0 and grad_shape[lead:] == shape and type(grad) is np.ndarray:
        # An ndarray broadcast along leading dims only (a bias: (N, C) -> (C,)): one
        # reduction gives the shape, a fresh array (Note [stealing gradients] can take it).
        return add_reduce(grad, 0 if lead == 1 else tuple(range(lead)))
    axes = reduced_axes(grad_shape, shape)
    if hasattr(grad, "_data"):
        out = grad.sum(dim=axes, keepdim=True) if axes else grad
    else:
        out = grad.sum(axis=axes, keepdims=True) if axes else grad
        if axes and out.dtype != grad.dtype:           # (ml_dtypes' bfloat16 sum)
            out = add_reduce(grad, axes, keepdims=True)
    return out.reshape(shape)
