"""Parity tier for chainrule.nn and chainrule.optim against PyTorch (skips without
torch).

Modules: the same constructor arguments on both sides, torch's initial weights copied
into chainrule's module (``load_state_dict``), the same input and output gradient;
outputs, input gradients, parameter gradients, buffers (running statistics), state_dict
keys and reprs must agree. Optimizers: the same model trained 20 steps on both sides,
every parameter equal to 1e-6 after every step. Schedulers: the same learning rates
for 30 steps.
"""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402
from chainrule import nn  # noqa: E402

RNG = np.random.default_rng(0)


def to_cr(t):
    return cr.tensor(t.detach().numpy().copy())


def arr(t):
    return t.detach().numpy()


def copy_weights(ours, theirs):
    """torch's initial parameters and buffers into chainrule's module."""
    state = {k: to_cr(v) for k, v in theirs.state_dict().items()}
    result = ours.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys


def pair(name, *args, **kwargs):
    """The same module built on both sides (float64), torch's weights in ours."""
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(nn, name)(*args, **kwargs).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    copy_weights(ours, theirs)
    return ours, theirs


def _outputs(out):
    if isinstance(out, tuple):
        flat = []
        for o in out:
            flat += _outputs(o)
        return flat
    return [out] if out is not None else []


def check_module(ours, theirs, *inputs, atol=1e-9, train=True, grad_inputs=None):
    """Forward, backward with the same random output gradients, and compare
    (``grad_inputs``: how many leading inputs require grad; default all floating)."""
    ours.train(train)
    theirs.train(train)
    needs = [np.issubdtype(v.dtype, np.floating) and (grad_inputs is None or i < grad_inputs)
             for i, v in enumerate(inputs)]
    t_in = [torch.tensor(v, requires_grad=n) for v, n in zip(inputs, needs)]
    c_in = [cr.tensor(v, requires_grad=n) for v, n in zip(inputs, needs)]
    t_out, c_out = _outputs(theirs(*t_in)), _outputs(ours(*c_in))
    assert len(t_out) == len(c_out)
    grads = [RNG.standard_normal(tuple(o.shape)) for o in t_out]
    for a, b in zip(c_out, t_out):
        np.testing.assert_allclose(arr(a), arr(b), rtol=1e-7, atol=atol)
    torch.autograd.backward([o for o in t_out if o.requires_grad],
                            [torch.tensor(g) for o, g in zip(t_out, grads) if o.requires_grad])
    cr.autograd.backward([o for o in c_out if o.requires_grad],
                         [cr.tensor(g) for o, g in zip(c_out, grads) if o.requires_grad])
    for a, b in zip(c_in, t_in):
        if b.grad is not None:
            np.testing.assert_allclose(arr(a.grad), arr(b.grad), rtol=1e-7, atol=atol)
    ours_params = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        if p.grad is None:
            assert ours_params[name].grad is None, name
        else:
            np.testing.assert_allclose(arr(ours_params[name].grad), arr(p.grad), rtol=1e-7,
                                       atol=atol, err_msg=name)
    for name, b in theirs.named_buffers():
        np.testing.assert_allclose(arr(dict(ours.named_buffers())[name]), arr(b), rtol=1e-7,
                                   atol=atol, err_msg=name)


def x(*shape):
    return RNG.standard_normal(shape)


