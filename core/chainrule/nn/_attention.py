"""scaled_dot_product_attention on the reference's CPU paths: the fused op
(ScaledDotProductFlashAttentionForCpuBackward0, Note [attention as one op] in
_ops/attention.py) where the reference fuses, else its math path composed of table ops
(scaled query and key, matmul, an additive mask, the safe softmax, dropout)."""
import math

import numpy as np

from .. import _dtypes
from .._batched import BatchedTensor
from .._ops import attention as _attention
from .._ops._common import FUNCTIONS as _FUNCTIONS
from .._tensor import Tensor as _Tensor, on_device_of
from ._dropout import _apply as _dropout


def _repeat_heads(t, times):
    """(..., H, S, E) -> (..., H * times, S, E), each head repeated ``times`` in a row."""
    if times == 1:
        return t
    shape = tuple(t.shape)
    expanded = t.unsqueeze(-3).expand(*shape[:-2], times, *shape[-2:])
    return expanded.reshape(*shape[:-3], shape[-3] * times, *shape[-2:])


def _additive_mask(attn_mask, is_causal, length, source, like):
    """The mask as a tensor added to the scores (a boolean one: 0 where kept, -inf
    elsewhere, in ``like``'s dtype), or None."""
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        attn_mask = _Tensor._wrap(on_device_of(np.tril(np.ones((length, source), dtype=bool)),
                                               like._data))
    if attn_mask is None or attn_mask.dtype != _dtypes.bool_:
        return attn_mask
    dtype = like._data.dtype
    return _FUNCTIONS["where"](attn_mask, _Tensor._wrap(on_device_of(np.zeros((), dtype), like._data)),
                               _Tensor._wrap(on_device_of(np.full((), -np.inf, dtype), like._data)))


def _fused(query, key, value, attn_mask, enable_gqa):
    """Whether the reference takes its fused CPU path for these arguments (dropout
    aside): 4-D inputs of one batch size and head size, with unit last strides and no
    empty sequence, a constant mask that broadcasts to the scores, and equal heads (or
    query heads a multiple of the key/value heads under enable_gqa)."""
    if type(attn_mask) is BatchedTensor or (attn_mask is not None and attn_mask.requires_grad):
        return False                                           # (a batched mask: math)
    if any(t.dim() != 4 or t.is_meta or (type(t) is not BatchedTensor and t.stride(-1) != 1)
           for t in (query, key, value)):
        return False
    if not query.is_floating_point() or key.dtype != query.dtype or value.dtype != query.dtype:
        return False
    (b, h, length, e), (bk, hk, source, ek) = tuple(query.shape), tuple(key.shape)
    bv, hv, sv, ev = tuple(value.shape)
    heads_ok = h == hk == hv or (enable_gqa and hk == hv and hk and h % hk == 0)
    return b == bk == bv and e == ek == ev and source == sv and heads_ok and \
        length > 0 and source > 0 and _broadcasts(attn_mask, (b, h, length, source))


def _broadcasts(mask, shape):
    if mask is None:
        return True
    try:
        return np.broadcast_shapes(tuple(mask.shape), shape) == shape
    except ValueError:
        return False


def _check_heads(query, key, value, enable_gqa):
    if enable_gqa and query.dim() >= 3 and (query.shape[-3] % key.shape[-3] or
                                            query.shape[-3] % value.shape[-3]):
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")


def _math(query, key, value, mask, dropout_p, factor):
    """The reference's math path: query and key each scaled by sqrt(|scale|)."""
    root = math.sqrt(abs(factor))
    matmul = _FUNCTIONS["matmul"]
    scores = matmul(query * (-root if factor < 0 else root), key.transpose(-2, -1) * root)
    if mask is not None:
        scores = scores + mask
    weights = _FUNCTIONS["_safe_softmax"](scores, -1)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p, True, False)
    return matmul(weights, value)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(Q K^T * scale + mask) V`` with ``scale = 1 / sqrt(E)`` by default; a
    boolean ``attn_mask`` keeps positions where True, a float one is added;
    ``is_causal`` masks future positions; ``dropout_p`` drops attention weights (from
    the default generator); ``enable_gqa`` repeats key/value heads to match query's.
    A query that may attend to no key gives 0.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> q = k = cr.ones(1, 2, 4)
    >>> v = cr.tensor([[[1., 1., 1., 1.], [3., 3., 3., 3.]]])
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).tolist()
    [[[1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]]]
    """
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    _check_heads(query, key, value, enable_gqa)
    length, source = query.shape[-2], key.shape[-2]
    fused = _fused(query, key, value, attn_mask, enable_gqa)
    if fused and dropout_p < 0:
        raise RuntimeError("scaled_dot_product_attention_flash_attention: Currently do not "
                           "support dropout > 0")
    if dropout_p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if fused and dropout_p == 0:
        # the reference's fused path reads is_causal alone when a mask comes with it
        mask = _additive_mask(None if is_causal else attn_mask, is_causal, length, source, query)
        groups = query.shape[1] // key.shape[1]
        array = None if mask is None else mask._data.astype(query._data.dtype, copy=False)
        return _attention.flash_attention(query, key, value, array, factor, groups)
    mask = _additive_mask(attn_mask, is_causal, length, source, query)
    if enable_gqa and query.dim() >= 3:
        key = _repeat_heads(key, query.shape[-3] // key.shape[-3])
        value = _repeat_heads(value, query.shape[-3] // value.shape[-3])
    return _math(query, key, value, mask, max(dropout_p, 0.0), factor)


__all__ = ["scaled_dot_product_attention"]
