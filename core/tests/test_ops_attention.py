"""The attention table ops: _safe_softmax (Note [safe softmax]) and the fused
_scaled_dot_product_flash_attention_for_cpu (Note [attention as one op])."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._ops import attention as attention_op

FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"


def _qkv(rng, *shapes):
    return [cr.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]


def _names(y):
    return [type(y.grad_fn).__name__] + [type(f).__name__ if f else None
                                         for f, _ in y.grad_fn.next_functions]


def test_four_d_inputs_of_one_head_size_record_one_fused_node(rng):
    q, k, v = _qkv(rng, (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4))
    assert _names(F.scaled_dot_product_attention(q, k, v)) == [FLASH] + ["AccumulateGrad"] * 3
    y = F.scaled_dot_product_attention(q.detach(), k.detach(), v)
    assert _names(y) == [FLASH, None, None, "AccumulateGrad"]


@pytest.mark.parametrize("kwargs", [{"dropout_p": 0.5}, {"attn_mask": "grad"}, {"value_e": 6},
                                    {"three_d": True}])
def test_the_math_path_where_the_reference_does_not_fuse(kwargs, rng):
    q, k, v = _qkv(rng, (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, kwargs.pop("value_e", 4)))
    if kwargs.pop("three_d", False):
        q, k, v = (t[0] for t in (q, k, v))
    if kwargs.get("attn_mask") == "grad":
        kwargs["attn_mask"] = cr.zeros(3, 5, dtype=q.dtype, requires_grad=True)
    y = F.scaled_dot_product_attention(q, k, v, **kwargs)
    names, fn = [], y.grad_fn
    while fn is not None and fn.next_functions:              # down the weights' side
        names.append(type(fn).__name__)
        fn = fn.next_functions[0][0]
    assert FLASH not in names and "SafeSoftmaxBackward0" in names


@pytest.mark.parametrize("shape", [(1, 2, 3, 4), (2, 3, 4)])
def test_a_query_attending_to_nothing_reads_zero(shape, rng):
    q, k, v = _qkv(rng, shape, shape, shape)
    mask = cr.ones(3, 3, dtype=cr.bool)
    mask[1] = False
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert not cr.isnan(y).any() and y[..., 1, :].abs().max().item() == 0.0
    (gq,) = cr.autograd.grad(y.sum(), q)
    assert gq[..., 1, :].abs().max().item() == 0.0


def test_safe_softmax_zeroes_rows_of_minus_infinity():
    x = cr.tensor([[1.0, 2.0], [-np.inf, -np.inf]], requires_grad=True)
    y = attention_op._safe_softmax(x, 1)
    assert type(y.grad_fn).__name__ == "SafeSoftmaxBackward0" and y[1].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(y[0].detach().numpy(), cr.softmax(x[0].detach(), 0).numpy())


def test_the_backward_reuses_the_forward_weights(rng, monkeypatch):
    q, k, v = _qkv(rng, (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4))
    calls = []
    original = attention_op._array_weights
    monkeypatch.setattr(attention_op, "_array_weights",
                        lambda *a: calls.append(1) or original(*a))
    y = F.scaled_dot_product_attention(q, k, v)
    cr.autograd.grad(y.sum(), (q, k, v))
    assert len(calls) == 1


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True, "scale": 0.4}, {"enable_gqa": True}])
def test_double_backward_works_where_the_reference_has_none(kwargs, rng):
    heads = 4 if kwargs.get("enable_gqa") else 2
    q, k, v = _qkv(rng, (1, heads, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2))
    fn = lambda a, b, c: F.scaled_dot_product_attention(a, b, c, **kwargs)  # noqa: E731
    assert type(fn(q, k, v).grad_fn).__name__ == FLASH
    assert cr.autograd.gradgradcheck(fn, (q, k, v))


def test_vmap_folds_the_batch_and_repeats_a_batched_mask(rng):
    q = cr.tensor(rng.standard_normal((3, 2, 2, 4, 2)))
    kv = cr.tensor(rng.standard_normal((2, 2, 5, 2)))
    mask = cr.tensor(rng.standard_normal((2, 1, 4, 5)))
    fn = lambda a: F.scaled_dot_product_attention(a, kv, kv, attn_mask=mask)  # noqa: E731
    expected = cr.stack([fn(a) for a in q])
    np.testing.assert_allclose(cr.vmap(fn)(q).numpy(), expected.numpy(), atol=1e-14)


def test_errors_as_the_reference_gives_them(rng):
    q, k = (cr.tensor(rng.standard_normal(s)) for s in ((2, 2, 3, 4), (2, 2, 5, 4)))
    with pytest.raises(RuntimeError, match="^dropout probability has to be between 0 and 1, "
                                           "but got 1.5$"):
        F.scaled_dot_product_attention(q, k, k, dropout_p=1.5)
    with pytest.raises(RuntimeError, match="flash_attention: Currently do not support dropout"):
        F.scaled_dot_product_attention(q, k, k, dropout_p=-0.1)     # the fused path's check
    assert F.scaled_dot_product_attention(q[0], k[0], k[0], dropout_p=-0.1).shape == (2, 3, 4)
    with pytest.raises(RuntimeError, match="^Number of heads in key and value must divide"):
        F.scaled_dot_product_attention(cr.ones(2, 3, 3, 4), k, k, enable_gqa=True)
    with pytest.raises(RuntimeError, match="must match the size of tensor b \\(4\\) at "
                                           "non-singleton dimension 2"):
        F.scaled_dot_product_attention(q, k, k, attn_mask=cr.zeros(4, 5))
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        F.scaled_dot_product_attention(q[0], k[0], k[0], attn_mask=cr.zeros(3, 5), is_causal=True)


def test_the_fused_path_reads_is_causal_alone_when_a_mask_comes_too(rng):
    q, k = (cr.tensor(rng.standard_normal(s)) for s in ((2, 2, 3, 4), (2, 2, 5, 4)))
    both = F.scaled_dot_product_attention(q, k, k, attn_mask=cr.zeros(3, 5) - 5, is_causal=True)
    np.testing.assert_array_equal(both.numpy(),
                                  F.scaled_dot_product_attention(q, k, k, is_causal=True).numpy())
