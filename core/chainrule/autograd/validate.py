"""Checks on what a node returns, and conversions at the hook boundary.

validate_outputs: each gradient must fit the input it goes to (shape, dtype). A
gradient that broadcasts to the expected shape is summed down to it; one that does
not is an error naming the node and the index, like the reference's.
"""
import numpy as np
from .._tensor import Tensor
from .._dtypes import from_numpy_dtype
from ._sum_to import sum_to


def validate_outputs(node, outputs):
    n_edges = len(node._next)
    if len(outputs) != n_edges:
        raise RuntimeError(f"function {node.name()} returned an incorrect number of "
                           f"gradients (expected {n_edges}, got {len(outputs)})")
    metas = getattr(node, "_in_meta", None)
    if metas is None:
        return outputs
    outputs = list(outputs)
    for i, grad in enumerate(outputs):
        if grad is None or node._next[i] is None:
            continue
        shape, dtype = metas[i]
        if grad.shape != shape:
            outputs[i] = grad = _fit_shape(node, i, grad, shape)
        if grad.dtype != dtype and not _is_tensor_dtype(grad, dtype):
            outputs[i] = _cast(grad, dtype)
    return outputs


def _fit_shape(node, index, grad, shape):
    if _broadcastable(shape, grad.shape):
        return sum_to(grad, shape)
    raise RuntimeError(
        f"Function {node.name()} returned an invalid gradient at index {index} - got "
        f"{list(grad.shape)} but expected shape compatible with {list(shape)}")


def _broadcastable(target, shape):
    if len(target) > len(shape):
        return False
    for t, s in zip(reversed(target), reversed(shape)):
        if t != s and t != 1:
            return False
    return True


def _is_tensor_dtype(grad, np_dtype):
    return isinstance(grad, Tensor) and grad._data.dtype == np_dtype


def _cast(grad, np_dtype):
    # a complex gradient for a real input: its real part (the reference's at::real)
    real_target = not np.issubdtype(np_dtype, np.complexfloating)
    if isinstance(grad, Tensor):
        grad = grad.real if real_target and grad.is_complex() else grad
        return grad.to(from_numpy_dtype(np_dtype))
    if np.iscomplexobj(grad) and real_target:
        grad = grad.real
    return grad.astype(np_dtype)


def wrap_for_hook(grad):
    """Hooks always see Tensors, also on the fast (array) path."""
    if grad is None or isinstance(grad, Tensor):
        return grad
    return Tensor._wrap(grad)


def unwrap_from_hook(grad, create_graph):
    if grad is None or create_graph or not isinstance(grad, Tensor):
        return grad
    return grad._data
