"""Summing a broadcast gradient back to an input's shape, for arrays and tensors."""


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
    axes = reduced_axes(grad.shape, shape)
    if hasattr(grad, "_data"):
        out = grad.sum(dim=axes, keepdim=True) if axes else grad
        return out.reshape(shape)
    out = grad.sum(axis=axes, keepdims=True) if axes else grad
    return out.reshape(shape)
