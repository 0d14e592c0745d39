"""Parity tier: batch norm, instance norm, group norm, the poolings, the convolutions,
upsampling, padding (reflect, replicate, circular), unfold/fold, max unpooling, pdist,
pairwise_distance, embedding_bag, the margin losses, affine_grid, grid_sample and
scaled_dot_product_attention (where the reference fuses it) record the
reference's nodes (grad_fn names and their next_functions) and give its values,
gradients, indices and running statistics, in float64 and float32, with ties (skips
without torch)."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402

RNG = np.random.default_rng(0)

POOLS = [
    ("max_pool2d", (2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                      return_indices=True)),
    ("max_pool2d", (3, 7, 6), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1),
                                   dilation=(2, 1), return_indices=True)),
    ("max_pool1d", (2, 3, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                   return_indices=True)),
    ("max_pool3d", (1, 2, 5, 4, 5), dict(kernel_size=2, stride=1, padding=1,
                                         return_indices=True)),
    ("avg_pool2d", (2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                      count_include_pad=False)),
    ("avg_pool2d", (3, 7, 6), dict(kernel_size=(2, 3), padding=(1, 1), divisor_override=5)),
    ("avg_pool1d", (2, 3, 9), dict(kernel_size=3, stride=2, padding=1)),
    ("avg_pool3d", (2, 5, 4, 5), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("adaptive_avg_pool2d", (3, 3, 5), dict(output_size=(7, None))),
    ("adaptive_avg_pool2d", (2, 3, 4, 5), dict(output_size=1)),
    ("adaptive_avg_pool1d", (2, 3, 7), dict(output_size=3)),
    ("adaptive_avg_pool3d", (1, 2, 5, 4, 5), dict(output_size=(2, 3, 2))),
    ("adaptive_max_pool2d", (2, 3, 3, 2), dict(output_size=(5, 4), return_indices=True)),
    ("adaptive_max_pool1d", (2, 3, 7), dict(output_size=3, return_indices=True)),
    ("adaptive_max_pool3d", (1, 2, 5, 4, 5), dict(output_size=2, return_indices=True)),
    ("interpolate", (2, 3, 7, 6), dict(size=(3, 4), mode="area")),
]


def _nodes(y):
    return _node_names(y.grad_fn)


def _node_names(fn):
    return [type(fn).__name__] + [type(f).__name__ if f else None for f, _ in fn.next_functions]


def _pool(lib, name, x, kwargs, dtype):
    X = lib.tensor(x, dtype=getattr(lib, dtype)).requires_grad_()
    out = getattr(lib.nn.functional, name)(X, **kwargs)
    y, idx = out if isinstance(out, tuple) else (out, None)
    weights = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=y.dtype)
    (y * weights).sum().backward()
    extra = [idx.numpy()] if idx is not None else []
    return _nodes(y), [y.detach().numpy(), X.grad.numpy()] + extra


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("name,shape,kwargs", POOLS, ids=[f"{p[0]}-{i}" for i, p in
                                                          enumerate(POOLS)])
def test_pooling_nodes_values_gradients_indices(name, shape, kwargs, ties, dtype):
    x = RNG.standard_normal(shape)
    x = np.round(x) if ties else x               # equal values: the reference's pick
    nodes, got = _pool(cr, name, x, kwargs, dtype)
    want_nodes, want = _pool(torch, name, x, kwargs, dtype)
    assert nodes == want_nodes
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _batch_norm(lib, x, w, rm, rv, training, dtype):
    t = (lambda a: None if a is None else lib.tensor(a, dtype=getattr(lib, dtype)))
    X, W, B = t(x).requires_grad_(), w if w is None else t(w).requires_grad_(), \
        w if w is None else t(-w).requires_grad_()
    RM, RV = t(rm), t(rv)
    y = lib.nn.functional.batch_norm(X, RM, RV, W, B, training=training, momentum=0.3)
    (y * t(np.cos(np.arange(y.numel())).reshape(y.shape))).sum().backward()
    grads = [p.grad.numpy() for p in (X, W, B) if p is not None]
    stats = [r.numpy() for r in (RM, RV) if r is not None]
    return _nodes(y), [y.detach().numpy()] + grads + stats


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 1, 2, 2, 2)])
def test_batch_norm_node_values_gradients_running_stats(shape, affine, training, dtype):
    c = shape[1]
    x, w = RNG.standard_normal(shape), RNG.standard_normal(c) if affine else None
    rm, rv = RNG.standard_normal(c), RNG.random(c) + 0.5
    nodes, got = _batch_norm(cr, x, w, rm, rv, training, dtype)
    want_nodes, want = _batch_norm(torch, x, w, rm, rv, training, dtype)
    assert nodes == want_nodes
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-5, atol=1e-5)


def _group_norm(lib, x, w, groups, dtype):
    t = (lambda a: lib.tensor(a, dtype=getattr(lib, dtype)).requires_grad_())
    X, W, B = t(x), t(w), t(-w)
    y = lib.nn.functional.group_norm(X, groups, W, B)
    (y * lib.tensor(np.cos(np.arange(y.numel())).reshape(y.shape), dtype=y.dtype)).sum().backward()
    return _nodes(y), [y.detach().numpy(), X.grad.numpy(), W.grad.numpy(), B.grad.numpy()]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,groups", [((2, 4, 3), 2), ((2, 6, 2, 2), 3), ((3, 4), 1)])
def test_group_norm_node_values_gradients(shape, groups, dtype):
    x, w = RNG.standard_normal(shape), RNG.standard_normal(shape[1])
    nodes, got = _group_norm(cr, x, w, groups, dtype)
    want_nodes, want = _group_norm(torch, x, w, groups, dtype)
    assert nodes == want_nodes
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_graph_is_a_view_of_a_batch_norm(use_input_stats):
    x, w = RNG.standard_normal((2, 3, 4)), RNG.standard_normal(3)
    rm, rv = RNG.standard_normal(3), RNG.random(3) + 0.5
    outs = []
    for lib in (cr, torch):
        rm_, rv_ = lib.tensor(rm), lib.tensor(rv)
        y = lib.nn.functional.instance_norm(lib.tensor(x), rm_, rv_, lib.tensor(w).requires_grad_(),
                                            None, use_input_stats=use_input_stats)
        outs.append((_nodes(y), _node_names(y.grad_fn.next_functions[0][0]),
                     [y.detach().numpy(), rm_.numpy(), rv_.numpy()]))
    assert outs[0][:2] == outs[1][:2]
    for g, v in zip(outs[0][2], outs[1][2]):
        np.testing.assert_allclose(g, v, rtol=1e-10, atol=1e-12)


def test_batch_norm_module_cumulative_average_and_eval():
    x = RNG.standard_normal((5, 3, 4)).astype(np.float32)
    results = []
    for lib in (cr, torch):
        bn = lib.nn.BatchNorm1d(3, momentum=None)
        for k in range(3):
            bn(lib.tensor(x * (k + 1)))
        bn.eval()
        results.append([bn(lib.tensor(x)).detach().numpy(), bn.running_mean.numpy(),
                        bn.running_var.numpy(), bn.num_batches_tracked.numpy()])
    for g, v in zip(*results):
        np.testing.assert_allclose(g, v, rtol=1e-5, atol=1e-6)


def test_where_lists_only_its_differentiable_inputs():
    x = RNG.standard_normal(4)
    names = [_nodes(lib.where(lib.tensor(x) > 0, lib.tensor(x, requires_grad=True), 0.))
             for lib in (cr, torch)]
    assert names[0] == names[1] == ["WhereBackward0", "AccumulateGrad", None]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,kwargs", [("smooth_l1_loss", {"beta": 0.5}),
                                         ("huber_loss", {"delta": 0.7})])
def test_smooth_l1_and_huber_are_one_node_each(name, kwargs, reduction):
    x, t = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    x[0, 0] = t[0]                                  # a zero difference
    results = []
    for lib in (cr, torch):
        X, T = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
        with pytest.warns(UserWarning):             # a broadcast target
            y = getattr(lib.nn.functional, name)(X, T, reduction=reduction, **kwargs)
        (y * lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum().backward()
        results.append((_nodes(y), [y.detach().numpy(), X.grad.numpy(), T.grad.numpy()]))
    assert results[0][0] == results[1][0]
    for g, v in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(g, v, rtol=1e-10, atol=1e-12)


# --- convolution: every dimensionality and the transposed flag, one ConvolutionBackward0 ---
CONVS = [
    ("conv1d", (2, 4, 9), (6, 2, 3), 6, dict(stride=2, padding=1, dilation=2, groups=2)),
    ("conv1d", (4, 9), (6, 4, 2), 6, dict(padding="same")),
    ("conv2d", (2, 4, 7, 6), (6, 2, 3, 2), 6, dict(stride=(2, 1), padding="valid", groups=2)),
    ("conv3d", (2, 4, 5, 6, 4), (6, 2, 3, 2, 2), 6,
     dict(stride=(2, 1, 1), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)),
    ("conv3d", (2, 4, 4, 3), (3, 2, 3, 2, 1), None, dict(padding="same", groups=1)),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), 6, dict(stride=2, padding=1, output_padding=1,
                                                        groups=2)),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), None, dict(dilation=2, output_padding=1)),
    ("conv_transpose2d", (2, 4, 5, 3), (4, 3, 3, 2), 6,
     dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, dilation=(1, 2))),
    ("conv_transpose3d", (2, 4, 3, 3, 2), (4, 3, 3, 2, 2), 6,
     dict(stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 1), groups=2)),
    ("conv_transpose3d", (4, 3, 3, 2), (4, 2, 2, 2, 2), 2, {}),
]


def _conv_case(lib, name, shapes, kwargs, dtype):
    """Nodes, output, first gradients, and the gradients of a double-backward scalar."""
    xs, ws, bias = shapes
    arrays = [np.cos(np.arange(np.prod(s)) * 0.7).reshape(s) for s in (xs, ws)]
    leaves = [lib.tensor(a, dtype=getattr(lib, dtype)).requires_grad_() for a in arrays]
    if bias:
        leaves.append(lib.tensor(np.linspace(-1, 1, bias), dtype=getattr(lib, dtype))
                      .requires_grad_())
    y = getattr(lib.nn.functional, name)(leaves[0], leaves[1], *leaves[2:], **kwargs)
    weights = lib.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=y.dtype)
    grads = lib.autograd.grad((y * weights).sum(), leaves, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in grads), leaves[:2])
    node = y.grad_fn if len(xs) == len(ws) else y.grad_fn.next_functions[0][0]
    values = [y.detach().numpy()] + [g.detach().numpy() for g in grads + second]
    return [_node_names(y.grad_fn), _node_names(node)], values


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,xs,ws,bias,kwargs", CONVS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONVS)])
def test_convolutions_record_one_node_values_gradients_double_backward(name, xs, ws, bias,
                                                                       kwargs, dtype):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # padding='same' with an even kernel
        ours = _conv_case(cr, name, (xs, ws, bias), kwargs, dtype)
        theirs = _conv_case(torch, name, (xs, ws, bias), kwargs, dtype)
    assert ours[0] == theirs[0]
    tol = 1e-12 if dtype == "float64" else 2e-4
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# --- upsampling: one Upsample*Backward0 node per mode, the reference's index arithmetic ---
UPSAMPLES = [
    ("nearest", (2, 3, 5), dict(scale_factor=1.7)),
    ("nearest", (2, 3, 7, 5), dict(scale_factor=1.1)),                  # 2-D same-size copy
    ("nearest", (1, 2, 3, 4, 5), dict(size=(5, 4, 9))),
    ("nearest-exact", (2, 3, 10), dict(size=3)),
    ("nearest-exact", (1, 2, 7, 6), dict(scale_factor=(0.7, 1.5))),
    ("nearest-exact", (1, 2, 3, 4, 5), dict(scale_factor=2.3)),
    ("linear", (2, 3, 13), dict(scale_factor=2.5)),
    ("linear", (2, 3, 5), dict(size=9, align_corners=True)),
    ("bilinear", (2, 2, 5, 4), dict(size=(7, 3))),
    ("bilinear", (2, 2, 5, 4), dict(scale_factor=0.7, recompute_scale_factor=True,
                                    align_corners=True)),
    ("bicubic", (1, 2, 5, 4), dict(scale_factor=(1.6, 2.2))),
    ("bicubic", (1, 2, 7, 7), dict(scale_factor=1.1)),             # the backward's copy
    ("bicubic", (1, 2, 4, 5), dict(size=(3, 8), align_corners=True)),
    ("trilinear", (1, 2, 3, 4, 2), dict(scale_factor=(2, 1.5, 3))),
    ("trilinear", (1, 2, 3, 4, 2), dict(size=(5, 2, 3), align_corners=True)),
]


def _upsample_case(lib, mode, shape, kwargs, dtype):
    x = lib.tensor(np.cos(np.arange(np.prod(shape)) * 0.9).reshape(shape),
                   dtype=getattr(lib, dtype)).requires_grad_()
    y = lib.nn.functional.interpolate(x, mode=mode, **kwargs)
    weights = lib.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=y.dtype)
    grad, = lib.autograd.grad((y * weights).sum(), x)
    return _nodes(y), [y.detach().numpy(), grad.numpy()]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode,shape,kwargs", UPSAMPLES,
                         ids=[f"{u[0]}-{i}" for i, u in enumerate(UPSAMPLES)])
def test_upsampling_nodes_values_gradients(mode, shape, kwargs, dtype):
    ours = _upsample_case(cr, mode, shape, kwargs, dtype)
    theirs = _upsample_case(torch, mode, shape, kwargs, dtype)
    assert ours[0] == theirs[0]
    tol = 1e-12 if dtype == "float64" else 1e-5
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("mode,shape,kwargs", [u for u in UPSAMPLES if u[1] != (1, 2, 7, 7)])
def test_upsampling_double_backward_matches(mode, shape, kwargs):
    """The gradient of a function of the first gradient (the adjoint's own VJP)."""
    def run(lib):
        x = lib.tensor(np.cos(np.arange(np.prod(shape))).reshape(shape)).requires_grad_()
        y = lib.nn.functional.interpolate(x, mode=mode, **kwargs)
        g = lib.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape))).requires_grad_()
        gx, = lib.autograd.grad(y, x, g, create_graph=True)
        return lib.autograd.grad((gx * gx.detach()).sum(), g)[0].numpy()
    np.testing.assert_allclose(run(cr), run(torch), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda nn: nn.Upsample(scale_factor=2, mode="bilinear"),
    lambda nn: nn.Upsample(size=(5, 3), mode="nearest"),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=2),
    lambda nn: nn.UpsamplingBilinear2d(size=(7, 6)),
])
def test_upsampling_modules_record_the_reference_nodes(make):
    x = np.cos(np.arange(2 * 3 * 4 * 5)).reshape(2, 3, 4, 5)
    out = [make(lib.nn)(lib.tensor(x).requires_grad_()) for lib in (cr, torch)]
    assert _nodes(out[0]) == _nodes(out[1])
    np.testing.assert_allclose(out[0].detach().numpy(), out[1].detach().numpy(), rtol=1e-12,
                               atol=1e-12)


