"""Parity tier for ``nn.utils.fusion`` against PyTorch (skips without torch): the same
layers and BatchNorm statistics on both sides; fused parameters (values, dtypes,
requires_grad), fused module outputs and errors must agree."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402

RNG = np.random.default_rng(0)


def _pair(make_torch, make_cr):
    """A torch module and the chainrule one with the same parameters and buffers."""
    t, c = make_torch(torch.nn), make_cr(cr.nn)
    state = {k: v.detach().numpy().copy() for k, v in t.state_dict().items()}
    c.load_state_dict({k: cr.tensor(v) for k, v in state.items()})
    return t, c


def _bn_with_statistics(nn_lib_bn, lib):
    with lib.no_grad():
        n = nn_lib_bn.running_mean.shape[0]
        nn_lib_bn.running_mean.copy_(lib.tensor(np.linspace(-1, 1, n)))
        nn_lib_bn.running_var.copy_(lib.tensor(np.linspace(0.5, 2, n)))
        if nn_lib_bn.weight is not None:
            nn_lib_bn.weight.copy_(lib.tensor(np.linspace(0.3, 1.7, n)))
            nn_lib_bn.bias.copy_(lib.tensor(np.linspace(-0.2, 0.4, n)))
    return nn_lib_bn.eval()


def _same_parameter(got, expected):
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(),
                               rtol=1e-6, atol=1e-7)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert type(got).__name__ == type(expected).__name__ == "Parameter"
    assert got.requires_grad == expected.requires_grad


CONVS = [
    ("Conv1d", (2, 3, 3), "BatchNorm1d", 3, False, (2, 2, 7)),
    ("Conv2d", (2, 4, 2), "BatchNorm2d", 4, False, (1, 2, 5, 5)),
    ("Conv3d", (1, 2, 2), "BatchNorm3d", 2, False, (1, 1, 4, 4, 4)),
    ("ConvTranspose2d", (3, 2, 2), "BatchNorm2d", 2, True, (1, 3, 4, 4)),
]


@pytest.mark.parametrize("conv_name,args,bn_name,features,transpose,shape", CONVS)
@pytest.mark.parametrize("bias,affine", [(True, True), (False, True), (True, False)])
def test_fuse_conv_bn_eval(conv_name, args, bn_name, features, transpose, shape, bias, affine):
    def make(nn):
        return getattr(nn, conv_name)(*args, bias=bias).eval()
    conv_t, conv_c = _pair(make, make)
    bn_t = _bn_with_statistics(getattr(torch.nn, bn_name)(features, affine=affine), torch)
    bn_c = _bn_with_statistics(getattr(cr.nn, bn_name)(features, affine=affine), cr)
    fused_t = torch.nn.utils.fuse_conv_bn_eval(conv_t, bn_t, transpose=transpose)
    fused_c = cr.nn.utils.fuse_conv_bn_eval(conv_c, bn_c, transpose=transpose)
    _same_parameter(fused_c.weight, fused_t.weight)
    _same_parameter(fused_c.bias, fused_t.bias)
    x = RNG.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(fused_c(cr.tensor(x)).detach().numpy(),
                               fused_t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    assert conv_c.bias is None if not bias else conv_c.bias is not fused_c.bias


@pytest.mark.parametrize("features", [3, 1])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_linear_bn_eval(features, bias):
    def make(nn):
        return nn.Linear(4, 3, bias=bias).eval()
    lin_t, lin_c = _pair(make, make)
    bn_t = _bn_with_statistics(torch.nn.BatchNorm1d(features), torch)
    bn_c = _bn_with_statistics(cr.nn.BatchNorm1d(features), cr)
    fused_t = torch.nn.utils.fusion.fuse_linear_bn_eval(lin_t, bn_t)
    fused_c = cr.nn.utils.fusion.fuse_linear_bn_eval(lin_c, bn_c)
    _same_parameter(fused_c.weight, fused_t.weight)
    _same_parameter(fused_c.bias, fused_t.bias)


def _args(lib, dtype):
    def t(values, requires_grad=False):
        return lib.tensor(np.asarray(values, dtype=dtype), requires_grad=requires_grad)
    return t


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_weights_dtypes_and_flags(dtype, transpose):
    def run(lib):
        t = _args(lib, dtype)
        w = t(np.arange(12.).reshape(2, 2, 3) / 7, requires_grad=True)
        return lib.nn.utils.fuse_conv_bn_weights(
            w, None, t([0.1, -0.2]), t([1.0, 2.0]), 1e-3, None, t([0.5, 0.0]),
            transpose=transpose)
    for got, expected in zip(run(cr), run(torch)):
        _same_parameter(got, expected)


def test_fuse_linear_bn_weights_bias_dtype_kept():
    def run(lib):
        w = lib.tensor(np.ones((2, 3), np.float32), requires_grad=True)
        b = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
        stats = [lib.tensor(np.array(v, np.float32)) for v in ([0.0, 1.0], [4.0, 1.0])]
        return lib.nn.utils.fuse_linear_bn_weights(w, b, *stats, 0.0, stats[1], stats[0])
    for got, expected in zip(run(cr), run(torch)):
        _same_parameter(got, expected)


@pytest.mark.parametrize("case", ["train", "features"])
def test_errors_match(case):
    def message(lib):
        linear, bn = lib.nn.Linear(2, 3).eval(), lib.nn.BatchNorm1d(2).eval()
        if case == "train":
            bn.train()
        with pytest.raises(AssertionError) as info:
            lib.nn.utils.fuse_linear_bn_eval(linear, bn)
        return str(info.value)
    assert message(cr) == message(torch)
