"""The torch.nn layers added for the torch surface: ConvTranspose3d, SyncBatchNorm,
CrossMapLRN2d, NLLLoss2d, AdaptiveLogSoftmaxWithLoss, DataParallel / data_parallel,
factory_kwargs, common_types and F.multi_head_attention_forward."""
import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn


def test_conv_transpose3d_is_the_adjoint_of_conv3d():
    w = cr.randn(3, 2, 2, 3, 2, dtype=cr.float64)         # conv3d: 2 -> 3 channels
    y = cr.randn(2, 2, 5, 6, 6, dtype=cr.float64)
    kwargs = {"stride": (2, 2, 1), "padding": (1, 1, 0), "dilation": (1, 1, 2)}
    forward = F.conv3d(y, w, **kwargs)
    x = cr.randn(*forward.shape, dtype=cr.float64)
    plain = F.conv_transpose3d(x, w, **kwargs)
    extra = tuple(a - b for a, b in zip(y.shape[2:], plain.shape[2:]))
    back = F.conv_transpose3d(x, w, **kwargs, output_padding=extra)
    assert back.shape == y.shape and extra == (1, 1, 0)
    np.testing.assert_allclose((forward * x).sum().item(), (back * y).sum().item(), rtol=1e-10)


def test_conv_transpose3d_module_output_size_and_gradients():
    up = nn.ConvTranspose3d(2, 4, 3, stride=2, padding=1, groups=2).double()
    x = cr.randn(1, 2, 2, 3, 2, dtype=cr.float64, requires_grad=True)
    assert up(x).shape == (1, 4, 3, 5, 3)
    assert up(x, output_size=(4, 6, 4)).shape == (1, 4, 4, 6, 4)
    assert cr.autograd.gradcheck(lambda t: up(t), (x,))
    with pytest.raises(TypeError, match="argument 'padding' must be tuple of ints, not str"):
        F.conv_transpose3d(x, up.weight, padding="same")
    with pytest.raises(RuntimeError, match="Expected 4D \\(unbatched\\) or 5D \\(batched\\) input "
                                           "to conv_transpose3d"):
        F.conv_transpose3d(cr.ones(2, 2, 2), up.weight)


def test_sync_batch_norm_converts_and_normalizes_any_rank():
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, momentum=0.5), nn.InstanceNorm1d(4))
    net[1].running_mean.fill_(2.0)
    sync = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(sync[1]) is nn.SyncBatchNorm and type(sync[2]) is nn.InstanceNorm1d
    assert sync[1].running_mean is net[1].running_mean and sync[1].weight is net[1].weight
    out = nn.SyncBatchNorm(2)(cr.tensor([[[1.0, 3.0]], [[5.0, 7.0]]]).transpose(1, 2))
    assert out.shape == (2, 2, 1)
    with pytest.raises(ValueError, match="expected at least 2D input \\(got 1D input\\)"):
        nn.SyncBatchNorm(3)(cr.ones(3))


def test_cross_map_lrn2d_follows_the_reference_windows_and_has_gradients():
    layer = nn.CrossMapLRN2d(3, alpha=3.0, beta=1.0, k=0.0)
    x = cr.zeros(1, 5, 1, 1)
    x[0, 0] = 1.0        # the reference's window keeps channel 0 in every later channel
    energy = (x / layer(x + 1e-30)).flatten().tolist()
    assert energy[0] == pytest.approx(1.0)
    z = cr.randn(2, 5, 2, 2, dtype=cr.float64, requires_grad=True)
    assert cr.autograd.gradcheck(layer, (z,))
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D"):
        layer(cr.ones(1, 2, 2))


def test_nll_loss_2d_warns_and_is_nll_loss():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        loss = nn.NLLLoss2d(reduction="sum")
    x, t = cr.randn(2, 3, 2, 2).log_softmax(1), cr.tensor([[[0, 1], [2, 0]], [[1, 1], [0, 2]]])
    assert isinstance(loss, nn.NLLLoss)
    assert loss(x, t).item() == nn.NLLLoss(reduction="sum")(x, t).item()


