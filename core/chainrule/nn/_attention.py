"""scaled_dot_product_attention, composed of table ops (matmul, softmax, masking,
dropout), so gradients, double backward and tangents come from those entries."""
import math

import numpy as np

from .._ops._common import FUNCTIONS as _FUNCTIONS
from .._tensor import Tensor as _Tensor, on_device_of
from ._dropout import _apply as _dropout, _check_p


def _repeat_heads(t, times):
    """(..., H, S, E) -> (..., H * times, S, E), each head repeated ``times`` in a row."""
    if times == 1:
        return t
    shape = tuple(t.shape)
    expanded = t.unsqueeze(-3).expand(*shape[:-2], times, *shape[-2:])
    return expanded.reshape(*shape[:-3], shape[-3] * times, *shape[-2:])


def _masked_scores(scores, attn_mask, is_causal):
    length, source = scores.shape[-2], scores.shape[-1]
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        attn_mask = _Tensor._wrap(on_device_of(np.tril(np.ones((length, source), dtype=bool)),
                                               scores._data))
    if attn_mask is None:
        return scores
    if attn_mask._data.dtype == np.bool_:
        return scores.masked_fill(~attn_mask, -math.inf)
    return scores + attn_mask


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(Q K^T * scale + mask) V`` with ``scale = 1 / sqrt(E)`` by default; a
    boolean ``attn_mask`` keeps positions where True, a float one is added;
    ``is_causal`` masks future positions; ``dropout_p`` drops attention weights (from
    the default generator); ``enable_gqa`` repeats key/value heads to match query's.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> q = k = cr.ones(1, 2, 4)
    >>> v = cr.tensor([[[1., 1., 1., 1.], [3., 3., 3., 3.]]])
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).tolist()
    [[[1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]]]
    """
    _check_p(dropout_p)
    if enable_gqa and query.dim() >= 3:
        key = _repeat_heads(key, query.shape[-3] // key.shape[-3])
        value = _repeat_heads(value, query.shape[-3] // value.shape[-3])
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    matmul = _FUNCTIONS["matmul"]
    scores = matmul(query, key.transpose(-2, -1)) * factor
    weights = _FUNCTIONS["softmax"](_masked_scores(scores, attn_mask, is_causal), -1)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p, True, False)
    return matmul(weights, value)


__all__ = ["scaled_dot_product_attention"]
