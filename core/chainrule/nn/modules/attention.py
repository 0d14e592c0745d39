"""MultiheadAttention, with torch's parameters (``in_proj_weight`` or separate
q/k/v projections, ``out_proj``, optional ``bias_k``/``bias_v``), masks and
attention-weight averaging."""
import math

import numpy as np

from ... import _dtypes, _factories
from ..._ops import FUNCTIONS
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of MultiheadAttention (a Linear; the name is torch's)."""


def _additive_mask(mask, dtype):
    """A float mask to add to the scores: bool masks give -inf where True."""
    if mask is None:
        return None
    if mask.dtype == _dtypes.bool_:
        return _factories.zeros(*mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))
    return mask.to(dtype)


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads: ``softmax(Q K^T / sqrt(d)) V`` per head,
    projected by ``out_proj``. Inputs are (L, N, E) (``batch_first``: (N, L, E)) or
    unbatched (L, E); returns (output, weights averaged over heads or None).

    >>> import chainrule as cr
    >>> mha = cr.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = cr.randn(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    (chainrule.Size([3, 5, 8]), chainrule.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.batch_first, self.add_zero_attn = batch_first, add_zero_attn
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self._make_projections(embed_dim, bias, add_bias_kv, dtype)
        self._reset_parameters()

    def _make_projections(self, e, bias, add_bias_kv, dtype):
        empty = lambda *shape: Parameter(_factories.empty(*shape, dtype=dtype))  # noqa: E731
        if self._qkv_same_embed_dim:
            self.in_proj_weight = empty(3 * e, e)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = empty(e, e)
            self.k_proj_weight = empty(e, self.kdim)
            self.v_proj_weight = empty(e, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = empty(3 * e)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(e, e, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k, self.bias_v = empty(1, 1, e), empty(1, 1, e)
        else:
            self.bias_k = self.bias_v = None

    def _reset_parameters(self):
        """torch's: xavier_uniform_ projections, zero biases, xavier_normal_ bias_k/v."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                init.xavier_normal_(b)

    def _project(self, query, key, value):
        e = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def _heads(self, t, batch):
        """(L, N, E) -> (N * H, L, head_dim)."""
        return t.reshape(t.shape[0], batch * self.num_heads, self.head_dim).transpose(0, 1)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.dim() == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        if not batched:
            query, key, value = (t.unsqueeze(1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        out, weights = self._attend(query, key, value, key_padding_mask, attn_mask, is_causal)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(1)
        if not need_weights:
            return out, None
        weights = weights.mean(1) if average_attn_weights else weights
        return out, (weights if batched else weights.squeeze(0))

    def _attend(self, query, key, value, key_padding_mask, attn_mask, is_causal):
        """Attention on sequence-first input; returns (output (L, N, E), weights
        (N, H, L, S))."""
        tgt_len, batch, e = query.shape
        q, k, v = self._project(query, key, value)
        mask = self._mask(attn_mask, is_causal, tgt_len, key.shape[0], q.dtype)
        kpm = _additive_mask(key_padding_mask, q.dtype)
        k, v, mask, kpm = self._extend_keys(k, v, mask, kpm, batch)
        q, k, v = self._heads(q, batch), self._heads(k, batch), self._heads(v, batch)
        scores = (q * (1.0 / math.sqrt(self.head_dim))) @ k.transpose(1, 2)
        src_len = k.shape[1]
        if mask is not None:
            scores = scores + (mask if mask.dim() == 2 else mask.reshape(batch * self.num_heads, tgt_len, src_len))
        if kpm is not None:
            scores = (scores.reshape(batch, self.num_heads, tgt_len, src_len)
                      + kpm.reshape(batch, 1, 1, src_len)).reshape(batch * self.num_heads, tgt_len, src_len)
        attn = F.softmax(scores, dim=-1)
        if self.dropout > 0.0 and self.training:
            attn = F.dropout(attn, p=self.dropout)
        out = (attn @ v).transpose(0, 1).reshape(tgt_len * batch, e)
        out = self.out_proj(out).reshape(tgt_len, batch, e)
        return out, attn.reshape(batch, self.num_heads, tgt_len, src_len)

    def _mask(self, attn_mask, is_causal, tgt_len, src_len, dtype):
        if attn_mask is None and is_causal:
            attn_mask = _factories.from_numpy(np.triu(np.ones((tgt_len, src_len), bool), 1))
        return _additive_mask(attn_mask, dtype)

    def _extend_keys(self, k, v, mask, kpm, batch):
        """Append bias_k/bias_v and the zero attention position (with their mask
        columns), as torch does."""
        cat, pad = FUNCTIONS["cat"], _pad_last
        if self.bias_k is not None:
            k = cat([k, self.bias_k.expand(1, batch, self.embed_dim)])
            v = cat([v, self.bias_v.expand(1, batch, self.embed_dim)])
            mask, kpm = pad(mask), pad(kpm)
        if self.add_zero_attn:
            zeros = _factories.zeros(1, batch, self.embed_dim, dtype=k.dtype)
            k, v = cat([k, zeros]), cat([v, zeros])
            mask, kpm = pad(mask), pad(kpm)
        return k, v, mask, kpm


def _pad_last(mask):
    """One more (zero) column at the end of a float mask."""
    if mask is None:
        return None
    zeros = _factories.zeros(*(tuple(mask.shape[:-1]) + (1,)), dtype=mask.dtype)
    return FUNCTIONS["cat"]([mask, zeros], -1)
