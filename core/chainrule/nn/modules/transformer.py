"""Transformer layers: TransformerEncoderLayer, TransformerDecoderLayer, their stacks
and Transformer, with torch's submodule names (so state_dicts are interchangeable),
post-norm by default and pre-norm with ``norm_first=True``."""
import copy

import numpy as np

from ... import _dtypes, _factories
from .. import functional as F
from .. import init
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerDecoder", "Transformer"]


def _activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class _Layer(Module):
    """The feed-forward block and the norms/dropouts both layer kinds share."""

    def _common(self, d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                norm_first, bias, norms, dtype):
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        for i in range(1, norms + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        for i in range(1, norms + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation)

    def _ff_block(self, x, dropout):
        return dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    @staticmethod
    def _attention(attn, dropout, q, kv, mask, padding, is_causal):
        out = attn(q, kv, kv, attn_mask=mask, key_padding_mask=padding, need_weights=False,
                   is_causal=is_causal)[0]
        return dropout(out)


class TransformerEncoderLayer(_Layer):
    """Self-attention then a feed-forward block, each with a residual connection and
    layer norm (after, or before with ``norm_first``).

    >>> import chainrule as cr
    >>> layer = cr.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(cr.randn(5, 3, 8)).shape
    chainrule.Size([5, 3, 8])
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self._common(d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                     norm_first, bias, 2, dtype)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        def sa(x):
            return self._attention(self.self_attn, self.dropout1, x, x, src_mask,
                                   src_key_padding_mask, is_causal)
        x = src
        if self.norm_first:
            x = x + sa(self.norm1(x))
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + sa(x))
        return self.norm2(x + self._ff_block(x, self.dropout2))


class TransformerDecoderLayer(_Layer):
    """Self-attention, attention over the encoder's ``memory``, then a feed-forward
    block, each with a residual connection and layer norm.

    >>> import chainrule as cr
    >>> layer = cr.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> layer(cr.randn(3, 4, 8), cr.randn(3, 6, 8)).shape
    chainrule.Size([3, 4, 8])
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self._common(d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                     norm_first, bias, 3, dtype)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        def sa(x):
            return self._attention(self.self_attn, self.dropout1, x, x, tgt_mask,
                                   tgt_key_padding_mask, tgt_is_causal)

        def mha(x):
            return self._attention(self.multihead_attn, self.dropout2, x, memory, memory_mask,
                                   memory_key_padding_mask, memory_is_causal)
        x = tgt
        if self.norm_first:
            x = x + sa(self.norm1(x))
            x = x + mha(self.norm2(x))
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + sa(x))
        x = self.norm2(x + mha(x))
        return self.norm3(x + self._ff_block(x, self.dropout3))


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (then ``norm`` if given).

    >>> import chainrule as cr
    >>> layer = cr.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    >>> cr.nn.TransformerEncoder(layer, num_layers=2)(cr.randn(5, 3, 8)).shape
    chainrule.Size([5, 3, 8])
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                        is_causal=bool(is_causal))
        return out if self.norm is None else self.norm(out)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` (then ``norm`` if given).

    >>> import chainrule as cr
    >>> layer = cr.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    >>> cr.nn.TransformerDecoder(layer, 2)(cr.randn(4, 3, 8), cr.randn(6, 3, 8)).shape
    chainrule.Size([4, 3, 8])
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return out if self.norm is None else self.norm(out)


class Transformer(Module):
    """An encoder-decoder transformer (each stack ends with a LayerNorm); matrices
    initialised xavier_uniform_.

    >>> import chainrule as cr
    >>> model = cr.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                           num_decoder_layers=1, dim_feedforward=16)
    >>> model(cr.randn(6, 2, 8), cr.randn(4, 2, 8)).shape
    chainrule.Size([4, 2, 8])
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        options = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                       layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                       norm_first=norm_first, bias=bias, dtype=dtype)
        norm = lambda: LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)  # noqa: E731
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **options), num_encoder_layers, norm())
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **options), num_decoder_layers, norm())
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float (sz, sz) mask: 0 on and below the diagonal, -inf above.

        >>> import chainrule as cr
        >>> cr.nn.Transformer.generate_square_subsequent_mask(2).tolist()
        [[0.0, -inf], [0.0, 0.0]]
        """
        mask = np.triu(np.full((sz, sz), -np.inf), 1)
        return _factories.tensor(mask, dtype=dtype or _dtypes.get_default_dtype())