# --- reflection / replication padding: one node per mode and number of padded dims -------
PADS = [((2, 3, 5), (1, 2)), ((3, 5), (2, 0)), ((1, 2, 5, 4), (1, 2, 2, 1)),
        ((2, 5, 4), (0, 3, 1, 1)), ((1, 2, 3, 4, 5), (1, 2, 2, 1, 1, 1)),
        ((2, 3, 4, 5), (2, 2, 1, 0, 2, 1)), ((2, 3, 5), (-1, 2)), ((1, 2, 5, 4), (1, -1, 2, 0))]


def _pad_case(lib, mode, shape, pad, dtype):
    return _linear_map_case(lib, "pad", shape, dict(pad=pad, mode=mode), dtype)


def _linear_map_case(lib, name, shape, kwargs, dtype):
    """Nodes, values, gradient and its gradient with respect to the output gradient."""
    x = lib.tensor(np.cos(np.arange(np.prod(shape))).reshape(shape),
                   dtype=getattr(lib, dtype)).requires_grad_()
    y = getattr(lib.nn.functional, name)(x, **kwargs)
    g = lib.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape)),
                   dtype=y.dtype).requires_grad_()
    gx, = lib.autograd.grad(y, x, g, create_graph=True)
    gg, = lib.autograd.grad((gx * gx).sum(), g)
    return _nodes(y), [y.detach().numpy(), gx.detach().numpy(), gg.numpy()]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pad", PADS)
