"""Samples for the nn family (linear, convolution and its two backward ops, gelu,
silu, softplus, mse_loss, nll_loss and its backward).

Calls go through ``chainrule.nn.functional``; ``torch_call`` is the same call on
``torch.nn.functional`` (torch is imported lazily, so this module loads without it).
The backward ops are reached the way users reach them: through double backward
(nll_loss_backward) or the functions torch exposes as ``torch.nn.grad``.
"""
import importlib

import numpy as np

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._ops import nn as nn_ops

from . import Sample


class _Lazy:
    """A module imported on first attribute access (torch is optional)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)


torch = _Lazy("torch")
TF = _Lazy("torch.nn.functional")
TG = _Lazy("torch.nn.grad")


def _both(op, name, shapes, kwargs=None, complex=False, note="", keywords=(), **options):
    """Sample calling F.<name>(*inputs, **kwargs), the same on torch.nn.functional; the
    last inputs are passed as the ``keywords`` arguments."""
    kwargs = kwargs or {}

    def split(a):
        cut = len(a) - len(keywords)
        return a[:cut], dict(kwargs, **dict(zip(keywords, a[cut:])))

    return Sample(op, lambda *a: getattr(F, name)(*split(a)[0], **split(a)[1]), *shapes,
                  complex=complex,
                  torch_call=lambda *a: getattr(TF, name)(*split(a)[0], **{
                      k: _to_torch(v) for k, v in split(a)[1].items()}),
                  note=note or name + "".join(f" {k}={v}" for k, v in kwargs.items()),
                  **options)


# --- linear ------------------------------------------------------------------------------
_LINEAR = [((2, 3), (4, 3), (4,)), ((3,), (4, 3), (4,)), ((2, 2, 3), (4, 3), (4,)),
           ((0, 3), (2, 3), (2,)), ((2, 3), (1, 3), (1,)), ((2, 3), (4, 3), (1,))]
LINEAR = [_both("addmm", "linear", s, complex=c, note="complex" if c else "")
          for s in _LINEAR for c in (False, True)]

# --- conv2d ------------------------------------------------------------------------------
_CONV = [((1, 2, 4, 4), (3, 2, 3, 3), {}),
         ((2, 2, 5, 4), (2, 2, 2, 3), {"stride": 2}),
         ((1, 2, 4, 5), (2, 2, 3, 2), {"stride": (2, 1), "padding": (1, 2)}),
         ((1, 4, 5, 5), (4, 2, 3, 3), {"groups": 2, "dilation": 2, "padding": 1}),
         ((1, 2, 4, 4), (2, 2, 3, 3), {"padding": "same"}),
         ((1, 1, 4, 4), (2, 1, 2, 2), {"padding": "same", "dilation": 2}),
         ((1, 2, 4, 4), (2, 2, 3, 3), {"padding": "valid"}),
         ((2, 4, 4), (2, 2, 3, 3), {}),
         ((1, 3, 3, 3), (3, 1, 3, 3), {"groups": 3, "padding": 1}),
         ((1, 1, 6, 6), (1, 1, 2, 2), {"stride": 3}),
         ((0, 2, 4, 4), (2, 2, 3, 3), {})]


def _conv_samples():
    samples = []
    for x, w, kwargs in _CONV:
        samples.append(_both("convolution", "conv2d", (x, w, (w[0],)), kwargs))
        samples.append(_both("convolution", "conv2d", (x, w), kwargs,
                             note="no bias " + "".join(f"{k}={v}" for k, v in kwargs.items())))
    samples.append(_both("convolution", "conv2d", ((1, 2, 4, 4), (2, 2, 3, 3), (2,)),
                         {"stride": 2, "padding": 1}, complex=True, note="complex"))
    return samples


def _conv_grad_samples():
    """The backward convolutions, against torch.nn.grad (symmetric padding only; torch
    has no complex transposed convolution, so complex samples skip parity)."""
    samples = []
    for x, w, stride, pad, dil, groups in [((1, 2, 5, 5), (3, 2, 3, 3), 1, 1, 1, 1),
                                           ((2, 4, 6, 5), (2, 2, 2, 3), 2, 0, 1, 2),
                                           ((1, 2, 7, 7), (2, 2, 3, 3), 2, 1, 2, 1)]:
        attrs = (nn_ops._pair(stride, "stride"), ((pad, pad), (pad, pad)),
                 nn_ops._pair(dil, "dilation"), groups)
        out = nn_ops._out_size(x[2], (pad, pad), w[2], stride, dil), \
            nn_ops._out_size(x[3], (pad, pad), w[3], stride, dil)
        g = (x[0], w[0]) + out
        for c in (False, True):
            samples.append(Sample(
                "conv2d_input_grad",
                lambda g_, w_, x=x, a=attrs: nn_ops._conv_input_grad(g_, w_, x, *a), g, w,
                torch_call=None if c else lambda g_, w_, x=x, s=stride, p=pad, d=dil, k=groups:
                    TG.conv2d_input(x, w_, g_, s, p, d, k), complex=c,
                note=f"stride={stride} pad={pad} dil={dil} groups={groups}" + " complex" * c))
            samples.append(Sample(
                "conv2d_weight_grad",
                lambda x_, g_, w=w, a=attrs: nn_ops._conv_weight_grad(x_, g_, w, *a), x, g,
                torch_call=None if c else lambda x_, g_, w=w, s=stride, p=pad, d=dil, k=groups:
                    TG.conv2d_weight(x_, w, g_, s, p, d, k), complex=c,
                note=f"stride={stride} pad={pad} dil={dil} groups={groups}" + " complex" * c))
    return samples


# --- activations -------------------------------------------------------------------------
ACTIVATIONS = [
    _both("gelu", "gelu", ((3, 4),)), _both("gelu", "gelu", ((3, 4),), {"approximate": "tanh"}),
    _both("gelu", "gelu", ((0, 2),)), _both("gelu", "gelu", ((),)),
    _both("silu", "silu", ((3, 4),)), _both("silu", "silu", ((0,),)), _both("silu", "silu", ((),)),
    _both("softplus", "softplus", ((3, 4),)),
    _both("softplus", "softplus", ((3, 4),), {"beta": 2.0, "threshold": 3.0}),
    _both("softplus", "softplus", ((2, 0),)),
]

# Note [pointwise activation entries] (_ops/nn.py): one entry per formula, several
# public functions per entry (selu is elu's entry; celu shares elu's formulas as its own
# node, CeluBackward0).
POINTWISE = [
    _both("leaky_relu", "leaky_relu", ((3, 4),)),
    _both("leaky_relu", "leaky_relu", ((3, 4),), {"negative_slope": 0.2}),
    _both("elu", "elu", ((3, 4),)), _both("elu", "elu", ((3, 4),), {"alpha": 0.5}),
    _both("elu", "selu", ((3, 4),)), _both("celu", "celu", ((3, 4),), {"alpha": 2.0}),
    _both("celu", "celu", ((3, 4),), {"alpha": 0.5}),
    _both("hardtanh", "hardtanh", ((3, 4),)),
    _both("hardtanh", "hardtanh", ((3, 4),), {"min_val": -0.5, "max_val": 1.5}),
    _both("hardtanh", "relu6", ((3, 4),), domain=(-2.0, 8.0)),
    _both("hardsigmoid", "hardsigmoid", ((3, 4),), domain=(-5.0, 5.0)),
    _both("hardswish", "hardswish", ((3, 4),), domain=(-5.0, 5.0)),
    _both("mish", "mish", ((3, 4),)), _both("mish", "mish", ((0,),)),
    _both("softsign", "softsign", ((3, 4),)), _both("tanhshrink", "tanhshrink", ((3, 4),)),
    _both("softshrink", "softshrink", ((3, 4),)),
    _both("softshrink", "softshrink", ((3, 4),), {"lambd": 1.0}),
    _both("hardshrink", "hardshrink", ((3, 4),)),
    _both("hardshrink", "hardshrink", ((3, 4),), {"lambd": 1.0}),
    _both("threshold", "threshold", ((3, 4),), {"threshold": 0.1, "value": 20.0}),
    _both("log_sigmoid", "logsigmoid", ((3, 4),)), _both("log_sigmoid", "logsigmoid", ((),)),
]
# Compositions: the sample names the table op that carries their gradient.
COMPOSITE_ACTIVATIONS = [
    _both("softmax", "softmin", ((3, 4),), {"dim": 1}),
    _both("glu", "glu", ((3, 4),)), _both("glu", "glu", ((4, 3),), {"dim": 0}),
    _both("glu", "glu", ((2, 2, 6),), {"dim": -1}), _both("glu", "glu", ((0, 4),)),
    _both("prelu_kernel", "prelu", ((2, 3, 4), (3,)), note="per channel"),
    _both("prelu_kernel", "prelu", ((2, 3), (1,)), note="shared"),
    _both("prelu_kernel", "prelu", ((5,), (1,)), note="1-d"),
    _both("prelu_kernel", "prelu", ((), (1,)), note="0-d"),
    _both("rrelu_with_noise", "rrelu", ((3, 4),), {"training": False}),
    _both("rrelu_with_noise", "rrelu", ((3, 4),), {"training": False, "lower": 0.2, "upper": 0.5}),
]


# --- losses ------------------------------------------------------------------------------
def _targets(*values):
    return cr.tensor(values, dtype=cr.int64)


_T = _targets(0, 3, 1, 1, 2)
_SPATIAL_T = cr.tensor([[[0, 2], [1, 3]], [[3, 3], [0, 1]]], dtype=cr.int64)
_W = cr.tensor([0.5, 2.0, 1.0, 1.5], dtype=cr.float64)
_PROBS = cr.tensor(np.random.default_rng(3).dirichlet(np.ones(4), 5))      # rows sum to 1


def _loss(op, name, x_shape, target, note, **kwargs):
    """Sample of F.<name>(x, target, **kwargs) with a fixed (non-random) target."""
    return Sample(op, lambda x: getattr(F, name)(x, target, **kwargs), x_shape,
                  torch_call=lambda x: getattr(TF, name)(x, _to_torch(target), **{
                      k: _to_torch(v) for k, v in kwargs.items()}), note=note)


def _to_torch(value):
    if isinstance(value, cr.Tensor):
        return torch.from_numpy(value.numpy().copy())
    return value


def _nll_samples():
    # first of its op, the float32 parity tier's sample: no (float64) class weight
    samples = [_loss("nll_loss2d", "nll_loss", (2, 4, 2, 2), _SPATIAL_T, "spatial unweighted")]
    for reduction in ("mean", "sum", "none"):
        for name in ("nll_loss", "cross_entropy"):
            samples.append(_loss("nll_loss", name, (5, 4), _T, f"{name} {reduction}",
                                 reduction=reduction))
            samples.append(_loss("nll_loss", name, (5, 4), _T, f"{name} {reduction} weight "
                                 "ignore", reduction=reduction, weight=_W, ignore_index=1))
            samples.append(_loss("nll_loss2d", name, (2, 4, 2, 2), _SPATIAL_T,
                                 f"{name} {reduction} spatial", reduction=reduction,
                                 weight=_W))
            samples.append(_loss("nll_loss", name, (4,), _targets(2)[0], f"{name} {reduction} "
                                 "unbatched", reduction=reduction))
    samples.append(_loss("nll_loss", "cross_entropy", (5, 4), _T, "label_smoothing",
                         label_smoothing=0.2, weight=_W, ignore_index=3))
    samples.append(_loss("nll_loss", "nll_loss", (0, 4), _targets(), "empty sum",
                         reduction="sum"))
    samples.append(_loss("mul_scalar", "cross_entropy", (5, 4), _T, "label_smoothing mix",
                         label_smoothing=0.2))
    samples.append(_loss("nll_loss2d", "nll_loss", (2, 4, 2), _SPATIAL_T[:, 0].clone(),
                         "3-d input as (N, C, 1, rest)", weight=_W))
    samples.append(_loss("div_scalar", "cross_entropy", (5, 4), _PROBS, "probabilities"))
    return samples


def _nll_double_backward(x_like, g, target, kwargs, autograd):
    """The gradient of nll_loss with respect to its input, as a function of the output
    gradient ``g`` (the graph of that function holds nll_loss_backward)."""
    x = x_like.detach().requires_grad_()
    fn = F.nll_loss if autograd is cr.autograd else TF.nll_loss
    return autograd.grad(fn(x, target, **kwargs), x, g, create_graph=True)[0]


def _nll_backward_samples():
    samples = []
    x = cr.zeros(5, 4, dtype=cr.float64)
    for reduction, g_shape in (("mean", ()), ("sum", ()), ("none", (5,))):
        kwargs = {"reduction": reduction, "weight": _W, "ignore_index": 1}
        samples.append(Sample(
            "nll_loss_backward",
            lambda g, k=kwargs: _nll_double_backward(x, g, _T, k, cr.autograd), g_shape,
            torch_call=lambda g, k=kwargs: _nll_double_backward(
                _to_torch(x), g, _to_torch(_T), {n: _to_torch(v) for n, v in k.items()},
                torch.autograd),
            note=reduction))
    return samples


MSE = [Sample("mse_loss", lambda a, b, r=r: F.mse_loss(a, b, reduction=r), shape, shape,
              torch_call=lambda a, b, r=r: TF.mse_loss(a, b, reduction=r), note=r + str(shape))
       for r in ("mean", "sum", "none") for shape in ((3, 4), (), (0, 2))]

# --- the composite losses (each names a table op its gradient runs through) -----------------
_PM1 = cr.tensor([1.0, -1.0, -1.0, 1.0], dtype=cr.float64)
_LABELS = cr.tensor([2, 0, 3, 3], dtype=cr.int64)
_MULTI = cr.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], dtype=cr.float64)
_CLASS_W = cr.tensor([0.5, 1.0, 2.0, 1.5], dtype=cr.float64)


def _loss_samples():
    samples = []
    for r in ("mean", "sum", "none"):
        red = {"reduction": r}
        samples += [
            _both("abs", "l1_loss", ((3, 4), (3, 4)), red),
            _both("abs", "l1_loss", ((3, 4), (3, 4), (3, 4)), red, note=f"l1 weight {r}",
                  keywords=("weight",)),
            _both("smooth_l1_loss", "smooth_l1_loss", ((3, 4), (3, 4)), dict(red, beta=0.5)),
            _both("huber_loss", "huber_loss", ((3, 4), (3, 4)), dict(red, delta=0.7)),
            _both("where", "huber_loss", ((3, 4), (3, 4), (3, 4)), red,
                  note=f"huber weight {r}", keywords=("weight",)),
            _both("binary_cross_entropy", "binary_cross_entropy", ((3, 4), (3, 4)), red,
                  domain=(0.05, 0.95)),
            _both("binary_cross_entropy", "binary_cross_entropy", ((3, 4), (3, 4)),
                  dict(red, weight=cr.tensor([1.0, 2.0, 0.5, 3.0], dtype=cr.float64)),
                  domain=(0.05, 0.95), note=f"bce weight {r}"),
            _both("binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits",
                  ((3, 4), (3, 4)), red),
            _both("binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits",
                  ((3, 4), (3, 4)),
                  dict(red, pos_weight=cr.tensor([1.0, 2.0, 0.5, 3.0], dtype=cr.float64)),
                  note=f"bce logits pos_weight {r}"),
            _both("binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits",
                  ((3, 4), (3, 4)),
                  dict(red, weight=cr.tensor([[1.0], [2.0], [0.5]], dtype=cr.float64),
                       pos_weight=cr.tensor([1.0, 2.0, 0.5, 3.0], dtype=cr.float64)),
                  note=f"bce logits weight {r}"),
            _both("log", "kl_div", ((3, 4), (3, 4)), {"reduction": "batchmean" if r == "mean"
                                                       else r}, domain=(0.1, 1.0)),
            _both("exp", "kl_div", ((3, 4), (3, 4)),
                  {"reduction": "batchmean" if r == "mean" else r, "log_target": True},
                  note=f"kl_div log_target {r}"),
            _both("exp", "poisson_nll_loss", ((3, 4), (3, 4)), red, domain=(0.1, 3.0)),
            _both("log", "poisson_nll_loss", ((3, 4), (3, 4)),
                  dict(red, log_input=False, full=True), domain=(0.1, 3.0)),
            _both("log", "gaussian_nll_loss", ((3, 4), (3, 4), (3, 4)), red,
                  domain=(0.2, 2.0)),
            _both("log", "gaussian_nll_loss", ((3, 4), (3, 4), (3,)), dict(red, full=True),
                  domain=(0.2, 2.0)),
            _both("sqrt", "cosine_embedding_loss", ((4, 3), (4, 3), _PM1),
                  dict(red, margin=0.2)),
            _both("clamp_min", "margin_ranking_loss", ((4,), (4,), _PM1), dict(red, margin=0.3)),
            _both("clamp_min", "hinge_embedding_loss", ((4,), _PM1), dict(red, margin=1.5)),
            _both("soft_margin_loss", "soft_margin_loss", ((4,), _PM1), red),
            _both("log_sigmoid", "multilabel_soft_margin_loss", ((2, 3), _MULTI), red),
            _both("norm_dim", "triplet_margin_loss", ((3, 4), (3, 4), (3, 4)),
                  dict(red, margin=2.0)),
            _both("norm_dim", "triplet_margin_loss", ((3, 4), (3, 4), (3, 4)),
                  dict(red, margin=2.0, p=1, swap=True), note=f"triplet p=1 swap {r}"),
            _both("multi_margin_loss", "multi_margin_loss", ((4, 5), _LABELS), red),
            _both("multi_margin_loss", "multi_margin_loss", ((4, 5), _LABELS),
                  dict(red, p=2, margin=0.5, weight=cr.tensor([1., 2., 3., 4., 5.],
                                                              dtype=cr.float64)),
                  note=f"multi_margin p=2 weight {r}"),
        ]
    samples += [
        _both("log_sigmoid", "multilabel_soft_margin_loss", ((2, 3), _MULTI),
              {"weight": cr.tensor([1.0, 0.5, 2.0], dtype=cr.float64)},
              note="multilabel weight"),
        _both("norm_dim", "pairwise_distance", ((3, 4), (3, 4))),
        _both("norm_dim", "pairwise_distance", ((4,), (4,)),
              {"p": 3.0, "keepdim": True}),
        _both("norm_dim", "pairwise_distance", ((2, 3, 4), (4,)), {"p": 1.5, "eps": 0.1}),
        _both("norm_dim", "pairwise_distance", ((3, 4), (3, 4)), {"p": float("inf")}),
        _both("add_scalar", "pairwise_distance", ((), ()), {"p": 1.0, "keepdim": True}),
        _both("add_scalar", "pairwise_distance", ((3, 2), (3, 2)), {"eps": -0.5},
              complex=True, note="pairwise_distance complex"),
        _both("linalg_vector_norm", "cosine_similarity", ((3, 4), (3, 4))),
        _both("linalg_vector_norm", "cosine_similarity", ((3, 4), (1, 4)), {"dim": -1}),
        _both("linalg_vector_norm", "normalize", ((3, 4),)),
        _both("linalg_vector_norm", "normalize", ((3, 4),), {"p": 1.0, "dim": 0}),
    ]
    return samples


# --- normalisation and padding ----------------------------------------------------------------
def _stats(c):
    return (cr.linspace(-0.5, 0.5, c, dtype=cr.float64), cr.linspace(0.5, 2.0, c, dtype=cr.float64))


def _norm_samples():
    rm, rv = _stats(3)
    # first: the float32 parity sample (float64 running statistics are torch's error there)
    samples = [_both("native_batch_norm", "batch_norm", ((4, 3), None, None), {"training": True},
                     note="no running stats")]
    for x in ((4, 3), (2, 3, 4), (2, 3, 2, 2)):
        samples += [
            _both("native_batch_norm", "batch_norm", (x, rm, rv, (3,), (3,)),
                  {"training": True}, note=f"train {x}"),
            _both("native_batch_norm", "batch_norm", (x, rm, rv, (3,), (3,)), {"training": False},
                  note=f"eval {x}"),
        ]
    samples += [
        _both("native_batch_norm", "batch_norm", ((4, 3), rm, rv),
              {"training": True, "momentum": 0.3}, note="no affine"),
        _both("native_batch_norm", "batch_norm", ((3, 1, 2, 2, 2), None, None, (1,)),
              {"training": True}, note="one channel, 3-d, weight only"),
        _both("native_layer_norm", "layer_norm", ((2, 3, 4), (4,), (4,)),
              keywords=("weight", "bias"), kwargs={"normalized_shape": (4,)}, note="affine"),
        _both("native_layer_norm", "layer_norm", ((2, 3, 4),),
              {"normalized_shape": (3, 4), "eps": 1e-3}),
        _both("native_layer_norm", "layer_norm", ((3, 4), (3, 4)), keywords=("weight",),
              kwargs={"normalized_shape": (3, 4)}, note="weight only"),
        _both("native_layer_norm", "layer_norm", ((2, 5), None, (5,)),
              keywords=("weight", "bias"), kwargs={"normalized_shape": (5,)}, note="bias only"),
        _both("native_group_norm", "group_norm", ((2, 4, 3), (4,), (4,)), {"num_groups": 2},
              keywords=("weight", "bias"), note="affine"),
        _both("native_group_norm", "group_norm", ((2, 6, 2, 2),), {"num_groups": 3}),
        _both("native_batch_norm", "instance_norm", ((2, 3, 4),)),
        _both("native_batch_norm", "instance_norm", ((2, 3, 2, 2), rm, rv, (3,), (3,)),
              note="running"),
        _both("native_batch_norm", "instance_norm", ((2, 3, 4), rm, rv), {"use_input_stats": False},
              note="running stats"),
        _both("rsqrt", "rms_norm", ((2, 3, 4),), {"normalized_shape": (4,)}),
        _both("rsqrt", "rms_norm", ((2, 3, 4), (3, 4)), {"normalized_shape": (3, 4),
                                                         "eps": 1e-3}, keywords=("weight",)),
        _both("pow_scalar", "local_response_norm", ((2, 5, 3),), {"size": 3}),
        _both("pow_scalar", "local_response_norm", ((2, 4, 2, 2),), {"size": 2, "k": 2.0}),
    ]
    return samples


def _pad_samples():
    samples = [
        _both("constant_pad_nd", "pad", ((2, 3),), {"pad": (1, 2)}),
        _both("constant_pad_nd", "pad", ((2, 3, 4),), {"pad": (1, -2, 0, 1), "value": 2.5}),
        _both("constant_pad_nd", "pad", ((2, 3, 2),), {"pad": (1, 1, 1, 1, 1, 1)}),
        _both("constant_pad_nd", "pad", ((0, 3),), {"pad": (1, 1)}),
    ]
    for mode in ("reflect", "replicate", "circular"):
        name = {"reflect": "reflection_pad", "replicate": "replication_pad"}.get(mode)
        op = (lambda k: f"{name}{k}d") if name else (lambda k: "copy")
        samples += [
            _both(op(1), "pad", ((2, 3, 4),), {"pad": (2, 1), "mode": mode}),
            _both(op(2), "pad", ((1, 2, 3, 4),), {"pad": (1, 2, 2, 0), "mode": mode}),
            _both(op(3), "pad", ((1, 1, 2, 3, 3),), {"pad": (1, 1, 1, 0, 1, 1), "mode": mode}),
        ]
    samples += [_both("replication_pad2d", "pad", ((2, 4, 3),), {"pad": (-1, 2, 1, -2),
                                                                "mode": "replicate"}),
                _both("reflection_pad1d", "pad", ((3, 4),), {"pad": (3, 0), "mode": "reflect"}),
                _both("copy", "pad", ((2, 3, 5),), {"pad": (-1, 2), "mode": "circular"}),
                _both("copy", "pad", ((2, 4, 3),), {"pad": (1, -1, 0, 3), "mode": "circular"})]
    return samples + _pad_backward_samples()


def _adjoint_samples(op, name, cases):
    """An adjoint (backward) op, reached through double backward of F.<name>: each case
    is (input shape, output-gradient shape, kwargs, note)."""
    def double(lib, x, g, kwargs):
        leaf = x.detach().requires_grad_()
        y = getattr(lib.nn.functional, name)(leaf, **kwargs)
        return lib.autograd.grad(y, leaf, g, create_graph=True)[0]

    return [Sample(op, lambda x_, g_, k=kwargs: double(cr, x_, g_, k), x, g,
                   torch_call=lambda x_, g_, k=kwargs: double(torch, x_, g_, k), note=note)
            for x, g, kwargs, note in cases]


def _pad_backward_samples():
    return _adjoint_samples("pad_backward", "pad", (
        ((1, 2, 3, 4), (1, 2, 6, 5), {"pad": (0, 1, 2, 1), "mode": "reflect"}, "reflect"),
        ((2, 3), (2, 6), {"pad": (2, 1), "mode": "replicate"}, "replicate")))


# --- pooling (Note [pooling windows] in chainrule/_ops/pooling.py) --------------------------
def _first_output(name, kwargs):
    """F.<name>(x, **kwargs)[0]: the pooled values of a return_indices call."""
    return Sample("max_pool2d_with_indices", lambda x: getattr(F, name)(x, **kwargs)[0], (2, 2, 5, 6),
                  torch_call=lambda x: getattr(TF, name)(x, **kwargs)[0],
                  note=f"{name} indices")


def _avg_grad(name, x_shape, g, kwargs, lib):
    """The input gradient of an average pooling as a function of the output gradient
    ``g`` (its graph holds avg_pool_backward)."""
    x = lib.zeros(x_shape, dtype=lib.float64, requires_grad=True)
    y = getattr(lib.nn.functional, name)(x, **kwargs)
    return lib.autograd.grad(y, x, g, create_graph=True)[0]


def _avg_double_backward(name, g_shape, kwargs):
    x_shape = (2, 2, 5, 6) if name == "avg_pool2d" else (1, 2, 3, 4, 5)
    return Sample("avg_pool_backward", lambda g: _avg_grad(name, x_shape, g, kwargs, cr), g_shape,
                  torch_call=lambda g: _avg_grad(name, x_shape, g, kwargs, torch),
                  note=f"{name} double backward")


def _pool_samples():
    x = (2, 2, 5, 6)
    samples = [_both("max_pool2d_with_indices", "max_pool2d", (x,), kw) for kw in (
        {"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
        {"kernel_size": (2, 3), "stride": (1, 2), "dilation": (2, 1), "padding": (1, 1)},
        {"kernel_size": 3, "stride": 2, "ceil_mode": True})]
    samples += [_both("max_pool2d_with_indices", "max_pool2d", ((2, 5, 6),), {"kernel_size": 2},
                      note="unbatched"),
                _first_output("max_pool2d", {"kernel_size": 2, "return_indices": True})]
    samples += [_both("avg_pool2d", "avg_pool2d", (x,), kw) for kw in (
        {"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
        {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        {"kernel_size": 2, "divisor_override": 3})]
    samples += [
        _both("max_pool2d_with_indices", "max_pool1d", ((2, 3, 7),), {"kernel_size": 3, "stride": 2,
                                                      "padding": 1}),
        _both("avg_pool2d", "avg_pool1d", ((2, 3, 7),), {"kernel_size": 3, "stride": 2,
                                                      "ceil_mode": True}),
        _both("adaptive_avg_pool2d", "adaptive_avg_pool2d", (x,), {"output_size": (2, 4)}),
        _both("adaptive_avg_pool2d", "adaptive_avg_pool2d", ((2, 5, 6),), {"output_size": 3}),
        _both("adaptive_avg_pool2d", "adaptive_avg_pool1d", ((2, 3, 7),), {"output_size": 3}),
        _both("adaptive_max_pool2d", "adaptive_max_pool2d", (x,), {"output_size": (3, 4)}),
        _both("adaptive_max_pool2d", "adaptive_max_pool1d", ((2, 3, 7),), {"output_size": 3}),
        _both("max_pool3d_with_indices", "max_pool3d", ((1, 2, 3, 4, 5),), {"kernel_size": 2, "stride": 1,
                                                             "padding": 1}),
        _both("max_pool3d_with_indices", "max_pool3d", ((2, 3, 4, 4),), {"kernel_size": (1, 2, 3),
                                                        "dilation": (1, 2, 1)}),
        _both("avg_pool3d", "avg_pool3d", ((1, 2, 3, 4, 5),),
              {"kernel_size": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
        _both("adaptive_avg_pool3d", "adaptive_avg_pool3d", ((1, 2, 3, 4, 5),), {"output_size": (2, 3, 2)}),
        _both("adaptive_max_pool3d", "adaptive_max_pool3d", ((1, 2, 3, 4, 5),), {"output_size": 2}),
        _both("mean_dim", "adaptive_avg_pool2d", (x,), {"output_size": 1}, note="a mean"),
        _avg_double_backward("avg_pool2d", (2, 2, 3, 3),
                             {"kernel_size": 3, "stride": 2, "padding": 1}),
        _avg_double_backward("adaptive_avg_pool3d", (1, 2, 2, 3, 2), {"output_size": (2, 3, 2)}),
        _both("pow_scalar", "lp_pool2d", (x,), {"norm_type": 2, "kernel_size": 2},
              domain=(0.5, 2.0)),
        _both("pow_scalar", "lp_pool1d", ((2, 3, 6),), {"norm_type": 3, "kernel_size": 3},
              domain=(0.5, 2.0)),
    ]
    return samples


# --- conv1d/3d, transposed convolutions, unfold / fold ---------------------------------------
def _conv_family_samples():
    return [
        Sample("conv_tbc", lambda x, w, b: cr.conv_tbc(x, w, b, 1), (5, 2, 3), (3, 3, 4), (4,),
               torch_call=lambda x, w, b: torch.conv_tbc(x, w, b, 1)),
        Sample("conv_tbc", lambda x, w, b: cr.conv_tbc(x, w, b), (4, 1, 2), (2, 2, 3), (3,),
               torch_call=lambda x, w, b: torch.conv_tbc(x, w, b), note="-no-pad"),
        _both("convolution", "conv1d", ((2, 4, 9), (6, 2, 3), (6,)),
              {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}),
        _both("convolution", "conv1d", ((4, 9), (6, 4, 3)), {"padding": "same"}),
        _both("convolution", "conv3d", ((1, 4, 4, 4, 3), (2, 2, 2, 2, 2), (2,)),
              {"stride": (2, 1, 1), "padding": (1, 0, 1), "groups": 2}),
        _both("convolution", "conv3d", ((2, 3, 3, 3), (2, 2, 2, 2, 2))),
        _both("convolution", "conv_transpose2d", ((1, 4, 3, 4), (4, 3, 3, 2), (6,)),
              {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2), "groups": 2}),
        _both("convolution", "conv_transpose2d", ((2, 3, 3), (2, 2, 3, 3)),
              {"stride": 2, "dilation": 2, "output_padding": 1}),
        _both("convolution", "conv_transpose1d", ((2, 4, 5), (4, 3, 3), (3,)),
              {"stride": 3, "padding": 1, "output_padding": 2}),
        # output padding past the stride (allowed below the dilation): rows nothing reads
        _both("convolution", "conv_transpose1d", ((1, 2, 4), (2, 2, 3)),
              {"dilation": 2, "output_padding": 1}),
        _both("convolution", "conv1d", ((1, 2, 6), (3, 2, 2), (3,)), {"padding": "same"},
              note="conv1d same, even kernel"),
        _both("convolution", "conv3d", ((1, 2, 3, 4, 3), (2, 1, 2, 3, 2), (2,)),
              {"dilation": (1, 1, 2), "padding": "same", "groups": 2}),
        _both("convolution", "conv1d", ((1, 2, 4), (2, 2, 2), (2,)), complex=True,
              note="conv1d complex"),
        _both("convolution", "conv_transpose1d", ((1, 2, 4), (2, 2, 2), (2,)), {"stride": 2},
              complex=True, note="conv_transpose1d complex"),
        _both("im2col", "unfold", ((2, 3, 5, 6),),
              {"kernel_size": (2, 3), "dilation": (2, 1), "padding": 1, "stride": (1, 2)}),
        _both("im2col", "unfold", ((2, 4, 4),), {"kernel_size": 3}),
        _both("im2col", "unfold", ((1, 2, 4, 5),), {"kernel_size": (1, 2), "padding": (2, 0),
                                                    "stride": 3}),
        _both("im2col", "unfold", ((2, 3, 4, 4),), {"kernel_size": 2}, complex=True,
              note="unfold complex"),
        _both("col2im", "fold", ((2, 12, 20),), {"output_size": (5, 6), "kernel_size": 2}),
        _both("col2im", "fold", ((2, 18, 9),),
              {"output_size": (6, 7), "kernel_size": (2, 3), "dilation": (2, 1),
               "padding": 1, "stride": (2, 3)}),
        _both("col2im", "fold", ((8, 4),), {"output_size": 3, "kernel_size": 2,
                                            "padding": (0, 1), "stride": (1, 2)}),
        _both("col2im", "fold", ((1, 8, 4),), {"output_size": (3, 3), "kernel_size": 2},
              complex=True, note="fold complex"),
    ]


# --- embedding (Note [embedding gradient factors] in _ops/nn.py) ----------------------------
_IDX = cr.tensor([[0, 2, 4], [2, 2, 1]], dtype=cr.int64)


def _embedding_double_backward(w_like, g, kwargs, autograd, fn, idx):
    w = w_like.detach().requires_grad_()
    return autograd.grad(fn(idx, w, **kwargs), w, g, create_graph=True)[0]


def _embedding_samples():
    """padding_idx and scale_grad_by_freq change only the backward (it is no longer the
    derivative, which gradcheck would flag): the samples keep the factors at 1 (a padding
    row never looked up); test_nn_functional checks those gradients against torch."""
    samples = []
    for kwargs in ({}, {"padding_idx": 3}, {"padding_idx": -2, "max_norm": 10.0}):
        note = "".join(f" {k}={v}" for k, v in kwargs.items())
        samples.append(Sample("embedding", lambda w, k=kwargs: F.embedding(_IDX, w, **k),
                              (5, 3), torch_call=lambda w, k=kwargs: TF.embedding(
                                  _to_torch(_IDX), w, **k), note=note))
        w0 = cr.zeros(5, 3, dtype=cr.float64)
        samples.append(Sample(
            "embedding_dense_backward",
            lambda g, k=kwargs: _embedding_double_backward(w0, g, k, cr.autograd, F.embedding,
                                                           _IDX), (2, 3, 3),
            torch_call=lambda g, k=kwargs: _embedding_double_backward(
                _to_torch(w0), g, k, torch.autograd, TF.embedding, _to_torch(_IDX)),
            note=note))
    return samples


# --- embedding_bag (Note [bags as weighted lookups] in _ops/embedding_bag.py) ---------------
_BAG_IDX = cr.tensor([1, 2, 4, 5, 4, 3, 2, 0, 3, 5], dtype=cr.int64)
_BAG_OFFSETS = cr.tensor([0, 2, 2, 5], dtype=cr.int64)


def _bag(op, shapes, kwargs, offsets=_BAG_OFFSETS, idx=_BAG_IDX):
    note = "embedding_bag" + "".join(f" {k}={v}" for k, v in kwargs.items())
    names = ("weight", "per_sample_weights")[:len(shapes)]

    def call(lib, args):
        cast = (lambda t: t) if lib is F else _to_torch
        extra = {} if offsets is None else {"offsets": cast(offsets)}
        return lib.embedding_bag(cast(idx), **dict(zip(names, args)), **extra, **kwargs)
    return Sample(op, lambda *a: call(F, a), *shapes, torch_call=lambda *a: call(TF, a),
                  note=note)


def _embedding_bag_samples():
    return [_bag("_embedding_bag", ((6, 3),), {"mode": "sum"}),
            _bag("_embedding_bag", ((6, 3),), {"mode": "mean", "padding_idx": 4}),
            _bag("_embedding_bag", ((6, 3),), {"mode": "max"}),
            _bag("_embedding_bag", ((6, 3),), {"mode": "max", "padding_idx": 3}),
            _bag("_embedding_bag", ((6, 3), (10,)), {"mode": "sum", "padding_idx": 2}),
            _bag("_embedding_bag", ((6, 2),), {"mode": "mean", "include_last_offset": True},
                 offsets=cr.tensor([0, 3, 3, 10], dtype=cr.int64)),
            _bag("_embedding_bag", ((6, 2), (2, 5)), {"mode": "sum"}, offsets=None,
                 idx=_BAG_IDX.reshape(2, 5))]


# --- resampling and attention (Note [separable upsampling] in chainrule/_ops/upsample.py) ---
_BOOL_MASK = cr.tensor([[True, False, True, True], [True, True, False, True],
                        [False, True, True, True]])


def _resampling_samples():
    samples = [
        _both("pixel_shuffle", "pixel_shuffle", ((2, 8, 2, 3),), {"upscale_factor": 2}),
        _both("pixel_shuffle", "pixel_shuffle", ((3, 9, 1, 2),), {"upscale_factor": 3}),
        _both("pixel_unshuffle", "pixel_unshuffle", ((2, 2, 4, 6),), {"downscale_factor": 2}),
        _both("pixel_unshuffle", "pixel_unshuffle", ((2, 1, 2, 3, 6),), {"downscale_factor": 3}),
    ]
    for mode, shape in (("nearest", (2, 3, 4)), ("nearest", (1, 2, 3, 4)),
                        ("nearest", (1, 1, 2, 3, 2)), ("nearest-exact", (2, 3, 4)),
                        ("nearest-exact", (1, 2, 3, 4)), ("nearest-exact", (1, 1, 2, 3, 2)),
                        ("area", (1, 2, 5, 4))):
        op = "adaptive_avg_pool2d" if mode == "area" else \
            f"upsample_{mode.replace('-', '_')}{len(shape) - 2}d"
        samples += [_both(op, "interpolate", (shape,), {"scale_factor": 1.7, "mode": mode}),
                    _both(op, "interpolate", (shape,), {"size": 3, "mode": mode})]
    samples.append(_both("upsample_nearest2d", "interpolate", ((1, 2, 3, 2),),
                         {"scale_factor": (2, 0.5), "mode": "nearest"}))
    for mode, shape in (("linear", (2, 3, 4)), ("bilinear", (1, 2, 3, 4)),
                        ("bicubic", (1, 2, 4, 4)), ("trilinear", (1, 1, 2, 3, 3))):
        for kwargs in ({"scale_factor": 1.5}, {"size": 3, "align_corners": True},
                       {"scale_factor": 0.7, "recompute_scale_factor": True}):
            samples.append(_both(f"upsample_{mode}{len(shape) - 2}d", "interpolate", (shape,),
                                 dict(kwargs, mode=mode)))
    return samples + _upsample_backward_samples()


def _upsample_backward_samples():
    return _adjoint_samples("upsample_backward", "interpolate", (
        ((1, 2, 3, 4), (1, 2, 5, 6), {"size": (5, 6), "mode": "bilinear"}, "bilinear"),
        ((1, 2, 3), (1, 2, 5), {"size": (5,), "mode": "nearest"}, "nearest")))


_DEAD_ROW_MASK = cr.tensor([[True, False, True, True, False], [False] * 5,
                            [True, True, False, True, True]])
_FLOAT_MASK = cr.tensor([[0.5, -1.0, 0.0, 2.0, -float("inf")]], dtype=cr.float64)
_FLASH = "_scaled_dot_product_flash_attention_for_cpu"


def _attention_samples():
    """The math path's samples name _safe_softmax, the fused path's (4-D, one head size,
    no dropout, a constant mask) the fused op (Note [attention as one op])."""
    qkv, qkv4 = ((2, 3, 4), (2, 4, 4), (2, 4, 5)), ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4))
    return [
        _both("_safe_softmax", "scaled_dot_product_attention", qkv),
        _both("_safe_softmax", "scaled_dot_product_attention", ((2, 3, 4), (2, 3, 4), (2, 3, 5)),
              {"is_causal": True}),
        _both("_safe_softmax", "scaled_dot_product_attention", qkv, {"attn_mask": _BOOL_MASK,
                                                                    "scale": 0.5}, note="bool mask"),
        _both("_safe_softmax", "scaled_dot_product_attention", qkv + ((3, 4),),
              keywords=("attn_mask",), note="float mask"),
        _both("_safe_softmax", "scaled_dot_product_attention",
              ((1, 4, 3, 2), (1, 2, 4, 2), (1, 2, 4, 3)), {"enable_gqa": True}),
        _both(_FLASH, "scaled_dot_product_attention", qkv4),
        _both(_FLASH, "scaled_dot_product_attention", ((1, 2, 4, 3),) * 3, {"is_causal": True,
                                                                            "scale": 0.7}),
        _both(_FLASH, "scaled_dot_product_attention", qkv4, {"attn_mask": _DEAD_ROW_MASK},
              note="a query attending to nothing"),
        _both(_FLASH, "scaled_dot_product_attention", qkv4, {"attn_mask": _FLOAT_MASK},
              note="float mask"),
        _both(_FLASH, "scaled_dot_product_attention", ((1, 4, 3, 2), (1, 2, 4, 2), (1, 2, 4, 2)),
              {"enable_gqa": True}),
    ]


# --- random ops: a fixed mask (the default generator reseeded on every call); no parity ------
def _seeded(name, kwargs):
    def call(x):
        cr.manual_seed(7)
        return getattr(F, name)(x, **kwargs)
    return call


_RANDOM = [
    Sample("mul", _seeded("dropout", {"p": 0.4}), (4, 5), torch_call=None, note="dropout"),
    Sample("mul", _seeded("dropout2d", {"p": 0.5}), (2, 3, 2, 2), torch_call=None,
           note="dropout2d"),
    Sample("add", _seeded("alpha_dropout", {"p": 0.3, "training": True}), (4, 5),
           torch_call=None, note="alpha_dropout"),
    Sample("add", _seeded("feature_alpha_dropout", {"p": 0.3, "training": True}), (2, 3, 4),
           torch_call=None, note="feature_alpha_dropout"),
    Sample("where", _seeded("rrelu", {"training": True}), (4, 5), torch_call=None,
           note="rrelu training"),
]


# --- the rest: bilinear, channel_shuffle, pdist, max_unpool, multilabel_margin_loss, ... ------
_UNPOOL_IDX = cr.tensor([[[[0, 3], [9, 6]]]], dtype=cr.int64)
_UNPOOL1D_IDX = cr.tensor([[[0, 3, 5], [1, 2, 6]], [[6, 2, 4], [0, 1, 5]]], dtype=cr.int64)
_MULTILABEL = cr.tensor([[3, 0, -1, 1, 2], [1, 1, 2, -1, 0], [0, 1, 2, 3, 4]], dtype=cr.int64)


def _misc_samples():
    return [
        _both("einsum", "bilinear", ((3, 4), (3, 5), (2, 4, 5), (2,))),
        _both("einsum", "bilinear", ((4,), (5,), (2, 4, 5))),
        _both("channel_shuffle", "channel_shuffle", ((2, 6, 3),), {"groups": 3}),
        _both("channel_shuffle", "channel_shuffle", ((1, 4, 2, 2),), {"groups": 2}),
        _both("_pdist_forward", "pdist", ((5, 3),)),
        _both("_pdist_forward", "pdist", ((4, 3),), {"p": 1.5}),
        _both("_pdist_forward", "pdist", ((4, 3),), {"p": 0.7}),
        _both("_pdist_forward", "pdist", ((3, 4),), {"p": 1}),
        _both("_pdist_forward", "pdist", ((4, 2),), {"p": 3}),
        _both("_pdist_forward", "pdist", ((4, 3),), {"p": float("inf")}),
        _both("max_unpool2d", "max_unpool2d", ((1, 1, 2, 2), _UNPOOL_IDX), {"kernel_size": 2},
              note="unpool"),
        _both("max_unpool2d", "max_unpool2d", ((1, 1, 2, 2), _UNPOOL_IDX),
              {"kernel_size": 2, "output_size": (4, 3)}, note="unpool output_size"),
        _both("max_unpool2d", "max_unpool2d", ((2, 2, 2), _UNPOOL_IDX[0].expand(2, 2, 2)),
              {"kernel_size": 2, "stride": (2, 1)}, note="unpool unbatched"),
        _both("max_unpool2d", "max_unpool1d", ((2, 2, 3), _UNPOOL1D_IDX),
              {"kernel_size": 2, "output_size": (7,)}, note="unpool 1d"),
        _both("multilabel_margin_loss", "multilabel_margin_loss", ((3, 5), _MULTILABEL), note="multilabel"),
        _both("multilabel_margin_loss", "multilabel_margin_loss", ((5,), _MULTILABEL[1]),
              {"reduction": "sum"}, note="multilabel unbatched"),
        _both("multi_margin_loss", "multi_margin_loss", ((5,), _LABELS[0]),
              {"p": 2, "margin": 0.7, "reduction": "none"}, note="multi_margin unbatched"),
        _both("soft_margin_loss", "soft_margin_loss", ((3, 4), _PM1), {"reduction": "sum"},
              note="soft_margin broadcast target"),
        _both("multilabel_margin_loss", "multilabel_margin_loss", ((3, 5), _MULTILABEL), {"reduction": "none"},
              note="multilabel none"),
        _both("norm_dim", "triplet_margin_with_distance_loss",
              ((3, 4), (3, 4), (3, 4)), {"swap": True, "margin": 2.0}),
    ]


# ctc_loss through log_softmax: the reference's gradient with respect to log_probs
# itself assumes that normalisation (it is not the derivative there); through the
# logits both are the derivative.
_CTC_TARGETS = cr.tensor([[1, 2, 2], [3, 0, 0]], dtype=cr.int64)


def _ctc(module, logits, targets, reduction):
    return module.ctc_loss(logits.log_softmax(2), targets, (5, 4), (3, 1),
                           reduction=reduction)


def _ctc_gradient(grad, logits):
    """The gradient op on its own (its derivatives raise, as in the reference)."""
    from chainrule._ops import ctc
    lp = logits.log_softmax(2)
    nll = ctc.ctc_losses(lp.detach(), _CTC_TARGETS, (5, 4), (3, 1), 0, False)
    return ctc._ctc_loss_backward(grad, lp, _CTC_TARGETS, nll, (5, 4), (3, 1), 0, False)


def _torch_ctc_gradient(grad, logits):
    lp, targets = logits.log_softmax(2), _to_torch(_CTC_TARGETS)
    nll, alpha = torch.ops.aten._ctc_loss(lp.detach(), targets, (5, 4), (3, 1), 0, False)
    return torch.ops.aten._ctc_loss_backward(grad, lp, targets, (5, 4), (3, 1), nll, alpha, 0,
                                             False)


def _ctc_samples():
    return [Sample("_ctc_loss", lambda z, r=r: _ctc(F, z, _CTC_TARGETS, r), (5, 2, 4),
                   torch_call=lambda z, r=r: _ctc(TF, z, _to_torch(_CTC_TARGETS), r),
                   gradgrad=False, note=f"ctc_loss {r}") for r in ("mean", "sum", "none")] + [
        Sample("_ctc_loss_backward", _ctc_gradient, (2,), (5, 2, 4), gradgrad=False,
               torch_call=_torch_ctc_gradient, note="ctc_loss gradient")]


SAMPLES = (LINEAR + _conv_samples() + _conv_grad_samples() + ACTIVATIONS + POINTWISE
           + COMPOSITE_ACTIVATIONS + _nll_samples() + _nll_backward_samples() + MSE
           + _loss_samples() + _norm_samples() + _pad_samples() + _pool_samples()
           + _conv_family_samples() + _embedding_samples() + _embedding_bag_samples() + _resampling_samples()
           + _attention_samples() + _RANDOM + _misc_samples() + _ctc_samples())
