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
    grad_shape = grad.shape
    if grad_shape == shape:
        return grad
    lead = len(grad_shape) - len(shape)
    if shape and lead > 0 and grad_shape[lead:] == shape and type(grad) is np.ndarray:
        # An ndarray broadcast along leading dims only (a bias: (N, C) -> (C,)): one
        # reduction gives the shape, a fresh array (Note [stealing gradients] can take it).
        return np.add.reduce(grad, axis=0 if lead == 1 else tuple(range(lead)))
    axes = reduced_axes(grad_shape, shape)
    if hasattr(grad, "_data"):
        out = grad.sum(dim=axes, keepdim=True) if axes else grad
    else:
        out = grad.sum(axis=axes, keepdims=True) if axes else grad
    return out.reshape(shape)
