"""The layers of chainrule.nn: default initialisation, outputs against NumPy
references, gradients reaching the parameters, reprs and argument errors; nn.init;
nn.utils. Outputs and gradients against torch are in tests/test_parity_nn.py."""
import math

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn


def arr(t):
    return t.detach().numpy()


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- Linear, Bilinear, Flatten ---------------------------------------------------------------
def test_linear_default_init_bounds_and_output():
    fc = nn.Linear(50, 20)
    bound = 1 / math.sqrt(50)
    assert fc.weight.shape == (20, 50) and fc.bias.shape == (20,)
    assert np.abs(arr(fc.weight)).max() <= bound and np.abs(arr(fc.bias)).max() <= bound
    assert np.abs(arr(fc.weight)).max() > 0.8 * bound           # uniform over the range
    x = cr.randn(7, 50)
    assert np.allclose(arr(fc(x)), arr(x) @ arr(fc.weight).T + arr(fc.bias), atol=1e-5)
    assert nn.Linear(3, 2, bias=False).bias is None
    assert nn.Linear(2, 2, dtype=cr.float64).weight.dtype == cr.float64


def test_bilinear_matches_einsum():
    m = nn.Bilinear(3, 4, 2)
    x1, x2 = cr.randn(5, 3), cr.randn(5, 4)
    want = np.einsum("ni,oij,nj->no", arr(x1), arr(m.weight), arr(x2)) + arr(m.bias)
    assert np.allclose(arr(m(x1, x2)), want, atol=1e-5)
    assert repr(m) == "Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)"


def test_identity_flatten_unflatten():
    x = cr.randn(2, 3, 4)
    assert nn.Identity(1, k=2)(x) is x
    assert nn.Flatten()(x).shape == (2, 12) and nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Unflatten(1, (3, 1))(cr.randn(2, 3)).shape == (2, 3, 1)
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"


# -- convolutions ----------------------------------------------------------------------------
def test_conv2d_init_output_and_grads():
    conv = nn.Conv2d(2, 4, 3, padding=1, bias=True)
    bound = 1 / math.sqrt(2 * 9)
    assert conv.weight.shape == (4, 2, 3, 3) and np.abs(arr(conv.bias)).max() <= bound
    x = cr.randn(1, 2, 5, 5, requires_grad=True)
    out = conv(x)
    assert np.allclose(arr(out), arr(F.conv2d(x, conv.weight, conv.bias, padding=1)))
    out.sum().backward()
    assert conv.weight.grad.shape == (4, 2, 3, 3) and x.grad.shape == (1, 2, 5, 5)


def test_conv_reprs_like_torch():
    assert repr(nn.Conv2d(3, 8, 5, stride=2, padding=1, bias=False)) == \
        "Conv2d(3, 8, kernel_size=(5, 5), stride=(2, 2), padding=(1, 1), bias=False)"
    assert repr(nn.Conv2d(4, 4, (1, 3), groups=2, dilation=2, padding="same")) == \
        "Conv2d(4, 4, kernel_size=(1, 3), stride=(1, 1), padding=same, dilation=(2, 2), groups=2)"
    assert repr(nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1)) == \
        "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"
    assert nn.ConvTranspose2d(4, 6, 3, groups=2).weight.shape == (4, 3, 3, 3)


def test_conv_argument_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")


@pytest.mark.parametrize("padding,expected", [("same", [[[1.0, 2.0, 3.0]]]),
                                              ("valid", [[[2.0, 3.0]]]), (1, [[[1.0, 2.0, 3.0, 2.0]]])])
def test_conv_padding_mode_pads_same_and_valid_like_the_reference(padding, expected):
    conv = nn.Conv1d(1, 1, 4 if padding == "same" else 2, padding=padding,
                     padding_mode="reflect", bias=False)
    with cr.no_grad():
        conv.weight.zero_()
        conv.weight[0, 0, 1] = 1.0                 # picks the second tap of each window
    # 'same' with kernel 4: one before, two after (the odd extra after): [2, 1, 2, 3, 2, 1]
    assert conv(cr.tensor([[[1.0, 2.0, 3.0]]])).tolist() == expected