def test_adaptive_log_softmax_is_a_distribution_over_all_classes():
    asm = nn.AdaptiveLogSoftmaxWithLoss(6, 9, cutoffs=[3, 6], div_value=2.0).double()
    x = cr.randn(5, 6, dtype=cr.float64)
    log_prob = asm.log_prob(x).detach()
    np.testing.assert_allclose(log_prob.exp().sum(1).numpy(), np.ones(5), rtol=1e-12)
    target = cr.tensor([0, 4, 8, 2, 6])
    out = asm(x, target)
    np.testing.assert_allclose(out.output.detach().numpy(),
                               log_prob.gather(1, target.unsqueeze(1)).flatten().numpy(),
                               rtol=1e-12)
    assert out.loss.item() == pytest.approx(-out.output.mean().item())
    assert asm.predict(x).tolist() == log_prob.argmax(1).tolist()
    assert asm(x[0], cr.tensor(8)).output.shape == ()


def test_adaptive_log_softmax_errors():
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 5, [3, 2])
    with pytest.raises(ValueError, match="length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 5, [])
    asm = nn.AdaptiveLogSoftmaxWithLoss(4, 5, [2])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 4\]"):
        asm(cr.ones(2, 4), cr.tensor([0, 5]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        asm(cr.ones(3, 4), cr.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        asm(cr.ones(2, 4), cr.tensor([[0, 1]]))


def test_data_parallel_wraps_the_module():
    inner = nn.Linear(2, 3)
    expected = inner(cr.ones(4, 2))
    net = nn.DataParallel(inner)
    assert net.module is inner and nn.parallel.DataParallel is nn.DataParallel
    assert list(net.state_dict()) == ["module.weight", "module.bias"]
    out = net(cr.ones(4, 2))
    if cr.cuda.is_available():          # moved to device_ids[0]; the output comes back there
        assert net.device_ids == list(range(cr.cuda.device_count()))
        assert inner.weight.device.type == out.device.type == "cuda"
        out = out.cpu()
    else:                               # torch's CPU case: a plain wrapper
        assert net.device_ids == []
    assert cr.allclose(out, expected)


def test_data_parallel_function_on_the_device():
    if not cr.cuda.is_available():
        with pytest.raises(RuntimeError, match="device type could not be determined"):
            nn.parallel.data_parallel(nn.Linear(2, 3), cr.ones(1, 2))
        return
    net = nn.Linear(2, 3).cuda()
    out = nn.parallel.data_parallel(net, cr.ones(1, 2))
    assert out.device.type == "cuda" and cr.allclose(out.cpu(), net.cpu()(cr.ones(1, 2)))


def test_factory_kwargs_and_common_types():
    assert nn.factory_kwargs(None) == {}
    assert nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": cr.float64}}) == \
        {"device": "cpu", "dtype": cr.float64}
    with pytest.raises(TypeError, match="dtype specified twice, in \\*\\*kwargs and in "
                                        "factory_kwargs"):
        nn.factory_kwargs({"dtype": 1, "factory_kwargs": {"dtype": 2}})
    with pytest.raises(TypeError, match="unexpected kwargs {'layout'}"):
        nn.factory_kwargs({"layout": 1})
    from chainrule.nn.common_types import _ratio_2_t, _size_3_t
    assert _size_3_t == (int | tuple[int, int, int]) and _ratio_2_t.__args__[0] is float


def test_multi_head_attention_forward_is_the_module_computation():
    mha = nn.MultiheadAttention(4, 2, add_zero_attn=True, kdim=3, vdim=3).double()
    q, kv = cr.randn(3, 2, 4, dtype=cr.float64), cr.randn(5, 2, 3, dtype=cr.float64)
    out, weights = F.multi_head_attention_forward(
        q, kv, kv, 4, 2, None, mha.in_proj_bias, None, None, True, 0.0, mha.out_proj.weight,
        mha.out_proj.bias, use_separate_proj_weight=True, q_proj_weight=mha.q_proj_weight,
        k_proj_weight=mha.k_proj_weight, v_proj_weight=mha.v_proj_weight)
    expected, expected_weights = mha(q, kv, kv)
    assert cr.allclose(out, expected) and cr.allclose(weights, expected_weights)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 5, but got 4"):
        F.multi_head_attention_forward(q, q, q, 5, 2, mha.in_proj_weight, None, None, None,
                                       False, 0.0, mha.out_proj.weight, None)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        F.multi_head_attention_forward(q, q, q, 4, 2, mha.in_proj_weight, None, None, None,
                                       False, 0.0, mha.out_proj.weight, None, is_causal=True)