# -- layers ---------------------------------------------------------------------------------
LAYERS = [
    ("Linear", (5, 3), {}, lambda: [x(4, 5)]),
    ("Linear", (5, 3), {"bias": False}, lambda: [x(2, 4, 5)]),
    ("Bilinear", (3, 4, 2), {}, lambda: [x(5, 3), x(5, 4)]),
    ("Conv2d", (2, 4, 3), {"padding": 1}, lambda: [x(2, 2, 6, 6)]),
    ("Conv2d", (4, 6, (3, 2)), {"stride": 2, "groups": 2, "dilation": (1, 2), "bias": False},
     lambda: [x(1, 4, 9, 9)]),
    ("Conv2d", (2, 3, 3), {"padding": "same"}, lambda: [x(2, 5, 5)]),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "reflect"}, lambda: [x(2, 2, 5, 5)]),
    ("Conv2d", (2, 3, 3), {"padding": (1, 2), "padding_mode": "circular"}, lambda: [x(1, 2, 5, 6)]),
    ("Conv2d", (2, 3, 2), {"padding": 2, "padding_mode": "replicate", "stride": 2},
     lambda: [x(1, 2, 5, 5)]),
    ("MaxPool2d", (2,), {}, lambda: [x(2, 3, 6, 6)]),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, lambda: [x(2, 3, 7, 6)]),
    ("AvgPool2d", (2,), {}, lambda: [x(2, 3, 6, 6)]),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False},
     lambda: [x(2, 3, 7, 6)]),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, lambda: [x(2, 3, 7, 8)]),
    ("AdaptiveMaxPool2d", (2,), {}, lambda: [x(2, 3, 5, 5)]),
    ("MaxPool1d", (2,), {}, lambda: [x(2, 3, 7)]),
    ("AvgPool1d", (3,), {"stride": 2}, lambda: [x(2, 3, 8)]),
    ("AdaptiveAvgPool1d", (3,), {}, lambda: [x(2, 3, 8)]),
    ("BatchNorm1d", (3,), {}, lambda: [x(5, 3)]),
    ("BatchNorm1d", (3,), {"momentum": None, "affine": False}, lambda: [x(4, 3, 6)]),
    ("BatchNorm2d", (3,), {}, lambda: [x(4, 3, 2, 2)]),
    ("BatchNorm2d", (3,), {"train": False}, lambda: [x(4, 3, 2, 2)]),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, lambda: [x(4, 3, 2, 2)]),
    ("LayerNorm", ((3, 4),), {}, lambda: [x(2, 3, 4)]),
    ("LayerNorm", (4,), {"elementwise_affine": False}, lambda: [x(5, 4)]),
    ("LayerNorm", (4,), {"bias": False, "eps": 1e-3}, lambda: [x(5, 4)]),
    ("GroupNorm", (2, 4), {}, lambda: [x(3, 4, 5)]),
    ("GroupNorm", (1, 4), {"affine": False}, lambda: [x(3, 4, 2, 2)]),
    ("InstanceNorm1d", (3,), {}, lambda: [x(2, 3, 5)]),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}, lambda: [x(2, 3, 4, 4)]),
    ("InstanceNorm2d", (3,), {"train": False, "track_running_stats": True}, lambda: [x(3, 4, 4)]),
    ("RMSNorm", ((2, 3),), {}, lambda: [x(4, 2, 3)]),
    ("RMSNorm", (3,), {"eps": 1e-3, "elementwise_affine": False}, lambda: [x(4, 3)]),
    ("LocalResponseNorm", (3,), {"alpha": 0.1, "k": 2.0}, lambda: [x(2, 5, 3, 3)]),
    ("LPPool2d", (2, 2), {}, lambda: [np.abs(x(1, 2, 4, 4)) + 0.1]),
    ("LPPool1d", (3.0, 3), {"stride": 2}, lambda: [np.abs(x(1, 2, 7)) + 0.1]),
    ("ZeroPad2d", ((1, 0, 2, 1),), {}, lambda: [x(1, 2, 3, 3)]),
    ("ConstantPad1d", (2, 3.5), {}, lambda: [x(2, 3)]),
    ("ReflectionPad2d", (1,), {}, lambda: [x(1, 2, 3, 3)]),
    ("ReplicationPad1d", ((2, 1),), {}, lambda: [x(1, 2, 4)]),
    ("CircularPad2d", (1,), {}, lambda: [x(1, 1, 3, 3)]),
    ("CosineSimilarity", (), {}, lambda: [x(3, 4), x(3, 4)]),
    ("PairwiseDistance", (), {"p": 3.0, "keepdim": True}, lambda: [x(3, 4), x(3, 4)]),
    ("PixelShuffle", (2,), {}, lambda: [x(2, 8, 3, 3)]),
    ("PixelUnshuffle", (2,), {}, lambda: [x(2, 2, 4, 6)]),
    ("ChannelShuffle", (2,), {}, lambda: [x(2, 6, 3)]),
    ("Conv1d", (2, 4, 3), {"padding": 2, "dilation": 2}, lambda: [x(2, 2, 7)]),
    ("Conv1d", (4, 4, 2), {"groups": 4, "stride": 2, "padding_mode": "circular", "padding": 1},
     lambda: [x(4, 6)]),
    ("Conv3d", (2, 3, (2, 3, 2)), {"padding": (1, 0, 1)}, lambda: [x(1, 2, 3, 4, 4)]),
    ("ConvTranspose1d", (3, 2, 3), {"stride": 2, "output_padding": 1}, lambda: [x(2, 3, 5)]),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "padding": 1, "groups": 2},
     lambda: [x(1, 4, 3, 3)]),
    ("ConvTranspose2d", (2, 3, (2, 3)), {"dilation": 2, "bias": False}, lambda: [x(2, 2, 3, 4)]),
    ("Upsample", (), {"scale_factor": 2}, lambda: [x(1, 2, 3, 3)]),
    ("Upsample", ((5, 4),), {"mode": "bilinear", "align_corners": False}, lambda: [x(1, 2, 3, 3)]),
    ("UpsamplingBilinear2d", (), {"scale_factor": 2}, lambda: [x(1, 1, 2, 3)]),
    ("Fold", ((4, 5), (2, 2)), {}, lambda: [x(1, 8, 12)]),
    ("Unfold", (2,), {"padding": 1, "stride": 2}, lambda: [x(1, 2, 4, 5)]),
    ("Flatten", (), {}, lambda: [x(2, 3, 4)]),
    ("Unflatten", (1, (2, 3)), {}, lambda: [x(2, 6)]),
    ("Identity", (), {}, lambda: [x(3)]),
    ("PReLU", (3,), {}, lambda: [x(2, 3, 4)]),
    ("Dropout", (0.3,), {"train": False}, lambda: [x(4, 5)]),
    ("RNN", (3, 4), {}, lambda: [x(5, 2, 3)]),
    ("RNN", (3, 4, 2), {"nonlinearity": "relu", "bidirectional": True, "batch_first": True},
     lambda: [x(2, 5, 3)]),
    ("RNN", (3, 4), {"bias": False}, lambda: [x(5, 3), x(1, 4)]),
    ("GRU", (3, 4, 2), {"bidirectional": True}, lambda: [x(6, 2, 3), x(4, 2, 4)]),
    ("GRU", (3, 4), {"batch_first": True}, lambda: [x(2, 5, 3)]),
    ("LSTM", (3, 4, 2), {}, lambda: [x(5, 2, 3)]),
    ("LSTM", (3, 4), {"bidirectional": True, "batch_first": True}, lambda: [x(2, 5, 3)]),
    ("LSTM", (3, 5), {"proj_size": 2}, lambda: [x(4, 3)]),
    ("RNNCell", (3, 4), {}, lambda: [x(2, 3), x(2, 4)]),
    ("GRUCell", (3, 4), {}, lambda: [x(2, 3), x(2, 4)]),
    ("MultiheadAttention", (6, 2), {}, lambda: [x(4, 3, 6), x(5, 3, 6), x(5, 3, 6)]),
    ("MultiheadAttention", (6, 3), {"batch_first": True, "add_bias_kv": True,
                                    "add_zero_attn": True, "kdim": 4, "vdim": 5},
     lambda: [x(2, 4, 6), x(2, 3, 4), x(2, 3, 5)]),
    ("MultiheadAttention", (4, 1), {"bias": False}, lambda: [x(3, 4), x(3, 4), x(3, 4)]),
]