def test_reflection_replication_padding_nodes_values_double_backward(shape, pad, mode, dtype):
    _assert_same_nodes_and_values(*(_pad_case(lib, mode, shape, pad, dtype)
                                    for lib in (cr, torch)), 1e-12 if dtype == "float64" else 1e-5)


def _assert_same_nodes_and_values(ours, theirs, tol):
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# --- glu, celu and the shuffles: one node each ----------------------------------------------
SINGLE_NODES = [("glu", (2, 4, 3), dict(dim=1)), ("glu", (3, 6), {}),
                ("celu", (3, 4), dict(alpha=0.7)), ("rrelu", (3, 4), dict(training=False)), ("pixel_shuffle", (2, 8, 2, 3), dict(upscale_factor=2)),
                ("pixel_unshuffle", (3, 4, 6), dict(downscale_factor=2)),
                ("channel_shuffle", (2, 6, 2, 2), dict(groups=3))]


@pytest.mark.parametrize("x,w", [((2, 3, 4), (3,)), ((2, 3), (1,)), ((5,), (1,)), ((), (1,))])
def test_prelu_is_the_kernel_node_over_a_viewed_weight(x, w):
    def run(lib):
        a = lib.tensor(np.cos(np.arange(np.prod(x)) * 2.1).reshape(x)).requires_grad_()
        b = lib.tensor(np.linspace(0.1, 0.4, w[0])).requires_grad_()
        y = lib.nn.functional.prelu(a, b)
        grads = lib.autograd.grad((y * y).sum(), (a, b), create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), (a, b))
        return _nodes(y), [y.detach().numpy()] + [g.detach().numpy() for g in grads + second]
    ours, theirs = run(cr), run(torch)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,shape,kwargs", SINGLE_NODES,
                         ids=[f"{s[0]}-{i}" for i, s in enumerate(SINGLE_NODES)])