# -- activations as modules ------------------------------------------------------------------
ACTIVATIONS = [
    (nn.ReLU(), lambda x: F.relu(x)), (nn.LeakyReLU(0.2), lambda x: F.leaky_relu(x, 0.2)),
    (nn.ELU(0.5), lambda x: F.elu(x, 0.5)), (nn.SELU(), F.selu), (nn.CELU(2.0), lambda x: F.celu(x, 2.0)),
    (nn.GELU("tanh"), lambda x: F.gelu(x, approximate="tanh")), (nn.SiLU(), F.silu),
    (nn.Mish(), F.mish), (nn.Sigmoid(), F.sigmoid), (nn.Tanh(), F.tanh),
    (nn.Softplus(2.0, 10.0), lambda x: F.softplus(x, 2.0, 10.0)), (nn.Softsign(), F.softsign),
    (nn.Softshrink(0.3), lambda x: F.softshrink(x, 0.3)), (nn.Hardshrink(), F.hardshrink),
    (nn.Tanhshrink(), F.tanhshrink), (nn.Hardtanh(-0.5, 0.5), lambda x: F.hardtanh(x, -0.5, 0.5)),
    (nn.ReLU6(), F.relu6), (nn.Hardsigmoid(), F.hardsigmoid), (nn.Hardswish(), F.hardswish),
    (nn.LogSigmoid(), F.logsigmoid), (nn.Threshold(0.1, 5.0), lambda x: F.threshold(x, 0.1, 5.0)),
    (nn.Softmax(dim=1), lambda x: F.softmax(x, dim=1)),
    (nn.LogSoftmax(dim=0), lambda x: F.log_softmax(x, dim=0)),
    (nn.Softmin(dim=1), lambda x: F.softmin(x, dim=1)), (nn.GLU(), F.glu)]


@pytest.mark.parametrize("module, fn", ACTIVATIONS, ids=lambda v: type(v).__name__)
def test_activation_modules_call_their_functional(module, fn):
    x = cr.randn(3, 4)
    assert np.allclose(arr(module(x)), arr(fn(x)))