def test_embedding_matches_torch():
    for kwargs in [{}, {"padding_idx": 1}, {"max_norm": 1.0}, {"scale_grad_by_freq": True}]:
        ours, theirs = pair("Embedding", 6, 3, **kwargs)
        idx = np.array([[0, 1, 2], [1, 5, 1]])
        t_out, c_out = theirs(torch.tensor(idx)), ours(cr.tensor(idx))
        np.testing.assert_allclose(arr(c_out), arr(t_out), rtol=1e-9)
        g = x(2, 3, 3)
        t_out.backward(torch.tensor(g))
        c_out.backward(cr.tensor(g))
        np.testing.assert_allclose(arr(ours.weight.grad), arr(theirs.weight.grad), rtol=1e-9)
        np.testing.assert_allclose(arr(ours.weight), arr(theirs.weight), rtol=1e-9)
        assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name, args, kwargs, inputs", LAYERS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(LAYERS)])
def test_layer_matches_torch(name, args, kwargs, inputs):
    kwargs = dict(kwargs)
    train = kwargs.pop("train", True)
    ours, theirs = pair(name, *args, **kwargs)
    check_module(ours, theirs, *inputs(), train=train)
    assert repr(ours) == repr(theirs)


def test_lstm_cell_and_initial_states_match_torch():
    ours, theirs = pair("LSTMCell", 3, 4)
    xs, h, c = x(2, 3), x(2, 4), x(2, 4)
    t_out = theirs(torch.tensor(xs), (torch.tensor(h), torch.tensor(c)))
    c_out = ours(cr.tensor(xs), (cr.tensor(h), cr.tensor(c)))
    for a, b in zip(c_out, t_out):
        np.testing.assert_allclose(arr(a), arr(b), rtol=1e-9)
    ours, theirs = pair("LSTM", 3, 4, 2, bidirectional=True)
    xs, h, c = x(5, 2, 3), x(4, 2, 4), x(4, 2, 4)
    t_out, (t_h, t_c) = theirs(torch.tensor(xs), (torch.tensor(h), torch.tensor(c)))
    c_out, (c_h, c_c) = ours(cr.tensor(xs), (cr.tensor(h), cr.tensor(c)))
    for a, b in [(c_out, t_out), (c_h, t_h), (c_c, t_c)]:
        np.testing.assert_allclose(arr(a), arr(b), rtol=1e-9)