def test_single_node_functions(name, shape, kwargs, dtype):
    def run(lib):
        x = lib.tensor(np.cos(np.arange(np.prod(shape))).reshape(shape),
                       dtype=getattr(lib, dtype)).requires_grad_()
        y = getattr(lib.nn.functional, name)(x, **kwargs)
        g = lib.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=y.dtype)
        gx, = lib.autograd.grad(y, x, g, create_graph=True)
        # (rrelu: the reference's first gradient keeps a zero second derivative, ours none)
        second = [lib.autograd.grad((gx * gx).sum(), x)[0].numpy()] \
            if gx.requires_grad and name != "rrelu" else []
        return _nodes(y), [y.detach().numpy(), gx.detach().numpy()] + second
    ours, theirs = run(cr), run(torch)
    assert ours[0] == theirs[0]
    tol = 1e-12 if dtype == "float64" else 1e-6
    assert len(ours[1]) == len(theirs[1])
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# --- unfold / fold: Im2ColBackward0 / Col2ImBackward0 ----------------------------------------
FOLDS = [("unfold", (2, 3, 5, 6), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1,
                                       stride=(1, 2))),
         ("unfold", (3, 4, 4), dict(kernel_size=3, padding=(0, 2), stride=2)),
         ("unfold", (1, 2, 7, 5), dict(kernel_size=(3, 1), dilation=2, stride=(2, 3))),
         ("fold", (2, 12, 20), dict(output_size=(5, 6), kernel_size=2)),
         ("fold", (18, 9), dict(output_size=(6, 7), kernel_size=(2, 3), dilation=(2, 1),
                                padding=1, stride=(2, 3))),
         ("fold", (1, 9, 25), dict(output_size=5, kernel_size=3, padding=1))]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,shape,kwargs", FOLDS, ids=[f[0] for f in FOLDS])