def test_activation_reprs_like_torch():
    assert repr(nn.ReLU()) == "ReLU()" and repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(nn.ELU(alpha=0.5, inplace=True)) == "ELU(alpha=0.5, inplace=True)"
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"
    assert repr(nn.Hardtanh()) == "Hardtanh(min_val=-1.0, max_val=1.0)"
    assert repr(nn.Softshrink()) == "Softshrink(0.5)"
    assert repr(nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"
    assert repr(nn.PReLU(3)) == "PReLU(num_parameters=3)"


def test_prelu_learns_its_slope_and_inplace_relu():
    m = nn.PReLU()
    y = m(cr.tensor([-2.0, 1.0]))
    assert y.tolist() == [-0.5, 1.0]
    y.sum().backward()
    assert m.weight.grad.tolist() == [-2.0]
    x = cr.tensor([-1.0, 1.0])
    assert nn.ReLU(inplace=True)(x) is x and x.tolist() == [0.0, 1.0]


def test_rrelu_is_random_in_training_only():
    m = nn.RReLU(0.1, 0.3)
    x = -cr.ones(1000)
    slopes = -arr(m(x))
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0
    assert np.allclose(arr(m.eval()(x)), -0.2)


# -- losses as modules ------------------------------------------------------------------------
def test_loss_modules_call_their_functional():
    x, y = cr.randn(4, 3), cr.randn(4, 3)
    p, t = cr.rand(4, 3), cr.rand(4, 3).round()
    cases = [(nn.MSELoss(reduction="sum"), (x, y), F.mse_loss(x, y, reduction="sum")),
             (nn.L1Loss(), (x, y), F.l1_loss(x, y)),
             (nn.SmoothL1Loss(beta=0.5), (x, y), F.smooth_l1_loss(x, y, beta=0.5)),
             (nn.HuberLoss(delta=0.5), (x, y), F.huber_loss(x, y, delta=0.5)),
             (nn.BCELoss(), (p, t), F.binary_cross_entropy(p, t)),
             (nn.BCEWithLogitsLoss(pos_weight=cr.ones(3) * 2), (x, t),
              F.binary_cross_entropy_with_logits(x, t, pos_weight=cr.ones(3) * 2)),
             (nn.KLDivLoss(reduction="batchmean"), (x.log_softmax(1), p),
              F.kl_div(x.log_softmax(1), p, reduction="batchmean")),
             (nn.SoftMarginLoss(), (x, t * 2 - 1), F.soft_margin_loss(x, t * 2 - 1))]
    for module, args, want in cases:
        assert np.allclose(arr(module(*args)), arr(want)), type(module).__name__


def test_cross_entropy_and_nll_modules_with_weight_buffer():
    logits, target = cr.randn(5, 3), cr.tensor([0, 2, 1, 2, 0])
    weight = cr.tensor([1.0, 2.0, 0.5])
    ce = nn.CrossEntropyLoss(weight=weight, label_smoothing=0.1)
    assert [n for n, _ in ce.named_buffers()] == ["weight"]
    assert np.allclose(arr(ce(logits, target)),
                       arr(F.cross_entropy(logits, target, weight=weight, label_smoothing=0.1)))
    nll = nn.NLLLoss(ignore_index=2, reduction="none")
    assert nll(logits.log_softmax(1), target).tolist()[1] == 0.0


def test_legacy_reduction_arguments_warn():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    assert repr(nn.MSELoss()) == "MSELoss()"


# -- dropout ---------------------------------------------------------------------------------
def test_dropout_scales_in_training_and_is_identity_in_eval():
    m = nn.Dropout(0.25)
    y = arr(m(cr.ones(4000)))
    assert set(np.unique(y).tolist()) <= {0.0, float(np.float32(1 / 0.75))} and 0.2 < (y == 0).mean() < 0.3
    assert arr(m.eval()(cr.ones(10))).tolist() == [1.0] * 10
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    y2 = arr(nn.Dropout2d(0.5)(cr.ones(2, 50, 3, 3)))
    assert all(len(np.unique(c)) == 1 for c in y2.reshape(100, 9))   # whole channels


# -- recurrent layers: NumPy references ----------------------------------------------------------
def numpy_lstm(layer, x, h, c):
    w_ih, w_hh = arr(layer.weight_ih_l0), arr(layer.weight_hh_l0)
    b = arr(layer.bias_ih_l0) + arr(layer.bias_hh_l0)
    outs = []
    for t in range(x.shape[0]):
        i, f, g, o = np.split(x[t] @ w_ih.T + h @ w_hh.T + b, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def numpy_gru(layer, x, h, suffix="_l0", reverse=False):
    w_ih, w_hh = arr(getattr(layer, "weight_ih" + suffix)), arr(getattr(layer, "weight_hh" + suffix))
    b_ih, b_hh = arr(getattr(layer, "bias_ih" + suffix)), arr(getattr(layer, "bias_hh" + suffix))
    outs = [None] * x.shape[0]
    for t in (reversed(range(x.shape[0])) if reverse else range(x.shape[0])):
        xr, xz, xn = np.split(x[t] @ w_ih.T + b_ih, 3, axis=-1)
        hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=-1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        h = (1 - z) * np.tanh(xn + r * hn) + z * h
        outs[t] = h
    return np.stack(outs), h


def test_lstm_matches_numpy_with_initial_state(float64_default):
    lstm = nn.LSTM(3, 5)
    x, h0, c0 = cr.randn(6, 2, 3), cr.randn(1, 2, 5), cr.randn(1, 2, 5)
    out, (h, c) = lstm(x, (h0, c0))
    want_out, want_h, want_c = numpy_lstm(lstm, arr(x), arr(h0)[0], arr(c0)[0])
    assert np.allclose(arr(out), want_out) and np.allclose(arr(h)[0], want_h)
    assert np.allclose(arr(c)[0], want_c)


def test_bidirectional_batch_first_gru_matches_numpy(float64_default):
    gru = nn.GRU(3, 4, bidirectional=True, batch_first=True)
    x = cr.randn(2, 5, 3)
    out, h = gru(x)
    seq = arr(x).transpose(1, 0, 2)
    fwd, hf = numpy_gru(gru, seq, np.zeros((2, 4)))
    bwd, hb = numpy_gru(gru, seq, np.zeros((2, 4)), "_l0_reverse", reverse=True)
    assert out.shape == (2, 5, 8) and h.shape == (2, 2, 4)
    assert np.allclose(arr(out), np.concatenate([fwd, bwd], -1).transpose(1, 0, 2))
    assert np.allclose(arr(h), np.stack([hf, hb]))


def test_rnn_layers_parameters_and_init():
    rnn = nn.RNN(3, 4, num_layers=2, bidirectional=True, nonlinearity="relu")
    names = [n for n, _ in rnn.named_parameters()]
    assert names[:4] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    assert names[4] == "weight_ih_l0_reverse" and rnn.weight_ih_l1.shape == (4, 8)
    assert all(np.abs(arr(p)).max() <= 0.5 for p in rnn.parameters())
    assert repr(rnn) == "RNN(3, 4, num_layers=2, bidirectional=True)"       # as torch's
    lstm = nn.LSTM(3, 6, proj_size=2)
    assert lstm.weight_hr_l0.shape == (2, 6) and lstm.weight_hh_l0.shape == (24, 2)
    out, (h, c) = lstm(cr.randn(4, 3))
    assert out.shape == (4, 2) and h.shape == (1, 2) and c.shape == (1, 6)


def test_rnn_unbatched_dropout_and_grads():
    rnn = nn.RNN(2, 3, num_layers=3, dropout=0.5)
    out, h = rnn(cr.randn(4, 2), cr.zeros(3, 3))
    assert out.shape == (4, 3) and h.shape == (3, 3)
    out.sum().backward()
    assert all(p.grad is not None for p in rnn.parameters())
    rnn.eval()
    x = cr.randn(4, 2)
    assert cr.equal(rnn(x)[0], rnn(x)[0])


def test_rnn_errors():
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 4D tensor instead"):
        nn.RNN(2, 3)(cr.randn(1, 2, 3, 2))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 2, got 5"):
        nn.GRU(2, 3)(cr.randn(4, 1, 5))
    with pytest.raises(RuntimeError, match="Expected hidden size \\(2, 1, 3\\), got \\[1, 1, 3\\]"):
        nn.RNN(2, 3, num_layers=2)(cr.randn(4, 1, 2), cr.zeros(1, 1, 3))
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(2, 3, proj_size=1)


def test_cells_match_one_step_of_the_layers(float64_default):
    x, h = cr.randn(2, 3), cr.randn(2, 4)
    cell, layer = nn.GRUCell(3, 4), nn.GRU(3, 4)
    with cr.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(layer, name + "_l0").copy_(getattr(cell, name))
    assert np.allclose(arr(cell(x, h)), arr(layer(x.unsqueeze(0), h.unsqueeze(0))[1][0]))
    hc = nn.LSTMCell(3, 4)(x)
    assert hc[0].shape == (2, 4) and hc[1].shape == (2, 4)
    assert nn.RNNCell(3, 4, nonlinearity="relu")(x[0]).shape == (4,)


# -- attention ------------------------------------------------------------------------------------
def numpy_mha(m, q, k, v, mask=None):
    e, heads = m.embed_dim, m.num_heads
    w, b = arr(m.in_proj_weight), arr(m.in_proj_bias)
    qp, kp, vp = q @ w[:e].T + b[:e], k @ w[e:2 * e].T + b[e:2 * e], v @ w[2 * e:].T + b[2 * e:]
    d = e // heads
    split = lambda t: t.reshape(t.shape[0], heads, d).transpose(1, 0, 2)    # noqa: E731
    scores = split(qp) @ split(kp).transpose(0, 2, 1) / math.sqrt(d)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    attn = np.exp(scores - scores.max(-1, keepdims=True))
    attn /= attn.sum(-1, keepdims=True)
    out = (attn @ split(vp)).transpose(1, 0, 2).reshape(q.shape[0], e)
    return out @ arr(m.out_proj.weight).T + arr(m.out_proj.bias), attn.mean(0)


def test_multihead_attention_matches_numpy(float64_default):
    m = nn.MultiheadAttention(6, 3)
    q, kv = cr.randn(4, 1, 6), cr.randn(5, 1, 6)
    mask = cr.tensor(np.triu(np.ones((4, 5), bool), 2))
    out, weights = m(q, kv, kv, attn_mask=mask)
    want_out, want_w = numpy_mha(m, arr(q)[:, 0], arr(kv)[:, 0], arr(kv)[:, 0], arr(mask))
    assert np.allclose(arr(out)[:, 0], want_out) and np.allclose(arr(weights)[0], want_w)
    out.sum().backward()
    assert m.in_proj_weight.grad is not None and m.out_proj.weight.grad is not None


def test_multihead_attention_options():
    m = nn.MultiheadAttention(4, 2, batch_first=True, add_bias_kv=True, add_zero_attn=True,
                              kdim=3, vdim=5)
    q, k, v = cr.randn(2, 3, 4), cr.randn(2, 6, 3), cr.randn(2, 6, 5)
    pad = cr.zeros(2, 6, dtype=cr.bool)
    out, w = m(q, k, v, key_padding_mask=pad, average_attn_weights=False)
    assert out.shape == (2, 3, 4) and w.shape == (2, 2, 3, 8)
    assert m.in_proj_weight is None and m.k_proj_weight.shape == (4, 3)
    assert m(q, k, v, need_weights=False)[1] is None
    causal = nn.MultiheadAttention(4, 1)(cr.randn(3, 4), cr.randn(3, 4), cr.randn(3, 4),
                                         is_causal=True)[1]
    assert np.allclose(np.triu(arr(causal), 1), 0)


# -- nn.init ------------------------------------------------------------------------------------
def test_calculate_gain_table():
    init = nn.init
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("tanh") == 5.0 / 3 and init.calculate_gain("selu") == 0.75
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("leaky_relu") == math.sqrt(2 / (1 + 0.01 ** 2))
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


def test_init_distributions_have_the_right_spread():
    init = nn.init
    w = cr.empty(400, 300)
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert arr(w).std() == pytest.approx(math.sqrt(2 / 400), rel=0.05)
    init.kaiming_uniform_(w, a=0)
    assert np.abs(arr(w)).max() <= math.sqrt(6 / 300)
    init.xavier_uniform_(w, gain=2.0)
    assert np.abs(arr(w)).max() <= 2 * math.sqrt(6 / 700)
    init.xavier_normal_(w)
    assert arr(w).std() == pytest.approx(math.sqrt(2 / 700), rel=0.05)
    init.trunc_normal_(w, mean=1.0, std=2.0, a=0.0, b=3.0)
    assert arr(w).min() >= 0 and arr(w).max() <= 3
    init.normal_(w, 3.0, 0.5)
    assert arr(w).mean() == pytest.approx(3.0, abs=0.01)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init.xavier_uniform_(cr.empty(3))


def test_init_deterministic_fills_and_seeding():
    init = nn.init
    assert arr(init.eye_(cr.empty(2, 2))).tolist() == [[1, 0], [0, 1]]
    assert arr(init.constant_(cr.empty(2), 3)).tolist() == [3, 3]
    w = init.dirac_(cr.empty(4, 2, 3), groups=2)
    assert arr(w)[2, 0, 1] == 1 and arr(w).sum() == 4
    q = init.orthogonal_(cr.empty(6, 4, dtype=cr.float64), gain=2)
    assert np.allclose(arr(q).T @ arr(q), 4 * np.eye(4))
    cr.manual_seed(3)
    a = arr(init.uniform_(cr.empty(5))).copy()
    cr.manual_seed(3)
    assert np.array_equal(a, arr(init.uniform_(cr.empty(5))))
    g = cr.Generator().manual_seed(1)
    b = arr(init.normal_(cr.empty(3), generator=g)).copy()
    assert np.array_equal(b, arr(init.normal_(cr.empty(3), generator=g.manual_seed(1))))


def test_init_on_parameters_records_nothing():
    p = nn.Parameter(cr.zeros(3, 3))
    nn.init.kaiming_uniform_(p)
    assert p.is_leaf and p.grad_fn is None and p._version > 0


# -- nn.utils --------------------------------------------------------------------------------------
def test_clip_grad_norm_and_value():
    a, b = nn.Parameter(cr.zeros(2)), nn.Parameter(cr.zeros(1))
    a.grad, b.grad = cr.tensor([3.0, 0.0]), cr.tensor([4.0])
    total = nn.utils.clip_grad_norm_([a, b], 1.0)
    assert total.item() == pytest.approx(5.0)
    assert np.allclose(arr(a.grad), [0.6, 0.0], atol=1e-6) and np.allclose(arr(b.grad), [0.8], atol=1e-6)
    a.grad = cr.tensor([3.0, -7.0])
    assert nn.utils.clip_grad_norm_(a, 100.0, norm_type="inf").item() == 7.0
    assert arr(a.grad).tolist() == [3.0, -7.0]                # below max_norm: unchanged
    nn.utils.clip_grad_value_([a], 2.0)
    assert arr(a.grad).tolist() == [2.0, -2.0]
    a.grad = cr.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([nn.Parameter(cr.zeros(1))], 1.0).item() == 0.0


def test_parameters_vector_round_trip():
    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    vec = nn.utils.parameters_to_vector(model.parameters())
    assert vec.shape == (13,) and vec.requires_grad
    nn.utils.vector_to_parameters(vec.detach() * 0 + 1, model.parameters())
    assert all(np.all(arr(p) == 1) for p in model.parameters())
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], model.parameters())