TRANSFORMERS = [
    ("TransformerEncoderLayer", (8, 2), {"dim_feedforward": 16, "dropout": 0.0},
     lambda: [x(5, 3, 8)]),
    ("TransformerEncoderLayer", (8, 4), {"dim_feedforward": 12, "norm_first": True,
                                         "batch_first": True, "activation": "gelu", "train": False},
     lambda: [x(3, 5, 8)]),
    ("TransformerDecoderLayer", (8, 2), {"dim_feedforward": 16, "dropout": 0.0},
     lambda: [x(4, 3, 8), x(6, 3, 8)]),
    ("TransformerDecoderLayer", (8, 2), {"dim_feedforward": 16, "norm_first": True,
                                         "bias": False, "train": False},
     lambda: [x(4, 3, 8), x(6, 3, 8)]),
    ("Transformer", (), {"d_model": 8, "nhead": 2, "num_encoder_layers": 2,
                         "num_decoder_layers": 1, "dim_feedforward": 16, "dropout": 0.0},
     lambda: [x(6, 2, 8), x(4, 2, 8)]),
]


@pytest.mark.parametrize("name, args, kwargs, inputs", TRANSFORMERS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TRANSFORMERS)])
def test_transformer_matches_torch(name, args, kwargs, inputs):
    kwargs = dict(kwargs)
    train = kwargs.pop("train", True)
    ours, theirs = pair(name, *args, **kwargs)
    check_module(ours, theirs, *inputs(), train=train, atol=1e-8)
    assert repr(ours) == repr(theirs)


def test_transformer_masks_match_torch():
    ours, theirs = pair("Transformer", d_model=8, nhead=2, num_encoder_layers=1,
                        num_decoder_layers=1, dim_feedforward=16, dropout=0.0)
    src, tgt = x(5, 2, 8), x(4, 2, 8)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    assert arr(nn.Transformer.generate_square_subsequent_mask(4)).tolist() == \
        torch.nn.Transformer.generate_square_subsequent_mask(4).tolist()
    pad = np.zeros((2, 5), bool)
    pad[0, 3:] = True
    t = theirs(torch.tensor(src), torch.tensor(tgt), tgt_mask=mask,
               src_key_padding_mask=torch.tensor(pad), tgt_is_causal=True)
    c = ours(cr.tensor(src), cr.tensor(tgt), tgt_mask=cr.tensor(arr(mask)),
             src_key_padding_mask=cr.tensor(pad), tgt_is_causal=True)
    np.testing.assert_allclose(arr(c), arr(t), rtol=1e-7, atol=1e-9)


def test_multihead_attention_masks_match_torch():
    ours, theirs = pair("MultiheadAttention", 6, 2)
    q, kv = x(4, 3, 6), x(5, 3, 6)
    mask = RNG.random((4, 5)) < 0.3
    mask[:, 0] = False
    pad = np.zeros((3, 5), bool)
    pad[1, 3:] = True
    for kwargs in [dict(attn_mask=mask), dict(key_padding_mask=pad),
                   dict(attn_mask=x(4, 5), average_attn_weights=False)]:
        t_args = {k: torch.tensor(v) for k, v in kwargs.items() if isinstance(v, np.ndarray)}
        c_args = {k: cr.tensor(v) for k, v in kwargs.items() if isinstance(v, np.ndarray)}
        extra = {k: v for k, v in kwargs.items() if not isinstance(v, np.ndarray)}
        t = theirs(torch.tensor(q), torch.tensor(kv), torch.tensor(kv), **t_args, **extra)
        c = ours(cr.tensor(q), cr.tensor(kv), cr.tensor(kv), **c_args, **extra)
        for a, b in zip(c, t):
            np.testing.assert_allclose(arr(a), arr(b), rtol=1e-8, atol=1e-12)