def test_unfold_fold_nodes_values_double_backward(name, shape, kwargs, dtype):
    _assert_same_nodes_and_values(*(_linear_map_case(lib, name, shape, kwargs, dtype)
                                    for lib in (cr, torch)), 1e-12 if dtype == "float64" else 1e-6)


# --- circular padding: the reference's CopySlices / SliceBackward0 graph, node for node -----
def _tree(fn):
    """Every node's name with its depth, depth first."""
    out, stack = [], [(fn, 0)]
    while stack:
        node, depth = stack.pop()
        out.append((depth, type(node).__name__))
        stack.extend((f, depth + 1) for f, _ in reversed(node.next_functions) if f is not None)
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,pad", PADS + [((3, 4), (4, 0)), ((2, 3, 4), (1, -2, 0, 3))])
def test_circular_padding_graph_values_double_backward(shape, pad, dtype):
    runs = [_pad_case(lib, "circular", shape, pad, dtype) for lib in (cr, torch)]
    trees = [_tree(lib.nn.functional.pad(lib.ones(shape, requires_grad=True), pad,
                                          mode="circular").grad_fn) for lib in (cr, torch)]
    assert trees[0] == trees[1]
    _assert_same_nodes_and_values(*runs, 1e-12 if dtype == "float64" else 1e-6)


# --- max unpooling: MaxUnpool2D/3DBackward0 (1-D: the 2-D node between squeeze/unsqueeze) ---
UNPOOLS = [(1, (2, 3, 8), dict(kernel_size=2)),
           (1, (3, 9), dict(kernel_size=3, stride=2, padding=1, output_size=(10,))),
           (2, (2, 3, 6, 4), dict(kernel_size=2)),
           (2, (3, 7, 6), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0))),
           (3, (1, 2, 4, 6, 4), dict(kernel_size=2, output_size=(1, 2, 5, 7, 5))),
           (3, (2, 5, 4, 4), dict(kernel_size=(3, 2, 2), stride=2, padding=(1, 0, 0)))]