# -- transformer ------------------------------------------------------------------------------------
def test_transformer_encoder_layer_shapes_grads_and_submodule_names():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    x = cr.randn(3, 5, 8, requires_grad=True)
    out = layer(x, src_key_padding_mask=cr.zeros(3, 5, dtype=cr.bool), is_causal=False)
    assert out.shape == (3, 5, 8)
    out.sum().backward()
    assert x.grad is not None and layer.linear1.weight.grad is not None
    assert [n for n, _ in layer.named_children()] == [
        "self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1", "dropout2"]
    stack = nn.TransformerEncoder(layer, 3)
    assert len(stack.layers) == 3 and stack.layers[0] is not layer
    assert repr(stack).count("3 x TransformerEncoderLayer(") == 1
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_transformer_init_and_causal_mask():
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=16)
    w = arr(model.encoder.layers[0].linear1.weight)
    assert np.abs(w).max() <= math.sqrt(6 / (8 + 16))          # xavier_uniform_
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype == cr.float32 and arr(mask)[0, 1] == -np.inf and arr(mask)[1, 0] == 0


# -- padding, other norms, rearrangements -----------------------------------------------------------
def test_padding_modules():
    x = cr.arange(1.0, 4.0).reshape(1, 1, 3)
    assert arr(nn.ZeroPad1d(1)(x)).tolist() == [[[0, 1, 2, 3, 0]]]
    assert arr(nn.ConstantPad1d((0, 2), 9.0)(x)).tolist() == [[[1, 2, 3, 9, 9]]]
    assert arr(nn.ReflectionPad1d(1)(x)).tolist() == [[[2, 1, 2, 3, 2]]]
    assert arr(nn.ReplicationPad1d(1)(x)).tolist() == [[[1, 1, 2, 3, 3]]]
    assert arr(nn.CircularPad1d(1)(x)).tolist() == [[[3, 1, 2, 3, 1]]]
    assert nn.ZeroPad2d((1, 0, 2, 1))(cr.ones(1, 1, 2, 2)).shape == (1, 1, 5, 3)
    assert repr(nn.ZeroPad2d(1)) == "ZeroPad2d((1, 1, 1, 1))"
    assert repr(nn.ConstantPad1d(2, 0.5)) == "ConstantPad1d(padding=(2, 2), value=0.5)"