ACTIVATIONS = [("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("ELU", (0.7,)), ("SELU", ()),
               ("CELU", (1.5,)), ("GELU", ()), ("GELU", ("tanh",)), ("SiLU", ()), ("Mish", ()),
               ("Sigmoid", ()), ("Tanh", ()), ("Softplus", (2.0, 5.0)), ("Softsign", ()),
               ("Softshrink", (0.3,)), ("Hardshrink", (0.3,)), ("Tanhshrink", ()),
               ("Hardtanh", (-0.4, 0.6)), ("Hardsigmoid", ()), ("Hardswish", ()),
               ("LogSigmoid", ()), ("Threshold", (0.1, -2.0)), ("Softmax", (1,)),
               ("LogSoftmax", (0,)), ("Softmin", (1,)), ("GLU", (1,)), ("Softmax2d", ())]


@pytest.mark.parametrize("name, args", ACTIVATIONS, ids=[f"{a[0]}{a[1]}" for a in ACTIVATIONS])
def test_activation_module_matches_torch(name, args):
    ours, theirs = pair(name, *args)
    check_module(ours, theirs, x(2, 4, 3, 3))
    assert repr(ours) == repr(theirs)


LOSSES = [
    ("MSELoss", {}, lambda: [x(4, 3), x(4, 3)]),
    ("L1Loss", {"reduction": "sum"}, lambda: [x(4, 3), x(4, 3)]),
    ("SmoothL1Loss", {"beta": 0.5}, lambda: [x(4, 3), x(4, 3)]),
    ("HuberLoss", {"delta": 0.7, "reduction": "none"}, lambda: [x(4, 3), x(4, 3)]),
    ("CrossEntropyLoss", {"label_smoothing": 0.1}, lambda: [x(5, 4), RNG.integers(0, 4, 5)]),
    ("NLLLoss", {"ignore_index": 1}, lambda: [x(5, 4), RNG.integers(0, 4, 5)]),
    ("BCELoss", {}, lambda: [RNG.random((4, 3)) * 0.9 + 0.05, RNG.random((4, 3))]),
    ("BCEWithLogitsLoss", {}, lambda: [x(4, 3), RNG.random((4, 3))]),
    ("KLDivLoss", {"reduction": "batchmean"}, lambda: [x(4, 3), RNG.random((4, 3))]),
    ("SoftMarginLoss", {"grad_inputs": 1}, lambda: [x(4, 3), np.sign(x(4, 3))]),
    ("PoissonNLLLoss", {}, lambda: [x(4, 3), RNG.random((4, 3)) * 3]),
    ("GaussianNLLLoss", {}, lambda: [x(4, 3), x(4, 3), RNG.random((4, 3)) + 0.1]),
    ("MultiLabelSoftMarginLoss", {}, lambda: [x(4, 3), RNG.integers(0, 2, (4, 3)).astype(float)]),
    ("CosineEmbeddingLoss", {"margin": 0.2}, lambda: [x(4, 3), x(4, 3), np.array([1., -1, 1, -1])]),
    ("MarginRankingLoss", {"margin": 0.1}, lambda: [x(4), x(4), np.sign(x(4))]),
    ("HingeEmbeddingLoss", {}, lambda: [x(4, 3), np.sign(x(4, 3))]),
    ("MultiMarginLoss", {}, lambda: [x(4, 3), RNG.integers(0, 3, 4)]),
    ("TripletMarginLoss", {}, lambda: [x(4, 3), x(4, 3), x(4, 3)]),
]


@pytest.mark.parametrize("name, kwargs, inputs", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_module_matches_torch(name, kwargs, inputs):
    kwargs = dict(kwargs)
    grad_inputs = kwargs.pop("grad_inputs", None)
    ours, theirs = pair(name, **kwargs)
    check_module(ours, theirs, *inputs(), grad_inputs=grad_inputs)
    assert repr(ours) == repr(theirs)


def test_ctc_loss_module_matches_torch():
    # torch's CTC gradient is only meaningful through a log_softmax (its kernel folds
    # the softmax Jacobian in), so both sides get logits and apply it
    logits, targets = x(6, 2, 5), RNG.integers(1, 5, (2, 3))
    lengths, target_lengths = np.array([6, 5]), np.array([3, 2])
    results = []
    for lib, module in ((torch, torch.nn.CTCLoss(zero_infinity=True)),
                        (cr, nn.CTCLoss(zero_infinity=True))):
        z = lib.tensor(logits, requires_grad=True)
        loss = module(z.log_softmax(2), lib.tensor(targets), lib.tensor(lengths),
                      lib.tensor(target_lengths))
        loss.backward()
        results.append((loss.item(), arr(z.grad)))
        assert repr(module) == "CTCLoss()"
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-9)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-7, atol=1e-10)


# -- module API -----------------------------------------------------------------------------
def build_tree(lib):
    mods = lib.nn
    net = mods.Sequential(mods.Linear(3, 4), mods.ReLU(),
                          mods.ModuleDict({"a": mods.Linear(4, 4), "b": mods.Tanh()}),
                          mods.ModuleList([mods.GRU(4, 2, bidirectional=True)]))
    net.register_buffer("counter", lib.zeros(1))
    net.register_buffer("scratch", lib.zeros(1), persistent=False)
    return net


def test_module_tree_api_matches_torch():
    ours, theirs = build_tree(cr), build_tree(torch)
    assert repr(ours) == repr(theirs)
    for method in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        assert [n for n, _ in getattr(ours, method)()] == [n for n, _ in getattr(theirs, method)()]
    assert [n for n, _ in ours.named_parameters(prefix="p", recurse=True)] == \
        [n for n, _ in theirs.named_parameters(prefix="p", recurse=True)]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert list(ours.state_dict(prefix="m.")) == list(theirs.state_dict(prefix="m."))
    order = {lib: [] for lib in ("cr", "torch")}
    ours.apply(lambda m: order["cr"].append(type(m).__name__))
    theirs.apply(lambda m: order["torch"].append(type(m).__name__))
    assert order["cr"] == order["torch"]


