"""The reference's top-level ATen forms of nn ops (nn/_aten_forms.py): the reduction enum,
the extra outputs of the native norms and dropout, in-place dropout, the convolution and
pooling adapters, embedding_bag's bookkeeping and the recurrent cells.
(Against torch: tests/test_parity_aten_surface.py.)"""
import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F

RNG = np.random.default_rng(5)


def _t(*shape, grad=True):
    return cr.tensor(RNG.standard_normal(shape), requires_grad=grad)


@pytest.mark.filterwarnings("ignore:reduction. .mean. divides")
@pytest.mark.parametrize("enum, name", [(0, "none"), (1, "mean"), (2, "sum"), (3, "none"),
                                        (-1, "none")])
def test_reduction_enum_selects_the_functional_reduction(enum, name):
    x, y = _t(3, 4), cr.rand(3, 4, dtype=cr.float64)
    assert cr.kl_div(x, y, enum).tolist() == F.kl_div(x, y, reduction=name).tolist()
    assert cr.hinge_embedding_loss(x, y.sign(), 1.0, enum).tolist() == \
        F.hinge_embedding_loss(x, y.sign(), 1.0, reduction=name).tolist()


def test_kl_div_mean_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cr.kl_div(cr.zeros(2, 3), cr.ones(2, 3), 1)


def test_reduction_defaults_to_none_and_refuses_strings():
    x, y = _t(2, 3), cr.rand(2, 3, dtype=cr.float64)
    assert cr.binary_cross_entropy_with_logits(x, y).shape == (2, 3)
    with pytest.raises(TypeError, match="argument 'reduction' must be int, not str"):
        cr.kl_div(x, y, reduction="mean")
    with pytest.raises(RuntimeError, match="kl_div: Integral inputs not supported."):
        cr.kl_div(x, cr.ones(2, 3, dtype=cr.int64), 1)


def test_loss_gradients():
    a, b, c = _t(3, 4), _t(3, 4), _t(3, 4)
    s = cr.tensor([1.0, -1.0, 1.0], dtype=cr.float64)
    assert cr.autograd.gradcheck(lambda u, v: cr.cosine_embedding_loss(u, v, s, 0.1, 1), (a, b))
    assert cr.autograd.gradcheck(lambda u, v, w: cr.triplet_margin_loss(u, v, w, 1.0, 2.0,
                                                                        1e-6, True, 2), (a, b, c))
    assert cr.autograd.gradcheck(lambda u: cr.poisson_nll_loss(u, c.detach().abs(), True,
                                                               True, 1e-8, 1), (a,))


def test_native_layer_norm_statistics():
    x = _t(2, 3, 4)
    out, mean, rstd = cr.native_layer_norm(x, [3, 4], None, None, 1e-5)
    assert out.grad_fn.name() == "NativeLayerNormBackward0"
    assert mean.shape == rstd.shape == (2, 1, 1) and not mean.requires_grad
    data = x.detach().numpy().reshape(2, -1)
    np.testing.assert_allclose(mean.numpy().ravel(), data.mean(1))
    np.testing.assert_allclose(rstd.numpy().ravel(), 1 / np.sqrt(data.var(1) + 1e-5))


def test_native_batch_norm_updates_running_stats_and_empty_in_eval():
    x = _t(4, 3)
    rm, rv = cr.zeros(3, dtype=cr.float64), cr.ones(3, dtype=cr.float64)
    out, mean, invstd = cr.native_batch_norm(x, None, None, rm, rv, True, 0.5, 0.0)
    np.testing.assert_allclose(mean.numpy(), x.detach().numpy().mean(0))
    np.testing.assert_allclose(rm.numpy(), 0.5 * x.detach().numpy().mean(0))
    np.testing.assert_allclose(invstd.numpy(), 1 / x.detach().numpy().std(0))
    _, mean, invstd = cr.native_batch_norm(x, None, None, rm, rv, False, 0.5, 0.0)
    assert mean.shape == invstd.shape == (0,)


def test_native_group_norm_statistics_are_differentiable():
    x = _t(2, 4, 3)
    assert cr.autograd.gradcheck(lambda v: cr.native_group_norm(v, None, None, 2, 4, 3, 2,
                                                                1e-5), (x,))


def test_native_norm_has_no_dense_kernel():
    with pytest.raises(NotImplementedError, match="aten::native_norm"):
        cr.native_norm(cr.ones(2))


@pytest.mark.parametrize("dim, shape", [(0, (2, 1, 1)), (1, (1, 3, 1)), (2, (1, 1, 4)),
                                        (-1, ())])