def test_instance_rms_and_local_response_norm(float64_default):
    x = cr.randn(2, 3, 5)
    got = arr(nn.InstanceNorm1d(3)(x))
    ref = (arr(x) - arr(x).mean(-1, keepdims=True)) / np.sqrt(arr(x).var(-1, keepdims=True) + 1e-5)
    assert np.allclose(got, ref)
    inorm = nn.InstanceNorm1d(3, track_running_stats=True)
    inorm(x)
    assert not np.allclose(arr(inorm.running_mean), 0)
    r = arr(nn.RMSNorm(5, eps=1e-6)(x))
    assert np.allclose(r, arr(x) / np.sqrt((arr(x) ** 2).mean(-1, keepdims=True) + 1e-6))
    assert nn.LocalResponseNorm(2)(cr.ones(1, 4, 3)).shape == (1, 4, 3)


def test_pixel_and_channel_shuffles_and_distances():
    x = cr.randn(2, 8, 3, 3)
    up = nn.PixelShuffle(2)(x)
    assert up.shape == (2, 2, 6, 6) and cr.equal(nn.PixelUnshuffle(2)(up), x)
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        nn.PixelShuffle(3)(x)
    assert arr(nn.ChannelShuffle(2)(cr.arange(6.0).reshape(1, 6))).tolist() == [[0, 3, 1, 4, 2, 5]]
    a, b = cr.randn(4, 3), cr.randn(4, 3)
    assert np.allclose(arr(nn.CosineSimilarity()(a, b)), arr(F.cosine_similarity(a, b)))
    assert nn.PairwiseDistance(keepdim=True)(a, b).shape == (4, 1)