def _unpool_case(lib, n, shape, kwargs, dtype):
    F = lib.nn.functional
    x = lib.tensor(np.cos(np.arange(np.prod(shape)) * 1.3).reshape(shape),
                   dtype=getattr(lib, dtype)).requires_grad_()
    pool_args = {k: v for k, v in kwargs.items() if k != "output_size"}
    pooled, idx = getattr(F, f"max_pool{n}d")(x, return_indices=True, **pool_args)
    y = getattr(F, f"max_unpool{n}d")(pooled * 2, idx, **kwargs)
    g = lib.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=y.dtype)
    gx, = lib.autograd.grad(y, x, g * y, create_graph=True)
    gg, = lib.autograd.grad((gx * gx).sum(), x)
    return _nodes(y), [y.detach().numpy(), gx.detach().numpy(), gg.numpy()]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n,shape,kwargs", UNPOOLS, ids=[f"{u[0]}d" for u in UNPOOLS])
def test_max_unpool_nodes_values_double_backward(n, shape, kwargs, dtype):
    _assert_same_nodes_and_values(*(_unpool_case(lib, n, shape, kwargs, dtype)
                                    for lib in (cr, torch)), 1e-12 if dtype == "float64" else 1e-5)


# --- pdist: PdistBackward0, the reference's closed-form gradients (ties, zero distances) ----
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
def test_pdist_node_values_gradients(p, dtype):
    def run(lib):
        rows = np.concatenate([np.cos(np.arange(15) * 0.7).reshape(5, 3), np.zeros((2, 3)),
                               [[1.0, -1.0, 0.5]]])
        x = lib.tensor(rows, dtype=getattr(lib, dtype)).requires_grad_()
        y = lib.nn.functional.pdist(x, p)
        g, = lib.autograd.grad(y, x, lib.tensor(np.sin(np.arange(y.numel())), dtype=y.dtype))
        return _nodes(y), [y.detach().numpy(), g.numpy()]
    _assert_same_nodes_and_values(run(cr), run(torch), 1e-12 if dtype == "float64" else 1e-5)


# --- pairwise_distance: at::norm's NormBackward1 over AddBackward1 (eps) and SubBackward0 ----
PAIRWISE = [((3, 4), (3, 4), {}), ((2, 3, 4), (4,), dict(p=1.5, eps=0.1, keepdim=True)),
            ((4,), (4,), dict(p=float("inf"))), ((), (), dict(p=1)),
            ((3, 4), (1, 4), dict(p=3, eps=0.0)), ((3, 4), (3, 4), dict(p=-1.0))]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("a,b,kwargs", PAIRWISE)
def test_pairwise_distance_graph_values_double_backward(a, b, kwargs, dtype):
    def run(lib):
        x1, x2 = (lib.tensor(np.cos(np.arange(max(np.prod(s), 1)) * k + k).reshape(s),
                             dtype=getattr(lib, dtype)).requires_grad_() for s, k in ((a, 0.7), (b, 0.3)))
        y = lib.nn.functional.pairwise_distance(x1, x2, **kwargs)
        gs = lib.autograd.grad(y, (x1, x2), lib.ones_like(y) * 1.7, create_graph=True)
        gg = lib.autograd.grad(sum((g * g).sum() for g in gs), (x1, x2))
        # (the reference's zero second derivatives are ZeroTensors: read with force)
        return _tree(y.grad_fn), [t.detach().numpy(force=True) for t in (y,) + gs + gg]
    _assert_same_nodes_and_values(run(cr), run(torch), 1e-12 if dtype == "float64" else 1e-5)


# --- embedding_bag: one EmbeddingBagBackward0 per mode, padding, frequency scaling, weights ---
BAGS = [dict(mode="sum"), dict(mode="mean", padding_idx=4), dict(mode="max"),
        dict(mode="max", padding_idx=3), dict(mode="sum", scale_grad_by_freq=True),
        dict(mode="mean", scale_grad_by_freq=True, padding_idx=0),
        dict(mode="sum", per_sample_weights=True, padding_idx=2),
        dict(mode="mean", include_last_offset=True), dict(mode="max", two_d=True)]


def _bag_case(lib, kwargs, dtype):
    kwargs = dict(kwargs)
    w0 = np.cos(np.arange(18) * 0.9).reshape(6, 3)
    w0[3, 1] = w0[5, 1]                                    # a tie for max mode
    w = lib.tensor(w0, dtype=getattr(lib, dtype)).requires_grad_()
    idx = lib.tensor([1, 2, 4, 5, 4, 3, 2, 0, 3, 5])
    offsets = lib.tensor([0, 2, 2, 5] + ([10] if kwargs.get("include_last_offset") else []))
    inputs = [w]
    if kwargs.pop("per_sample_weights", False):
        kwargs["per_sample_weights"] = lib.tensor(np.linspace(0.5, 2, 10), dtype=w.dtype)
        inputs.append(kwargs["per_sample_weights"].requires_grad_())
    if kwargs.pop("two_d", False):
        idx, offsets = idx.reshape(2, 5), None
    y = lib.nn.functional.embedding_bag(idx, w, offsets, **kwargs)
    g = lib.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=y.dtype)
    grads = lib.autograd.grad(y, inputs, g)
    return _nodes(y), [y.detach().numpy()] + [t.numpy() for t in grads]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", BAGS, ids=[str(i) for i in range(len(BAGS))])
