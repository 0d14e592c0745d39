"""Derivative table: the reference's CPU attention nodes, ``_safe_softmax``
(SafeSoftmaxBackward0, on scaled_dot_product_attention's math path) and
``_scaled_dot_product_flash_attention_for_cpu``
(ScaledDotProductFlashAttentionForCpuBackward0, its fused path).

Note [safe softmax]
    The softmax of a row whose entries are all -inf (a query that may attend to no
    key) is 0 there, not NaN, as in the reference; its derivatives are the softmax's
    (the zero output makes them zero).

Note [attention as one op]
    Per batch entry and head, ``out = P V`` with ``P = safe_softmax(scale * Q K^T +
    mask)`` over the key positions; with fewer key/value heads than query heads each
    serves ``groups`` query heads in a row. With dO the output gradient:
        dV = P^T dO                               (summed over each head's group)
        dS = P * (dO V^T - rowsum(dO * out))      (the softmax's VJP)
        dQ = scale * dS K,    dK = scale * dS^T Q  (summed over each head's group)
    Every VJP needs P: the forward keeps it in the node's ``scratch`` attribute next
    to its output, and the fast backward uses it when the saved output is that very
    array (else recomputes it). The query's VJP, run first, leaves dS there for the
    key's, which takes it (once) when its output gradient is the very same array. On the tensor path P is recomputed from Q and K with
    differentiable ops, so double backward and tangents follow (the reference
    refuses double backward through this node).
"""
import functools

import numpy as np

from ._common import public
from ._namespaces import ARRAY_NS
from ._registry import apply_op, defop
from .linalg import _low_precision, in_float32


# --- safe softmax ----------------------------------------------------------------------------
def _safe_softmax_forward(x, dim):
    top = np.max(x, axis=dim, keepdims=True)
    dead = np.isneginf(top)                  # rows of -inf: exp gives 0s, divided by 1
    if dead.any():
        top = np.where(dead, 0, top)
    e = np.exp(x - top)
    total = np.sum(e, axis=dim, keepdims=True)
    if dead.any():
        total[dead] = 1
    e /= total
    return e.astype(x.dtype, copy=False)


SAFE_SOFTMAX = defop(
    "_safe_softmax", _safe_softmax_forward, attrs=("dim",),
    vjp=(lambda F, g, result, dim: result * (g - F.sum(g * result, dim, True)),),
    jvp=lambda F, t, result, dim: result * (t[0] - F.sum(t[0] * result, dim, True)))


@public(method=False)
def _safe_softmax(input, dim):
    """Softmax along ``dim`` with rows of -inf giving 0 (Note [safe softmax]).

    >>> import chainrule as cr
    >>> from chainrule._ops.attention import _safe_softmax
    >>> _safe_softmax(cr.tensor([[0., 0.], [-float('inf'), -float('inf')]]), 1).tolist()
    [[0.5, 0.5], [0.0, 0.0]]
    """
    return apply_op(SAFE_SOFTMAX, (input,), {"dim": dim % max(input.dim(), 1)})


# --- fused attention -------------------------------------------------------------------------
def _heads(F, t, groups):
    """(B, Hk, S, E) -> (B, Hk * groups, S, E), each head repeated ``groups`` in a row."""
    if groups == 1:
        return t
    b, h, s, e = tuple(t.shape)
    return F.reshape(F.expand(F.unsqueeze(t, 2), (b, h, groups, s, e)), (b, h * groups, s, e))