def test_upsample_fold_unfold_and_conv3d():
    x = cr.arange(4.0).reshape(1, 1, 2, 2)
    assert arr(nn.Upsample(scale_factor=2)(x))[0, 0, :2, :2].tolist() == [[0, 0], [0, 0]]
    assert repr(nn.Upsample(size=(3, 4), mode="bilinear")) == "Upsample(size=(3, 4), mode='bilinear')"
    cols = nn.Unfold(2)(cr.randn(1, 2, 3, 3))
    assert cols.shape == (1, 8, 4) and nn.Fold((3, 3), 2)(cols).shape == (1, 2, 3, 3)
    conv = nn.Conv3d(2, 3, 2, bias=False)
    assert conv(cr.randn(1, 2, 3, 3, 3)).shape == (1, 3, 2, 2, 2) and conv.bias is None


def test_norm_layers_bias_argument():
    bn = nn.BatchNorm1d(3, bias=False)
    assert bn.bias is None and [n for n, _ in bn.named_parameters()] == ["weight"]
    assert repr(bn) == "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=True)"
    assert nn.GroupNorm(2, 4, bias=False).bias is None
    assert nn.LayerNorm(3, bias=False)(cr.randn(2, 3)).shape == (2, 3)


def test_batchnorm_load_without_metadata_keeps_num_batches_tracked():
    # A plain dict (no _metadata: version None < 2) lacking num_batches_tracked is
    # an old checkpoint: torch keeps the module's counter and reports nothing missing.
    bn = nn.BatchNorm1d(2)
    bn(cr.tensor([[1.0, 2.0], [3.0, 5.0]]))
    old = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    fresh = nn.BatchNorm1d(2)
    result = fresh.load_state_dict(old, strict=False)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert fresh.num_batches_tracked.item() == 0
    # With version-2 metadata the key really is missing.
    current = bn.state_dict()
    del current["num_batches_tracked"]
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        nn.BatchNorm1d(2).load_state_dict(current)