def test_embedding_bag_node_values_gradients(kwargs, dtype):
    _assert_same_nodes_and_values(_bag_case(cr, kwargs, dtype), _bag_case(torch, kwargs, dtype),
                                  1e-12 if dtype == "float64" else 1e-6)


# --- margin losses: SoftMargin/MultilabelMargin/MultiMarginLossBackward0 -------------------
MARGINS = [("soft_margin_loss", (3, 5), "sign", {}), ("soft_margin_loss", (3, 5), "sign0", {}),
           ("multilabel_margin_loss", (3, 5), "labels", {}),
           ("multilabel_margin_loss", (5,), "labels0", {}),
           ("multi_margin_loss", (3, 5), "classes", {}),
           ("multi_margin_loss", (3, 5), "classes", dict(p=2, margin=0.5, weight=True)),
           ("multi_margin_loss", (5,), "class", dict(p=2))]


def _margin_case(lib, name, shape, target, kwargs, reduction, dtype):
    x = lib.tensor(np.cos(np.arange(np.prod(shape)) * 0.9).reshape(shape),
                   dtype=getattr(lib, dtype)).requires_grad_()
    sign = lib.tensor(np.sign(np.sin(np.arange(15))).reshape(3, 5), dtype=x.dtype)
    labels = lib.tensor([[3, 0, -1, 1, 2], [1, 1, 2, -1, 0], [0, 1, 2, 3, 4]])
    target = {"sign": sign, "sign0": sign[0], "labels": labels, "labels0": labels[1],
              "classes": lib.tensor([2, 0, 4]), "class": lib.tensor(3)}[target]
    if kwargs.get("weight"):
        kwargs = dict(kwargs, weight=lib.tensor([1.0, 2.0, 0.5, 1.5, 3.0], dtype=x.dtype))
    y = getattr(lib.nn.functional, name)(x, target, reduction=reduction, **kwargs)
    gx, = lib.autograd.grad(y, x, lib.ones_like(y) * 1.3)
    return _nodes(y), [y.detach().numpy(), gx.numpy()]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,shape,target,kwargs", MARGINS,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MARGINS)])
def test_margin_losses_nodes_values_gradients(name, shape, target, kwargs, reduction, dtype):
    _assert_same_nodes_and_values(
        *(_margin_case(lib, name, shape, target, kwargs, reduction, dtype) for lib in (cr, torch)),
        1e-12 if dtype == "float64" else 1e-5)


# --- affine_grid: AffineGridGeneratorBackward0 --------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("size", [(2, 1, 3, 4), (1, 2, 2, 3, 5), (2, 3, 1, 4)])
def test_affine_grid_node_values_double_backward(size, align_corners, dtype):
    def run(lib):
        k = len(size) - 2
        theta = lib.tensor(np.cos(np.arange(size[0] * k * (k + 1))).reshape(size[0], k, k + 1),
                           dtype=getattr(lib, dtype)).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                      # (unit-size grids warn)
            grid = lib.nn.functional.affine_grid(theta, size, align_corners=align_corners)
        g = lib.tensor(np.sin(np.arange(grid.numel())).reshape(tuple(grid.shape)),
                       dtype=grid.dtype).requires_grad_()
        gt, = lib.autograd.grad(grid, theta, g, create_graph=True)
        gg, = lib.autograd.grad((gt * gt).sum(), g)
        return _nodes(grid), [grid.detach().numpy(), gt.detach().numpy(), gg.numpy()]
    _assert_same_nodes_and_values(run(cr), run(torch), 1e-12 if dtype == "float64" else 1e-5)


# --- grid_sample: GridSampler2DBackward0 / GridSampler3DBackward0, every mode and padding ----
GRIDS = [(dims, mode, pad, align) for dims in (2, 3)
         for mode in ("bilinear", "nearest", "bicubic") for pad in ("zeros", "border", "reflection")
         for align in (True, False) if not (dims == 3 and mode == "bicubic")]


