"""Parity tier for the torch.nn names added for the torch surface (skips without torch):
lazy modules, ConvTranspose3d, 3-D unpooling and LP pooling, fractional max pooling,
grid_sample / affine_grid, AdaptiveLogSoftmaxWithLoss, SyncBatchNorm, CrossMapLRN2d,
NLLLoss2d, DataParallel, multi_head_attention_forward, factory_kwargs. Values and
gradients (input and parameters) with torch's weights copied into chainrule's module.
"""
import itertools
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402
import chainrule.nn.functional as F  # noqa: E402
from chainrule import nn  # noqa: E402

TF = torch.nn.functional
RNG = np.random.default_rng(7)


def arr(t):
    return t.detach().numpy()


def close(a, b, atol=1e-10):
    np.testing.assert_allclose(arr(a), arr(b), rtol=1e-7, atol=atol)


def both(fn_cr, fn_torch, *values):
    """Outputs and input gradients (for a random output weighting) on both sides."""
    c_in = [cr.tensor(v, requires_grad=np.issubdtype(v.dtype, np.floating)) for v in values]
    t_in = [torch.tensor(v, requires_grad=np.issubdtype(v.dtype, np.floating)) for v in values]
    c_out, t_out = fn_cr(*c_in), fn_torch(*t_in)
    close(c_out, t_out)
    weight = RNG.standard_normal(tuple(t_out.shape))
    (c_out * cr.tensor(weight)).sum().backward()
    (t_out * torch.tensor(weight)).sum().backward()
    for c, t in zip(c_in, t_in):
        if t.grad is not None:
            close(c.grad, t.grad)
    return c_out, t_out


def copy_weights(ours, theirs):
    state = {k: cr.tensor(arr(v).copy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)


def check_module(ours, theirs, *values):
    """Same weights, same input: outputs, input and parameter gradients agree."""
    copy_weights(ours, theirs)
    both(ours, theirs, *values)
    params = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        if p.grad is not None:
            close(params[name].grad, p.grad)


# --- grid_sample / affine_grid --------------------------------------------------------------
@pytest.mark.parametrize("mode, padding_mode, align_corners, dims", [
    c for c in itertools.product(("bilinear", "nearest", "bicubic"),
                                 ("zeros", "border", "reflection"), (True, False), (2, 3))
    if not (c[0] == "bicubic" and c[3] == 3)])
def test_grid_sample(mode, padding_mode, align_corners, dims):
    x = RNG.standard_normal((2, 3, 4, 5) if dims == 2 else (2, 2, 3, 4, 5))
    grid = RNG.uniform(-1.7, 1.7, (2, 3, 4, 2) if dims == 2 else (2, 2, 3, 4, 3))
    both(lambda a, g: F.grid_sample(a, g, mode, padding_mode, align_corners),
         lambda a, g: TF.grid_sample(a, g, mode, padding_mode, align_corners), x, grid)


@pytest.mark.parametrize("size, align_corners", [((2, 3, 4, 5), True), ((2, 3, 4, 5), False),
                                                 ((2, 1, 2, 3, 4), False)])
def test_affine_grid_then_sample(size, align_corners):
    theta = RNG.standard_normal((2, 2, 3) if len(size) == 4 else (2, 3, 4)) * 0.5
    x = RNG.standard_normal(size)
    both(lambda t, a: F.grid_sample(a, F.affine_grid(t, size, align_corners), "bilinear",
                                    "zeros", align_corners),
         lambda t, a: TF.grid_sample(a, TF.affine_grid(t, size, align_corners), "bilinear",
                                     "zeros", align_corners), theta, x)


def test_grid_sample_float32():
    x, g = RNG.standard_normal((1, 2, 5, 5)), RNG.uniform(-1, 1, (1, 3, 3, 2))
    ours = F.grid_sample(cr.tensor(x, dtype=cr.float32), cr.tensor(g, dtype=cr.float32),
                         align_corners=False)
    theirs = TF.grid_sample(torch.tensor(x, dtype=torch.float32),
                            torch.tensor(g, dtype=torch.float32), align_corners=False)
    assert ours.dtype == cr.float32
    np.testing.assert_allclose(arr(ours), arr(theirs), rtol=1e-5, atol=1e-6)


# --- convolution, pooling --------------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs, shape", [
    ((2, 3, 2), {"stride": 2}, (2, 2, 3, 3, 2)),
    ((4, 2, (3, 2, 2)), {"stride": (1, 2, 1), "padding": 1, "output_padding": (0, 1, 0),
                         "groups": 2, "dilation": (1, 1, 2)}, (1, 4, 3, 3, 3)),
    ((2, 2, 2), {"bias": False}, (2, 3, 3, 3))])
def test_conv_transpose3d_module(args, kwargs, shape):
    check_module(nn.ConvTranspose3d(*args, **kwargs).double(),
                 torch.nn.ConvTranspose3d(*args, **kwargs).double(), RNG.standard_normal(shape))


@pytest.mark.parametrize("kind, out", [("2d", {"output_size": (3, 4)}),
                                       ("2d", {"output_ratio": (0.5, 0.5)}),
                                       ("3d", {"output_size": (2, 3, 2)})])