def test_norm_except_dim_shapes_and_gradient(dim, shape):
    v = _t(2, 3, 4)
    assert cr.norm_except_dim(v, 2, dim).shape == shape
    assert cr.autograd.gradcheck(lambda u: cr.norm_except_dim(u, 3, dim), (v,))


def test_native_dropout_mask_and_eval():
    cr.manual_seed(0)
    x = _t(50)
    out, mask = cr.native_dropout(x, 0.5, True)
    assert mask.dtype == cr.bool
    np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy() * mask.numpy() * 2)
    out, mask = cr.native_dropout(x, 0.5, False)
    assert mask.all() and out.tolist() == x.tolist()


def test_inplace_dropouts_return_their_input():
    for fn in (cr.dropout_, cr.alpha_dropout_, cr.feature_dropout_, cr.feature_alpha_dropout_):
        x = cr.ones(4, 5)
        assert fn(x, 0.5, True) is x and x._version > 0
    cr.manual_seed(1)
    kept = cr.feature_dropout(cr.ones(6, 8, 2), 0.5, True)
    assert all(len(set(row)) == 1 for row in kept.reshape(48, 2).tolist())


def test_convolution_matches_the_functional_forms():
    x, w = _t(1, 2, 5), _t(3, 2, 2)
    np.testing.assert_allclose(
        cr.convolution(x, w, None, [2], [1], [1], False, [0], 1).detach().numpy(),
        F.conv1d(x, w, None, 2, 1).detach().numpy())
    wt = _t(2, 3, 2)
    np.testing.assert_allclose(
        cr.convolution(x, wt, None, [2], [0], [1], True, [1], 1).detach().numpy(),
        F.conv_transpose1d(x, wt, None, 2, 0, 1).detach().numpy())


def test_conv_tbc_is_time_batch_channels():
    x, w, b = _t(5, 2, 3), _t(2, 3, 4), _t(4)
    out = cr.conv_tbc(x, w, b, 1)
    expected = F.conv1d(x.permute(1, 2, 0), w.permute(2, 1, 0), b, padding=1).permute(2, 0, 1)
    assert out.shape == (6, 2, 4)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())
    assert cr.autograd.gradcheck(lambda u, v: cr.conv_tbc(u, v, b, 1), (x, w))


def test_pad_pool_and_grid_adapters():
    x = _t(1, 2, 4)
    assert cr.constant_pad_nd(x, [1, -1], 7.0)[0, 0, 0].item() == 7.0
    values, indices = cr.max_pool1d_with_indices(x, [2], [])
    assert values.shape == indices.shape == (1, 2, 2)
    assert cr.adaptive_max_pool1d(x, [1])[1].dtype == cr.int64
    with pytest.raises(RuntimeError, match="expected 4D input"):
        cr.grid_sampler_2d(_t(1, 1, 2, 2, 2), _t(1, 1, 1, 1, 3), 0, 0, False)


def test_embedding_bag_bookkeeping():
    w = cr.arange(12.0).reshape(6, 2)
    idx, offsets = cr.tensor([1, 2, 4, 5, 0]), cr.tensor([0, 2])
    out, bags, sizes, rows = cr.embedding_bag(w, idx, offsets, False, 2)
    assert out.tolist() == [[4.0, 5.0], [10.0, 11.0]]
    assert (bags.tolist(), sizes.tolist(), rows.tolist()) == ([0, 0, 1, 1, 1], [2, 3],
                                                               [[2, 2], [5, 5]])
    _, bags, sizes, rows = cr.embedding_bag(w, idx, offsets, False, 0)
    assert (bags.tolist(), sizes.tolist(), rows.tolist()) == ([], [0, 0], [0, 0])
    _, bags, _, _ = cr.embedding_bag(w.double(), idx, offsets, False, 0)
    assert bags.tolist() == [0, 0, 1, 1, 1]


def test_embedding_renorm_in_place():
    w = cr.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    assert cr.embedding_renorm_(w, cr.tensor([0, 1]), 1.0, 2.0) is w
    np.testing.assert_allclose(w.numpy(), [[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]], rtol=1e-6)


def test_cells_match_the_cell_modules():
    x, h, c = _t(2, 3, grad=False), _t(2, 4, grad=False), _t(2, 4, grad=False)
    lstm = cr.nn.LSTMCell(3, 4).double()
    ours = cr.lstm_cell(x, (h, c), lstm.weight_ih, lstm.weight_hh, lstm.bias_ih, lstm.bias_hh)
    for a, b in zip(ours, lstm(x, (h, c))):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())
    gru = cr.nn.GRUCell(3, 4).double()
    np.testing.assert_allclose(
        cr.gru_cell(x, h, gru.weight_ih, gru.weight_hh, gru.bias_ih, gru.bias_hh).detach().numpy(),
        gru(x, h).detach().numpy())
    rnn = cr.nn.RNNCell(3, 4, nonlinearity="relu").double()
    np.testing.assert_allclose(
        cr.rnn_relu_cell(x, h, rnn.weight_ih, rnn.weight_hh, rnn.bias_ih,
                         rnn.bias_hh).detach().numpy(), rnn(x, h).detach().numpy())


