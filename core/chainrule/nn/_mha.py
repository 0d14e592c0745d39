"""``F.multi_head_attention_forward``: MultiheadAttention's computation with every
weight passed in (sequence-first input, as torch's)."""
from .._ops import nn as _nn


class _Weights:
    """What MultiheadAttention's methods read from the module, from arguments."""

    def __init__(self, embed_dim, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
                 add_zero_attn, dropout_p, training, separate):
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight, self.in_proj_bias = in_proj_weight, in_proj_bias
        self.bias_k, self.bias_v, self.add_zero_attn = bias_k, bias_v, add_zero_attn
        self.dropout, self.training = dropout_p, training
        self.batch_first, self._qkv_same_embed_dim = False, not separate


def _bind(weights, out_proj_weight, out_proj_bias, q, k, v):
    from .modules.attention import MultiheadAttention as MHA
    weights.q_proj_weight, weights.k_proj_weight, weights.v_proj_weight = q, k, v
    weights.out_proj = lambda x: _nn.linear(x, out_proj_weight, out_proj_bias)
    for name in ("_project", "_heads", "_attend", "_mask", "_extend_keys"):
        setattr(weights, name, getattr(MHA, name).__get__(weights))
    return MHA.forward.__get__(weights)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention of (L, N, E) (or unbatched (L, E)) query over key/value with
    the given projections: (output, weights averaged over heads, or per head, or None).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> mha = cr.nn.MultiheadAttention(4, 2)
    >>> x = cr.randn(3, 1, 4)
    >>> out, w = F.multi_head_attention_forward(x, x, x, 4, 2, mha.in_proj_weight,
    ...     mha.in_proj_bias, None, None, False, 0.0, mha.out_proj.weight, mha.out_proj.bias)
    >>> bool(cr.allclose(out, mha(x, x, x)[0])), w.shape
    (True, chainrule.Size([1, 3, 3]))
    """
    embed_dim = query.shape[-1]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not "
                                  "supported by chainrule")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    weights = _Weights(embed_dim, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
                       add_zero_attn, dropout_p, training, use_separate_proj_weight)
    forward = _bind(weights, out_proj_weight, out_proj_bias, q_proj_weight, k_proj_weight,
                    v_proj_weight)
    return forward(query, key, value, key_padding_mask, need_weights, attn_mask,
                   average_attn_weights)