def test_fractional_max_pool_with_given_draws(kind, out):
    n = 2 if kind == "2d" else 3
    x = RNG.standard_normal((2, 3, 7, 8) if n == 2 else (2, 2, 5, 6, 4))
    draws = RNG.random((x.shape[0], x.shape[1], n))
    name = f"fractional_max_pool{kind}"
    both(lambda a: getattr(F, name)(a, 2, _random_samples=cr.tensor(draws), **out),
         lambda a: getattr(TF, name)(a, 2, _random_samples=torch.tensor(draws), **out), x)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument "
                                           "'random_samples'"):
        getattr(F, name)(cr.tensor(x), 2, _random_samples=cr.tensor(draws, requires_grad=True),
                         **out)
    ours = getattr(F, name)(cr.tensor(x), 2, return_indices=True, _random_samples=cr.tensor(draws),
                            **out)[1]
    theirs = getattr(TF, name)(torch.tensor(x), 2, return_indices=True,
                               _random_samples=torch.tensor(draws), **out)[1]
    assert ours.tolist() == theirs.tolist()


def test_max_unpool3d_and_lp_pool3d():
    x = RNG.standard_normal((2, 2, 4, 4, 6))
    out, idx = TF.max_pool3d(torch.tensor(x), 2, return_indices=True)
    ours = nn.MaxUnpool3d(2)(cr.tensor(arr(out)), cr.tensor(idx.numpy()), output_size=(5, 5, 7))
    close(ours, torch.nn.MaxUnpool3d(2)(out, idx, output_size=(5, 5, 7)))
    for p in (2, 1.5, float("inf")):
        both(lambda a: nn.LPPool3d(p, (2, 1, 3))(a), lambda a: torch.nn.LPPool3d(p, (2, 1, 3))(a),
             np.abs(x) + 0.1)
    values, indices = F.max_pool3d_with_indices(cr.tensor(x), 2)
    t_values, t_indices = TF.max_pool3d_with_indices(torch.tensor(x), 2)
    assert indices.tolist() == t_indices.tolist()
    assert F.adaptive_max_pool3d_with_indices(cr.tensor(x), 2)[1].tolist() == \
        TF.adaptive_max_pool3d_with_indices(torch.tensor(x), 2)[1].tolist()


def test_native_channel_shuffle():
    x = RNG.standard_normal((2, 6, 3))
    close(F.native_channel_shuffle(cr.tensor(x), 3), TF.native_channel_shuffle(torch.tensor(x), 3))


# --- lazy modules ----------------------------------------------------------------------------
@pytest.mark.parametrize("name, args, shape", [
    ("LazyLinear", (3,), (4, 5)), ("LazyConv1d", (4, 3), (2, 3, 7)),
    ("LazyConv2d", (4, 3), (2, 3, 5, 5)), ("LazyConv3d", (2, 2), (1, 3, 3, 3, 3)),
    ("LazyConvTranspose1d", (2, 3), (2, 3, 4)), ("LazyConvTranspose2d", (2, 2), (1, 3, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 2, 2, 2)), ("LazyBatchNorm1d", (), (5, 3)),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2)), ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 5)), ("LazyInstanceNorm2d", (), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2))])
def test_lazy_module_materializes_as_torch(name, args, shape):
    x = RNG.standard_normal(shape)
    theirs = getattr(torch.nn, name)(*args, dtype=torch.float64)
    ours = getattr(nn, name)(*args, dtype=cr.float64)
    assert repr(ours) == repr(theirs)
    assert [type(v).__name__ for v in ours.state_dict().values()] == \
        [type(v).__name__ for v in theirs.state_dict().values()]
    theirs(torch.tensor(x))
    ours(cr.tensor(x))
    assert repr(ours) == repr(theirs) and type(ours).__name__ == type(theirs).__name__
    assert list(ours.state_dict()) == list(theirs.state_dict())
    check_module(ours, theirs, x)


# --- other layers ----------------------------------------------------------------------------
def test_adaptive_log_softmax_with_loss():
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7, 10], div_value=2.0,
                                                 head_bias=True).double()
    ours = nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7, 10], div_value=2.0, head_bias=True).double()
    copy_weights(ours, theirs)
    x, target = RNG.standard_normal((9, 8)), np.array([0, 4, 11, 8, 2, 7, 6, 10, 1])
    c_x, t_x = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    c_out, t_out = ours(c_x, cr.tensor(target)), theirs(t_x, torch.tensor(target))
    close(c_out.output, t_out.output)
    c_out.loss.backward()
    t_out.loss.backward()
    close(c_x.grad, t_x.grad)
    for (name, p), q in zip(theirs.named_parameters(), ours.parameters()):
        close(q.grad, p.grad)
    close(ours.log_prob(cr.tensor(x)), theirs.log_prob(torch.tensor(x)))
    assert ours.predict(cr.tensor(x)).tolist() == theirs.predict(torch.tensor(x)).tolist()