def test_load_state_dict_errors_match_torch():
    sd_t = {k: v for k, v in build_tree(torch).state_dict().items() if k != "0.bias"}
    sd_t["extra"] = torch.zeros(1)
    sd_c = {k: to_cr(v) for k, v in sd_t.items()}
    with pytest.raises(RuntimeError) as t_err:
        build_tree(torch).load_state_dict(sd_t)
    with pytest.raises(RuntimeError) as c_err:
        build_tree(cr).load_state_dict(sd_c)
    assert str(c_err.value) == str(t_err.value)
    t_keys = build_tree(torch).load_state_dict(sd_t, strict=False)
    c_keys = build_tree(cr).load_state_dict(sd_c, strict=False)
    assert (c_keys.missing_keys, c_keys.unexpected_keys) == (t_keys.missing_keys, t_keys.unexpected_keys)


def test_full_backward_hooks_match_torch():
    def run(lib, module, inp):
        seen = []
        module.register_full_backward_pre_hook(lambda m, go: seen.append(("pre", arr(go[0]).tolist())))
        module.register_full_backward_hook(
            lambda m, gi, go: seen.append(("hook", [None if g is None else arr(g).tolist() for g in gi])))
        module(inp).sum().backward()
        return seen

    xs = x(4, 3)
    for needs_grad in (True, False):
        ours, theirs = pair("Linear", 3, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = run(cr, ours, cr.tensor(xs, requires_grad=needs_grad))
            want = run(torch, theirs, torch.tensor(xs, requires_grad=needs_grad))
        assert len(caught) == (0 if needs_grad else 2)
        assert [kind for kind, _ in got] == [kind for kind, _ in want] == ["pre", "hook"]
        assert np.allclose(got[0][1], want[0][1])
        if needs_grad:
            assert np.allclose(got[1][1][0], want[1][1][0])
        else:
            assert got[1][1] == want[1][1] == [None]


# -- init -------------------------------------------------------------------------------------
def test_init_gains_and_default_scales_match_torch():
    for name, param in [("linear", None), ("tanh", None), ("relu", None), ("leaky_relu", 0.2),
                        ("selu", None), ("sigmoid", None), ("conv_transpose2d", None)]:
        assert nn.init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)
    for shape in [(30, 20), (8, 4, 3, 3), (6, 5, 7)]:
        t = torch.empty(shape)
        assert nn.init._calculate_fan_in_and_fan_out(cr.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(t)


# -- optimizers ---------------------------------------------------------------------------------
def model_pair():
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).double()
    ours = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2)).double()
    copy_weights(ours, theirs)
    return ours, theirs


DATA = RNG.standard_normal((8, 4)), RNG.standard_normal((8, 2))


def loss_of(lib, model):
    inputs, targets = (lib.tensor(a) for a in DATA)
    return ((model(inputs) - targets) ** 2).mean() + (model[0].weight ** 2).sum() * 0.01


OPTIMIZERS = [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.2, maximize=True)),
    ("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.9), maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)), ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.5)),
    ("RMSprop", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9)),
    ("RMSprop", dict(lr=0.005, alpha=0.9, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1)), ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1,
                                                initial_accumulator_value=0.5)),
    ("Adamax", dict(lr=0.01)), ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01)), ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adadelta", dict()), ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("Rprop", dict(lr=0.01)), ("Rprop", dict(lr=0.02, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05))),
]


@pytest.mark.parametrize("name, options", OPTIMIZERS, ids=[f"{o[0]}-{i}" for i, o in enumerate(OPTIMIZERS)])
def test_optimizer_trajectory_matches_torch(name, options):
    ours, theirs = model_pair()
    opt_c = getattr(cr.optim, name)(ours.parameters(), **options)
    opt_t = getattr(torch.optim, name)(theirs.parameters(), **options, foreach=False)
    for _ in range(20):
        for lib, model, opt in ((cr, ours, opt_c), (torch, theirs, opt_t)):
            opt.zero_grad()
            loss_of(lib, model).backward()
            opt.step()
        for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(arr(a), arr(b), rtol=1e-6, atol=1e-9, err_msg=n)
    assert set(opt_c.state_dict()["state"].get(0, {})) == set(opt_t.state_dict()["state"].get(0, {}))