def _grid_case(lib, dims, mode, pad, align, dtype):
    x = np.sin(np.arange(2 * 3 * 4 * 5 * (3 if dims == 3 else 1)) * 0.7)
    x = x.reshape((2, 3, 4, 5) + ((3,) if dims == 3 else ()))
    g = np.cos(np.arange(2 * 12 * dims * (2 if dims == 3 else 1)) * 1.3) * 1.3
    g = g.reshape((2, 4, 3) + ((2,) if dims == 3 else ()) + (dims,))
    g.reshape(-1)[:6] = [-1.0, 1.0, 0.0, 1.0, -1.0, 0.5]           # borders and centres
    X, G = (lib.tensor(a, dtype=getattr(lib, dtype)).requires_grad_() for a in (x, g))
    y = lib.nn.functional.grid_sample(X, G, mode=mode, padding_mode=pad, align_corners=align)
    w = lib.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=y.dtype)
    grads = lib.autograd.grad(y, (X, G), w)
    return _nodes(y), [y.detach().numpy()] + [t.numpy() for t in grads]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dims, mode, pad, align", GRIDS, ids=["-".join(map(str, c)) for c in GRIDS])
def test_grid_sample_node_values_gradients(dims, mode, pad, align, dtype):
    _assert_same_nodes_and_values(_grid_case(cr, dims, mode, pad, align, dtype),
                                  _grid_case(torch, dims, mode, pad, align, dtype),
                                  1e-12 if dtype == "float64" else 2e-5)


# --- scaled_dot_product_attention: the fused CPU node where the reference fuses -------------
ATTENTION = [((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), {}),
             ((2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 4), {"is_causal": True, "scale": 0.3}),
             ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), {"attn_mask": "bool"}),
             ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), {"attn_mask": "float"}),
             ((2, 4, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), {"enable_gqa": True}),
             ((2, 3, 4), (2, 5, 4), (2, 5, 6), {"attn_mask": "bool", "scale": 0.7}),   # math
             ((2, 4, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6), {"enable_gqa": True}),          # math
             ((2, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), {"is_causal": True})]            # math


def _attention_case(lib, q_shape, k_shape, v_shape, kwargs, dtype):
    kwargs = dict(kwargs)
    arrays = [np.sin(np.arange(np.prod(s)) * (0.3 + i)).reshape(s) * 2
              for i, s in enumerate((q_shape, k_shape, v_shape))]
    inputs = [lib.tensor(a, dtype=getattr(lib, dtype)).requires_grad_() for a in arrays]
    length, source = q_shape[-2], k_shape[-2]
    if kwargs.get("attn_mask") == "bool":
        kept = np.cos(np.arange(length * source)).reshape(length, source) > -0.3
        kept[1] = False                                          # a query attending to nothing
        kwargs["attn_mask"] = lib.tensor(kept)
    elif kwargs.get("attn_mask") == "float":
        kwargs["attn_mask"] = lib.tensor(np.cos(np.arange(length * source)).reshape(
            length, source), dtype=getattr(lib, dtype))
    y = lib.nn.functional.scaled_dot_product_attention(*inputs, **kwargs)
    w = lib.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=y.dtype)
    grads = lib.autograd.grad(y, inputs, w)
    fused = type(y.grad_fn).__name__.startswith("ScaledDotProduct")
    return (_nodes(y) if fused else "math"), [t.detach().to(lib.float64).numpy()
                                              for t in (y,) + tuple(grads)]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
@pytest.mark.parametrize("case", ATTENTION, ids=[str(i) for i in range(len(ATTENTION))])
def test_attention_node_values_gradients(case, dtype):
    """(bfloat16: both accumulate in float32; their roundings differ by a unit or two)"""
    tol = {"float64": 1e-12, "float32": 1e-5, "bfloat16": 4e-2}[dtype]
    _assert_same_nodes_and_values(_attention_case(cr, *case, dtype),
                                  _attention_case(torch, *case, dtype), tol)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("pad", ["zeros", "reflection"])
def test_grid_sample_16_bit_rounds_like_the_reference(pad, dtype):
    """Step-by-step rounding: the output and the input gradient to the bit."""
    def run(lib):
        x = lib.tensor(np.sin(np.arange(2 * 2 * 4 * 5) * 0.7).reshape(2, 2, 4, 5),
                       dtype=getattr(lib, dtype)).requires_grad_()
        grid = lib.tensor(np.cos(np.arange(2 * 3 * 3 * 2) * 1.3).reshape(2, 3, 3, 2) * 1.1,
                          dtype=getattr(lib, dtype))
        y = lib.nn.functional.grid_sample(x, grid, padding_mode=pad, align_corners=False)
        (g,) = lib.autograd.grad(y, x, lib.ones_like(y))
        return [y.detach().float().numpy(), g.float().numpy()]
    for ours, theirs in zip(run(cr), run(torch)):
        np.testing.assert_array_equal(ours, theirs)