def _group_sum(F, t, groups):
    """The adjoint of :func:`_heads`."""
    if groups == 1:
        return t
    b, h, s, e = tuple(t.shape)
    return F.sum(F.reshape(t, (b, h // groups, groups, s, e)), 2)


def _array_weights(query, key, attn_mask, scale, groups):
    keys = _heads(ARRAY_NS, key, groups).swapaxes(-1, -2)
    scores = np.matmul(query * query.dtype.type(scale), keys)   # scaled on the smaller side
    if attn_mask is not None:
        scores = scores + attn_mask
    return _safe_softmax_forward(scores, -1)


def _weights(F, query, key, result, attn_mask, scale, groups, scratch):
    """P of Note [attention as one op]."""
    if not F.is_tensor_path():
        kept = scratch.get("weights")
        if kept is not None and kept[0] is result:
            return kept[1]
        return _array_weights(query, key, attn_mask, scale, groups)
    from .._tensor import Tensor
    scores = F.matmul(query, F.transpose(_heads(F, key, groups), -1, -2)) * scale
    if attn_mask is not None:
        scores = scores + Tensor._wrap(attn_mask)
    return F._safe_softmax(scores, -1)


def _in_float32(vjp):
    """A VJP on the array path run on float32 copies of 16-bit arrays, its result
    rounded once (the reference accumulates them in float32; see linalg.in_float32)."""
    @functools.wraps(vjp)
    def run(F, g, *rest):
        if F.is_tensor_path() or not _low_precision(g.dtype):
            return vjp(F, g, *rest)
        rest = [r.astype(np.float32) if hasattr(r, "dtype") and _low_precision(r.dtype) else r
                for r in rest]
        return vjp(F, g.astype(np.float32), *rest).astype(g.dtype)
    return run


@in_float32
def _flash_forward(query, key, value, attn_mask, scale, groups, scratch):
    weights = _array_weights(query, key, attn_mask, scale, groups)
    out = np.matmul(weights, _heads(ARRAY_NS, value, groups))
    scratch["weights"] = (out, weights)
    return out


def _score_grad(F, g, query, key, value, result, attn_mask, scale, groups, scratch):
    weights = _weights(F, query, key, result, attn_mask, scale, groups, scratch)
    moved = F.matmul(g, F.transpose(_heads(F, value, groups), -1, -2))
    return weights * (moved - F.sum(g * result, -1, True))


@_in_float32
def _query_grad(F, g, query, key, value, result, attn_mask, scale, groups, scratch):
    scores = _score_grad(F, g, query, key, value, result, attn_mask, scale, groups, scratch)
    if not F.is_tensor_path():
        scratch["score_grad"] = (g, result, scores)        # for the key's VJP, next
    return F.matmul(scores, _heads(F, key, groups)) * scale


@_in_float32
def _key_grad(F, g, query, key, value, result, attn_mask, scale, groups, scratch):
    kept = None if F.is_tensor_path() else scratch.pop("score_grad", None)
    if kept is not None and kept[0] is g and kept[1] is result:
        scores = kept[2]
    else:
        scores = _score_grad(F, g, query, key, value, result, attn_mask, scale, groups, scratch)
    return _group_sum(F, F.matmul(F.transpose(scores, -1, -2), query) * scale, groups)


@_in_float32
def _value_grad(F, g, query, key, result, attn_mask, scale, groups, scratch):
    weights = _weights(F, query, key, result, attn_mask, scale, groups, scratch)
    return _group_sum(F, F.matmul(F.transpose(weights, -1, -2), g), groups)


def _flash_jvp(F, t, query, key, value, result, attn_mask, scale, groups, scratch):
    weights = _weights(F, query, key, result, attn_mask, scale, groups, scratch)
    out = None
    if t[0] is not None or t[1] is not None:
        keys = _heads(F, key, groups)
        moved = 0
        if t[0] is not None:
            moved = F.matmul(t[0], F.transpose(keys, -1, -2))
        if t[1] is not None:
            moved = moved + F.matmul(query, F.transpose(_heads(F, t[1], groups), -1, -2))
        moved = moved * scale
        shift = weights * (moved - F.sum(moved * weights, -1, True))
        out = F.matmul(shift, _heads(F, value, groups))
    if t[2] is not None:
        term = F.matmul(weights, _heads(F, t[2], groups))
        out = term if out is None else out + term
    return out


FLASH_ATTENTION = defop(
    "_scaled_dot_product_flash_attention_for_cpu", _flash_forward,
    inputs=("query", "key", "value"), attrs=("attn_mask", "scale", "groups", "scratch"),
    vjp=(_query_grad, _key_grad, _value_grad), jvp=_flash_jvp,
    node_name="ScaledDotProductFlashAttentionForCpuBackward0")


def flash_attention(query, key, value, attn_mask, scale, groups):
    """The fused op (Note [attention as one op]); ``attn_mask`` an additive array
    broadcasting to the scores, or None."""
    attrs = {"attn_mask": attn_mask, "scale": float(scale), "groups": int(groups),
             "scratch": {}}
    return apply_op(FLASH_ATTENTION, (query, key, value), attrs)
