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


def sum_to(grad, shape):
    """Sum ``grad`` (array or Tensor) down to ``shape``."""
    shape = tuple(shape)
    if grad.shape == shape:
        return grad
    if not hasattr(grad, "_data"):
        return _sum_array_to(grad, shape)
    axes = reduced_axes(grad.shape, shape)
    out = grad.sum(dim=axes, keepdim=True) if axes else grad
    return out.reshape(shape)


def _sum_array_to(grad, shape):
    lead = grad.ndim - len(shape)
    if shape and lead > 0 and grad.shape[lead:] == shape:
        # Only leading dims were broadcast (a bias: (N, C) -> (C,)): one reduction
        # gives the shape, a fresh array (Note [stealing gradients] can take it).
        return np.add.reduce(grad, axis=tuple(range(lead)))
    axes = reduced_axes(grad.shape, shape)
    out = grad.sum(axis=axes, keepdims=True) if axes else grad
    return out.reshape(shape)