def test_sync_batch_norm_is_batch_norm_in_one_process():
    net = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3)).double()
    theirs = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    ours = nn.SyncBatchNorm.convert_sync_batchnorm(
        nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3)).double())
    assert repr(ours) == repr(theirs)
    check_module(ours, theirs, RNG.standard_normal((4, 2, 3, 3)))
    close(ours[1].running_mean, theirs[1].running_mean)
    check_module(nn.SyncBatchNorm(3).double(), torch.nn.SyncBatchNorm(3).double(),
                 RNG.standard_normal((4, 3, 2)))


def test_cross_map_lrn2d_values():
    # torch's own gradient of this layer is not the derivative of its forward (its
    # gradcheck fails); values are compared, our gradient is gradchecked in core.
    for size, channels in [(3, 6), (4, 7), (5, 3), (2, 1)]:
        x = RNG.standard_normal((2, channels, 2, 3))
        close(nn.CrossMapLRN2d(size, 0.5, 0.75, 2.0)(cr.tensor(x)),
              torch.nn.CrossMapLRN2d(size, 0.5, 0.75, 2.0)(torch.tensor(x)))


def test_nll_loss_2d_and_data_parallel():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = nn.NLLLoss2d()
    assert "NLLLoss2d` has been deprecated" in str(caught[0].message)
    x, t = RNG.standard_normal((2, 3, 2, 2)), RNG.integers(0, 3, (2, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.NLLLoss2d()
    both(lambda a, b: ours(a, b), lambda a, b: theirs(a, b), x, t)
    t_net = torch.nn.DataParallel(torch.nn.Linear(3, 2).double())
    c_net = nn.DataParallel(nn.Linear(3, 2).double())
    assert repr(c_net) == repr(t_net) and list(c_net.state_dict()) == list(t_net.state_dict())
    assert c_net.device_ids == t_net.device_ids == []
    check_module(c_net, t_net, RNG.standard_normal((4, 3)))


def test_multi_head_attention_forward():
    e, h = 6, 3
    theirs = torch.nn.MultiheadAttention(e, h, add_bias_kv=True).double()
    q, k = RNG.standard_normal((4, 2, e)), RNG.standard_normal((5, 2, e))
    mask = RNG.standard_normal((4, 5))

    def call(fn, lib, m, a, b):
        return fn(a, b, b, e, h, m.in_proj_weight, m.in_proj_bias, m.bias_k, m.bias_v, False,
                  0.0, m.out_proj.weight, m.out_proj.bias, attn_mask=lib.tensor(mask),
                  average_attn_weights=False)
    ours = nn.MultiheadAttention(e, h, add_bias_kv=True).double()
    copy_weights(ours, theirs)
    both(lambda a, b: call(F.multi_head_attention_forward, cr, ours, a, b)[0],
         lambda a, b: call(TF.multi_head_attention_forward, torch, theirs, a, b)[0], q, k)
    close(call(F.multi_head_attention_forward, cr, ours, cr.tensor(q), cr.tensor(k))[1],
          call(TF.multi_head_attention_forward, torch, theirs, torch.tensor(q),
               torch.tensor(k))[1])


def test_factory_kwargs():
    for kwargs in ({"dtype": "d"}, {"device": "cpu", "factory_kwargs": {"dtype": "d"}}, None):
        assert nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)
    for bad in ({"dtype": 1, "factory_kwargs": {"dtype": 2}}, {"layout": 1}):
        with pytest.raises(TypeError) as ours:
            nn.factory_kwargs(bad)
        with pytest.raises(TypeError) as theirs:
            torch.nn.factory_kwargs(bad)
        assert str(ours.value) == str(theirs.value)


def test_top_level_forms():
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES
    x, g = RNG.standard_normal((1, 2, 4, 4)), RNG.uniform(-1, 1, (1, 3, 2, 2))
    theta = RNG.standard_normal((1, 2, 3))
    for mode, padding in itertools.product(range(3), range(3)):
        close(cr.grid_sampler(cr.tensor(x), cr.tensor(g), mode, padding, True),
              torch.grid_sampler(torch.tensor(x), torch.tensor(g), mode, padding, True))
    close(cr.affine_grid_generator(cr.tensor(theta), [1, 2, 3, 4], False),
          torch.affine_grid_generator(torch.tensor(theta), [1, 2, 3, 4], False))
    w = RNG.standard_normal((2, 3, 2, 2, 2))
    close(cr.conv_transpose3d(cr.tensor(x[:, :, None]), cr.tensor(w)),
          torch.conv_transpose3d(torch.tensor(x[:, :, None]), torch.tensor(w)))
    with pytest.raises(RuntimeError) as ours:
        cr.conv_transpose3d(cr.tensor(x[None]), cr.tensor(w))
    with pytest.raises(RuntimeError) as theirs:
        torch.conv_transpose3d(torch.tensor(x[None]), torch.tensor(w))
    assert str(ours.value) == str(theirs.value)
    close(cr.native_channel_shuffle(cr.tensor(x), 2),
          torch.native_channel_shuffle(torch.tensor(x), 2))