def test_optimizer_param_groups_and_state_dict_match_torch():
    ours, theirs = model_pair()
    groups = lambda m, lib: [{"params": m[0].parameters(), "lr": 0.05},      # noqa: E731
                             {"params": m[2].parameters()}]
    opt_c = cr.optim.Adam(groups(ours, cr), lr=0.01)
    opt_t = torch.optim.Adam(groups(theirs, torch), lr=0.01, foreach=False)
    for lib, model, opt in ((cr, ours, opt_c), (torch, theirs, opt_t)):
        loss_of(lib, model).backward()
        opt.step()
    sd_c, sd_t = opt_c.state_dict(), opt_t.state_dict()
    assert [g["params"] for g in sd_c["param_groups"]] == [g["params"] for g in sd_t["param_groups"]]
    assert [g["lr"] for g in sd_c["param_groups"]] == [g["lr"] for g in sd_t["param_groups"]]
    assert sorted(sd_c["param_groups"][0]) == sorted(sd_t["param_groups"][0])
    for k in sd_t["state"]:
        np.testing.assert_allclose(arr(sd_c["state"][k]["exp_avg"]), arr(sd_t["state"][k]["exp_avg"]))
        assert float(sd_c["state"][k]["step"]) == float(sd_t["state"][k]["step"])


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_trajectory_matches_torch(line_search):
    ours, theirs = model_pair()
    # two iterations a step: 40 iterations in all (the curvature pairs amplify the
    # last-bit differences of the dot products over hundreds of iterations)
    kwargs = dict(lr=0.5 if line_search is None else 1, max_iter=2, history_size=4,
                  line_search_fn=line_search)
    opt_c = cr.optim.LBFGS(ours.parameters(), **kwargs)
    opt_t = torch.optim.LBFGS(theirs.parameters(), **kwargs)

    def closure_for(lib, model, opt):
        def closure():
            opt.zero_grad()
            loss = loss_of(lib, model)
            loss.backward()
            return loss
        return closure

    for _ in range(20):
        loss_c = opt_c.step(closure_for(cr, ours, opt_c))
        loss_t = opt_t.step(closure_for(torch, theirs, opt_t))
        assert loss_c.item() == pytest.approx(loss_t.item(), rel=1e-6)
        for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(arr(a), arr(b), rtol=1e-6, atol=1e-9, err_msg=n)
    first_c, first_t = next(ours.parameters()), next(theirs.parameters())
    assert opt_c.state[first_c]["func_evals"] == opt_t.state[first_t]["func_evals"]
    assert opt_c.state[first_c]["n_iter"] == opt_t.state[first_t]["n_iter"]


def test_clip_grad_norm_matches_torch():
    ours, theirs = model_pair()
    for lib, model in ((cr, ours), (torch, theirs)):
        (loss_of(lib, model) * 50).backward()
    for norm_type in (2.0, 1.0, math.inf):
        t = torch.nn.utils.clip_grad_norm_(theirs.parameters(), 0.5, norm_type=norm_type)
        c = nn.utils.clip_grad_norm_(ours.parameters(), 0.5, norm_type=norm_type)
        assert float(c) == pytest.approx(float(t), rel=1e-9)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(arr(a.grad), arr(b.grad), rtol=1e-9)


# -- schedulers -------------------------------------------------------------------------------
SCHEDULERS = [
    ("StepLR", dict(step_size=4, gamma=0.5)), ("MultiStepLR", dict(milestones=[3, 7, 7], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)), ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1 / (1 + e))),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.95)),
    ("LinearLR", dict(start_factor=0.2, end_factor=0.9, total_iters=6)),
    ("ConstantLR", dict(factor=0.4, total_iters=4)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=31)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=31, three_phase=True, anneal_strategy="linear")),
    ("PolynomialLR", dict(total_iters=12, power=1.7)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=4)),
]


def _sched_pair(name, kwargs, opt_name="SGD", **opt_kwargs):
    ours, theirs = model_pair()
    opt_c = getattr(cr.optim, opt_name)(ours.parameters(), lr=0.1, **opt_kwargs)
    opt_t = getattr(torch.optim, opt_name)(theirs.parameters(), lr=0.1, **opt_kwargs)
    return ((getattr(cr.optim.lr_scheduler, name)(opt_c, **kwargs), opt_c),
            (getattr(torch.optim.lr_scheduler, name)(opt_t, **kwargs), opt_t))


@pytest.mark.parametrize("name, kwargs", SCHEDULERS, ids=[f"{s[0]}-{i}" for i, s in enumerate(SCHEDULERS)])
def test_scheduler_rates_match_torch(name, kwargs):
    (s_c, opt_c), (s_t, opt_t) = _sched_pair(name, kwargs, momentum=0.9)
    for _ in range(30):
        assert s_c.get_last_lr() == pytest.approx(s_t.get_last_lr(), rel=1e-12)
        assert opt_c.param_groups[0]["momentum"] == pytest.approx(opt_t.param_groups[0]["momentum"])
        opt_c.step()
        opt_t.step()
        s_c.step()
        s_t.step()