def test_recurrent_kernels_match_the_modules():
    lstm = cr.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True).double()
    x = _t(2, 5, 3, grad=False)
    h, c = _t(4, 2, 4, grad=False), _t(4, 2, 4, grad=False)
    params = [p for layer in lstm.all_weights for p in layer]
    ours = cr.lstm(x, [h, c], params, True, 2, 0.0, False, True, True)
    expected = lstm(x, (h, c))
    for a, b in zip(ours, (expected[0],) + expected[1]):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())
    gru, x = cr.nn.GRU(3, 4, bias=False).double(), x.transpose(0, 1)
    out, h_n = cr.gru(x, h[:1], list(gru.parameters()), False, 1, 0.0, False, False, False)
    np.testing.assert_allclose(out.detach().numpy(), gru(x, h[:1])[0].detach().numpy())


def test_recurrent_kernel_over_packed_data():
    rnn = cr.nn.RNN(3, 4).double()
    seqs = [_t(3, 3, grad=False), _t(1, 3, grad=False)]
    packed = cr.nn.utils.rnn.pack_sequence(seqs)
    h0 = cr.zeros(1, 2, 4, dtype=cr.float64)
    out, h_n = cr.rnn_tanh(packed.data, packed.batch_sizes, h0, list(rnn.parameters()), True,
                           1, 0.0, False, False)
    expected, expected_h = rnn(packed, h0)
    np.testing.assert_allclose(out.detach().numpy(), expected.data.detach().numpy())
    np.testing.assert_allclose(h_n.detach().numpy(), expected_h.detach().numpy())


def test_batch_norm_update_stats():
    x = _t(4, 3, 2)
    rm, rv = cr.zeros(3, dtype=cr.float64), cr.ones(3, dtype=cr.float64)
    mean, var = cr.batch_norm_update_stats(x, rm, rv, 0.5)
    data = x.detach().numpy()
    np.testing.assert_allclose(mean.detach().numpy(), data.mean((0, 2)))
    np.testing.assert_allclose(var.detach().numpy(), data.var((0, 2)))
    np.testing.assert_allclose(rv.numpy(), 0.5 + 0.5 * data.var((0, 2), ddof=1))
    assert cr.autograd.gradcheck(lambda v: cr.batch_norm_update_stats(v, None, None, 0.1), (x,))


@pytest.mark.parametrize("name", ["batch_norm_stats", "batch_norm_elemt",
                                  "batch_norm_gather_stats",
                                  "batch_norm_gather_stats_with_counts",
                                  "batch_norm_backward_reduce", "batch_norm_backward_elemt"])
def test_sync_batch_norm_kernels_have_no_cpu_kernel(name):
    with pytest.raises(NotImplementedError, match=f"aten::{name}' with arguments from the 'CPU'"):
        getattr(cr, name)(cr.ones(2, 3), 1e-5)


def test_native_norms_on_meta_tensors():
    x = cr.empty(2, 3, 4, device="meta")
    shapes = [t.shape for t in cr.native_layer_norm(x, [4], None, None, 1e-5)]
    assert shapes == [(2, 3, 4), (2, 3, 1), (2, 3, 1)]
    out, mean, invstd = cr.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
    assert mean.device.type == "meta" and mean.shape == invstd.shape == (3,)


def test_conv_tbc_is_one_node_with_the_reference_s_checks():
    x = cr.ones(4, 1, 2, dtype=cr.float64, requires_grad=True)
    w = cr.ones(2, 2, 3, dtype=cr.float64, requires_grad=True)
    b = cr.zeros(3, dtype=cr.float64, requires_grad=True)
    y = cr.conv_tbc(x, w, b, 1)
    assert type(y.grad_fn).__name__ == "ConvTbcBackward0" and tuple(y.shape) == (5, 1, 3)
    assert cr.autograd.gradcheck(lambda x, w, b: cr.conv_tbc(x, w, b, 1), (x, w, b))
    assert cr.autograd.gradgradcheck(lambda x, w, b: cr.conv_tbc(x, w, b, 1), (x, w, b))
    with pytest.raises(RuntimeError, match="^Input dim 2 \\(input channels\\) is not == dim 1"):
        cr.conv_tbc(cr.ones(4, 1, 3), w, b)
    with pytest.raises(RuntimeError, match="^Bias size must equal dim 2 in the weight tensor"):
        cr.conv_tbc(x, w, cr.zeros(2))
