"""Lookups and index encodings: embedding (a table entry with its own backward, Note
[embedding gradient factors] in _ops/nn.py) and one_hot."""
import numpy as np

from ._sparse_grad import mark_sparse_gradient

from .._dtypes import scalar_type_name
from .._grad_mode import no_grad as _no_grad
from .._ops import nn as _nn
from .._ops.reduction import _norm_forward
from .._tensor import Tensor as _Tensor, on_device_of, zeros_on


def _check_indices(input):
    if not isinstance(input, _Tensor) or input._data.dtype not in (np.int64, np.int32):
        got = scalar_type_name(input._data.dtype) if isinstance(input, _Tensor) else \
            type(input).__name__
        # the reference names a bool tensor by its backend type, the others by class
        got = "CPUBoolType" if got == "Bool" else f"torch.{got}Tensor"
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {got} instead (while "
                           f"checking arguments for embedding)")


def _padding_index(padding_idx, num):
    if padding_idx is None:
        return None
    if padding_idx >= num or padding_idx < -num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx % num


def _factor(idx, padding_idx, scale_grad_by_freq, num):
    """Per-lookup gradient factor (None when every factor is 1), made where ``idx``
    lives (Note [device arrays])."""
    if padding_idx is None and not scale_grad_by_freq:
        return None
    factor = 1.0
    if scale_grad_by_freq:
        counts = zeros_on((num,), np.float64, idx)    # how often each row is looked up
        np.add.at(counts, idx.reshape(-1), 1.0)
        factor = 1.0 / counts[idx]
    if padding_idx is not None:
        factor = np.where(idx == padding_idx, 0.0, factor)
    return factor


def _renorm_(weight, idx, max_norm, norm_type):
    """The reference's embedding_renorm_: rows looked up whose norm exceeds max_norm
    are scaled down in place (outside autograd)."""
    with _no_grad():
        data = weight._data
        looked_up = zeros_on(data.shape[:1], np.bool_, data)
        looked_up[idx.reshape(-1)] = True
        norms = _norm_forward(data, norm_type, (1,), False)
        scale = np.where(looked_up & (norms > max_norm), max_norm / (norms + 1e-7), 1.0)
        if (scale != 1.0).any():                # (other rows: times 1, unchanged)
            weight.copy_(_Tensor._wrap(data * scale[:, None].astype(data.dtype)))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` (num_embeddings, dim) at the indices ``input``; rows at
    ``padding_idx`` get no gradient, ``scale_grad_by_freq`` divides each row's gradient
    by its count in the batch, ``max_norm`` renormalises looked-up rows in place.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> w = cr.tensor([[0., 0.], [1., 2.], [3., 4.]], requires_grad=True)
    >>> F.embedding(cr.tensor([2, 1, 2]), w, padding_idx=1).sum().backward()
    >>> w.grad.tolist()
    [[0.0, 0.0], [0.0, 0.0], [2.0, 2.0]]
    """
    if sparse:
        mark_sparse_gradient(weight)
    _check_indices(input)
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    idx = input._data.astype(np.int64, copy=False)
    if idx.size and (idx.min() < -num or idx.max() >= num):
        raise IndexError("index out of range in self")
    idx = idx % num if idx.size and idx.min() < 0 else idx
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    factor = _factor(idx, _padding_index(padding_idx, num), scale_grad_by_freq, num)
    return _nn.apply_op(_nn.EMBEDDING, (weight,), {"indices": idx, "factor": factor,
                                                   "scaled": False})


def one_hot(tensor, num_classes=-1):
    """An int64 tensor with one more dim of size ``num_classes`` (default: max + 1),
    1 at each index and 0 elsewhere.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.one_hot(cr.tensor([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    if tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    idx = tensor._data
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = on_device_of(np.arange(num_classes), idx)        # where the indices are
    return _Tensor._wrap((idx[..., None] == classes).astype(np.int64))


__all__ = ["embedding", "one_hot"]


def top_level_embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``chainrule.embedding``: the reference's top-level form (weight first;
    padding_idx -1 means none).

    >>> import chainrule as cr
    >>> cr.embedding(cr.tensor([[1., 2.], [3., 4.]]), cr.tensor([1])).tolist()
    [[3.0, 4.0]]
    """
    return embedding(input, weight, None if padding_idx == -1 else padding_idx, None, 2.0,
                     scale_grad_by_freq, sparse)