def test_scheduler_order_warning_matches_torch():
    (s_c, _), (s_t, _) = _sched_pair("StepLR", dict(step_size=2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s_t.step()
        s_c.step()
    assert len(caught) == 2 and str(caught[0].message) == str(caught[1].message)


def test_sequential_and_chained_schedulers_match_torch():
    rates = {}
    for lib in (cr, torch):
        for kind in ("sequential", "chained"):
            opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
            sch = lib.optim.lr_scheduler
            first = sch.LinearLR(opt, start_factor=0.1, total_iters=4)
            second = sch.CosineAnnealingLR(opt, T_max=8) if kind == "sequential" else \
                sch.StepLR(opt, 3, gamma=0.5)
            s = sch.SequentialLR(opt, [first, second], milestones=[5]) if kind == "sequential" \
                else sch.ChainedScheduler([first, second])
            got = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for _ in range(15):
                    got.append(s.get_last_lr()[0])
                    opt.step()
                    s.step()
            rates[(lib, kind)] = got
    for kind in ("sequential", "chained"):
        assert rates[(cr, kind)] == pytest.approx(rates[(torch, kind)], rel=1e-12)


def test_warm_restarts_with_fractional_epochs_match_torch():
    (s_c, opt_c), (s_t, opt_t) = _sched_pair("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=2))
    for epoch in [0.5, 1.0, 1.7, 2.2, 5.9, 7.0, 13.5]:
        opt_c.step()
        opt_t.step()
        s_c.step(epoch)
        s_t.step(epoch)
        assert s_c.get_last_lr() == pytest.approx(s_t.get_last_lr(), rel=1e-12)


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.9, 0.91, 0.9, 0.89, 0.95, 0.95, 0.95, 0.7, 0.7, 0.7, 0.7, 0.7] * 2
    for kwargs in [dict(patience=1), dict(mode="max", factor=0.5, patience=0, cooldown=2),
                   dict(threshold_mode="abs", threshold=0.05, patience=1, min_lr=0.02)]:
        (s_c, opt_c), (s_t, opt_t) = _sched_pair("ReduceLROnPlateau", kwargs)
        for m in metrics:
            s_c.step(m)
            s_t.step(m)
            assert s_c.get_last_lr() == pytest.approx(s_t.get_last_lr(), rel=1e-12)
            assert s_c.num_bad_epochs == s_t.num_bad_epochs


def test_scheduler_state_dict_keys_match_torch():
    (s_c, _), (s_t, _) = _sched_pair("StepLR", dict(step_size=2))
    assert set(s_c.state_dict()) <= set(s_t.state_dict())
    assert {k: s_c.state_dict()[k] for k in ("step_size", "gamma", "last_epoch", "base_lrs",
                                             "_last_lr", "_step_count")} == \
        {k: s_t.state_dict()[k] for k in ("step_size", "gamma", "last_epoch", "base_lrs",
                                          "_last_lr", "_step_count")}


# -- checkpoint ---------------------------------------------------------------------------------
@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_gradients_match_torch(reentrant):
    ours, theirs = model_pair()
    xs = x(8, 4)
    t_in, c_in = torch.tensor(xs, requires_grad=True), cr.tensor(xs, requires_grad=True)
    torch.utils.checkpoint.checkpoint(theirs, t_in, use_reentrant=reentrant).pow(2).sum().backward()
    cr.utils.checkpoint.checkpoint(ours, c_in, use_reentrant=reentrant).pow(2).sum().backward()
    np.testing.assert_allclose(arr(c_in.grad), arr(t_in.grad), rtol=1e-9)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(arr(a.grad), arr(b.grad), rtol=1e-9)


def _node_tree(fn):
    if fn is None:
        return None
    name = fn.name().replace("torch::autograd::", "")
    return (name, tuple(_node_tree(n) for n, _ in fn.next_functions))


@pytest.mark.parametrize("shape,bias", [((4,), True), ((2, 4), True), ((2, 5, 4), True),
                                        ((2, 4), False)])
def test_linear_graph_matches(shape, bias):
    """What a user printing grad_fn.next_functions of F.linear / nn.Linear sees (without a
    bias and with other than 2 dims, chainrule's matmul records one fused node)."""
    trees = []
    for lib in (torch, cr):
        w = lib.ones(3, 4, requires_grad=True)
        b = lib.ones(3, requires_grad=True) if bias else None
        x = lib.ones(*shape, requires_grad=True)
        trees.append(_node_tree(lib.nn.functional.linear(x, w, b).grad_fn))
    assert trees[0] == trees[1]


def test_addmm_graph_matches():
    trees = [_node_tree(lib.addmm(lib.ones(3, requires_grad=True), lib.ones(2, 4),
                                  lib.ones(3, 4, requires_grad=True).t()).grad_fn)
             for lib in (torch, cr)]
    assert trees[0] == trees[1]
