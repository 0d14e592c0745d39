"""chainrule.nn.functional: signatures, values, gradients and errors of linear, conv2d,
the activations and the losses, against NumPy references and (where installed) torch.
"""
import inspect
import math
import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._ops import _method_slot
from chainrule.autograd import gradcheck, gradgradcheck

NAMES = ["linear", "conv2d", "relu", "gelu", "silu", "softplus", "sigmoid", "tanh", "softmax",
         "log_softmax", "cross_entropy", "nll_loss", "mse_loss"]

# torch's documented signatures (several of torch's functions are C builtins without one)
SIGNATURES = {
    "linear": "(input, weight, bias=None)",
    "conv2d": "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)",
    "relu": "(input, inplace=False)",
    "gelu": "(input, approximate='none')",
    "silu": "(input, inplace=False)",
    "softplus": "(input, beta=1.0, threshold=20.0)",
    "sigmoid": "(input)",
    "tanh": "(input)",
    "softmax": "(input, dim=None, _stacklevel=3, dtype=None)",
    "log_softmax": "(input, dim=None, _stacklevel=3, dtype=None)",
    "cross_entropy": "(input, target, weight=None, size_average=None, ignore_index=-100, "
                     "reduce=None, reduction='mean', label_smoothing=0.0)",
    "nll_loss": "(input, target, weight=None, size_average=None, ignore_index=-100, "
                "reduce=None, reduction='mean')",
    "mse_loss": "(input, target, size_average=None, reduce=None, reduction='mean', "
                "weight=None)",
}


def _random(rng, *shape, dtype=np.float64):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return np.asarray(x, dtype=dtype)


def _leaf(arr):
    return cr.tensor(arr, requires_grad=True)


# --- the module -------------------------------------------------------------------------
def test_import_path_and_names():
    import chainrule.nn.functional as functional
    assert functional is cr.nn.functional
    for name in NAMES:
        assert callable(getattr(F, name)), name
        assert getattr(F, name).__doc__


@pytest.mark.parametrize("name", NAMES)
def test_signatures_match_the_reference(name):
    assert str(inspect.signature(getattr(F, name))) == SIGNATURES[name]


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("linear", "conv2d", "gelu",
                                                                  "softplus")])
def test_signatures_match_torch_where_it_has_one(torch, name):
    theirs = inspect.signature(getattr(torch.nn.functional, name))
    ours = inspect.signature(getattr(F, name))
    assert [(p.name, p.default, p.kind) for p in ours.parameters.values()] == \
        [(p.name, p.default, p.kind) for p in theirs.parameters.values()]


# --- linear --------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape", [(4, 3), (3,), (2, 4, 3), (0, 3)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_values_and_gradients(rng, x_shape, with_bias):
    x, w, b = _random(rng, *x_shape), _random(rng, 5, 3), _random(rng, 5)
    tx, tw, tb = _leaf(x), _leaf(w), _leaf(b)
    out = F.linear(tx, tw, tb if with_bias else None)
    expected = x @ w.T + (b if with_bias else 0)
    np.testing.assert_allclose(out.detach().numpy(), expected)
    g = _random(rng, *expected.shape)
    out.backward(cr.tensor(g))
    np.testing.assert_allclose(tx.grad.numpy(), g @ w)
    g2, x2 = g.reshape(-1, 5), x.reshape(-1, 3)
    np.testing.assert_allclose(tw.grad.numpy(), g2.T @ x2)
    if with_bias:
        np.testing.assert_allclose(tb.grad.numpy(), g2.sum(0))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_linear_gradcheck(rng, dtype):
    inputs = (_leaf(_random(rng, 2, 2, 3, dtype=dtype)), _leaf(_random(rng, 4, 3, dtype=dtype)),
              _leaf(_random(rng, 4, dtype=dtype)))
    assert gradcheck(F.linear, inputs)
    assert gradgradcheck(F.linear, inputs)


def test_linear_grad_fn_names(rng):
    x, w, b = _leaf(_random(rng, 2, 3)), _leaf(_random(rng, 4, 3)), _leaf(_random(rng, 4))
    assert F.linear(x, w, b).grad_fn.name() == "AddmmBackward0"
    assert F.linear(x, w).grad_fn.name() == "MmBackward0"


def test_linear_keeps_float32(rng):
    x = cr.tensor(_random(rng, 2, 3, dtype=np.float32))
    w = cr.tensor(_random(rng, 4, 3, dtype=np.float32), requires_grad=True)
    b = cr.zeros(4, requires_grad=True)
    out = F.linear(x, w, b)
    assert out.dtype == cr.float32
    out.sum().backward()
    assert w.grad.dtype == cr.float32 and b.grad.dtype == cr.float32


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 5x4\)"):
        F.linear(cr.zeros(2, 3), cr.zeros(4, 5), cr.zeros(4))
    with pytest.raises(RuntimeError, match="The expanded size of the tensor \\(4\\) must match "
                                           "the existing size \\(5\\)"):
        F.linear(cr.zeros(2, 3), cr.zeros(4, 3), cr.zeros(5))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but "
                                           "got: float != double"):     # matmul's, no bias
        F.linear(cr.zeros(2, 3), cr.zeros(4, 3, dtype=cr.float64))
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got "
                                           "Float and Double"):         # addmm's
        F.linear(cr.zeros(2, 3), cr.zeros(4, 3, dtype=cr.float64), cr.zeros(4, dtype=cr.float64))
    with pytest.raises(TypeError, match="must be Tensor"):
        F.linear([1.0], cr.zeros(1, 1))
    with pytest.raises(RuntimeError, match="both arguments to linear need to be at least 1D, "
                                           "but they are 0D and 2D"):
        F.linear(cr.tensor(1.0), cr.zeros(1, 1))


def test_linear_plain_calls_skip_the_argument_checks(rng, monkeypatch):
    # _plain_linear: every check would pass; anything else goes to _checked_linear.
    from chainrule._ops import nn as nn_ops
    checked = []
    real = nn_ops._checked_linear
    monkeypatch.setattr(nn_ops, "_checked_linear", lambda *a: checked.append(a) or real(*a))
    w, b = _random(rng, 4, 3), _random(rng, 4)
    for x in (_random(rng, 3), _random(rng, 2, 3), _random(rng, 5, 2, 3)):
        out = F.linear(cr.tensor(x), cr.tensor(w), cr.tensor(b))
        np.testing.assert_allclose(out.numpy(), x @ w.T + b)
    assert not checked

    class Sub(cr.Tensor):
        pass
    others = [(cr.tensor(_random(rng, 2, 3)), cr.tensor(w), cr.tensor(_random(rng, 1))),
              (cr.tensor(_random(rng, 2, 3)), cr.tensor(w), cr.tensor(_random(rng, 2, 4))),
              (cr.tensor(_random(rng, 2, 3)), Sub(w, dtype=cr.float64), cr.tensor(b))]
    for x, w_, b_ in others:               # broadcast biases, a Tensor subclass
        np.testing.assert_allclose(F.linear(x, w_, b_).numpy(),
                                   x.numpy() @ w_._data.T + b_.numpy())
    assert len(checked) == len(others)
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got "
                                           "Float and Double"):
        F.linear(cr.zeros(2, 3, dtype=cr.float64), cr.zeros(4, 3, dtype=cr.float64),
                 cr.zeros(4))
    with pytest.raises(TypeError, match=r"linear\(\): argument 'bias' \(position 3\) must be "
                                        "Tensor, not list"):
        F.linear(cr.zeros(2, 3), cr.zeros(4, 3), [0.0] * 4)


def test_linear_with_vector_weight_is_a_dot(rng):
    x, w = _random(rng, 2, 3), _random(rng, 3)
    np.testing.assert_allclose(F.linear(cr.tensor(x), cr.tensor(w)).numpy(), x @ w)


# --- conv2d ---------------------------------------------------------------------------------
def _conv_reference(x, w, b, stride, padding, dilation, groups):
    """A direct (slow, obviously right) 2-D cross-correlation."""
    (sh, sw), (dh, dw) = stride, dilation
    (pt, pb), (pl, pr) = padding
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), np.result_type(x, w))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = x[:, g * cg:(g + 1) * cg, i * sh:i * sh + dh * (kh - 1) + 1:dh,
                          j * sw:j * sw + dw * (kw - 1) + 1:dw]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    if b is not None:
        out += b.reshape(-1, 1, 1)
    return out


def _pairs(v):
    return (v, v) if isinstance(v, int) else tuple(v)


CONV_CASES = [
    ((2, 3, 6, 5), (4, 3, 3, 3), {}),
    ((2, 3, 6, 5), (4, 3, 3, 2), {"stride": 2}),
    ((2, 3, 6, 5), (4, 3, 3, 2), {"stride": (2, 1), "padding": (1, 2)}),
    ((2, 4, 7, 7), (6, 2, 3, 3), {"groups": 2, "dilation": 2, "padding": 1}),
    ((1, 2, 5, 5), (3, 2, 3, 3), {"padding": "same"}),
    ((1, 2, 5, 5), (3, 2, 3, 3), {"padding": "same", "dilation": (2, 1)}),
    ((1, 2, 5, 5), (3, 2, 3, 3), {"padding": "valid"}),
    ((1, 6, 4, 4), (6, 1, 3, 3), {"groups": 6, "padding": 1}),
    ((1, 2, 7, 7), (2, 2, 3, 3), {"stride": 3}),
    ((1, 2, 7, 6), (2, 2, 1, 1), {}),
    ((0, 2, 5, 5), (3, 2, 3, 3), {}),
]


def _explicit_padding(kwargs, kernel):
    padding = kwargs.get("padding", 0)
    dilation = _pairs(kwargs.get("dilation", 1))
    if padding == "valid":
        return ((0, 0), (0, 0))
    if padding == "same":
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return tuple((t // 2, t - t // 2) for t in total)
    return tuple((p, p) for p in _pairs(padding))


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}{c[1]}{c[2]}")
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv2d_matches_direct_reference(rng, case, with_bias):
    x_shape, w_shape, kwargs = case
    x, w, b = _random(rng, *x_shape), _random(rng, *w_shape), _random(rng, w_shape[0])
    out = F.conv2d(cr.tensor(x), cr.tensor(w), cr.tensor(b) if with_bias else None, **kwargs)
    expected = _conv_reference(x, w, b if with_bias else None,
                               _pairs(kwargs.get("stride", 1)),
                               _explicit_padding(kwargs, w_shape[2:]),
                               _pairs(kwargs.get("dilation", 1)), kwargs.get("groups", 1))
    assert out.is_contiguous()
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-12)


@pytest.mark.parametrize("case", [c for c in CONV_CASES if c[0][0]], ids=lambda c: str(c[2]))
def test_conv2d_gradients(rng, case):
    x_shape, w_shape, kwargs = case
    small = (1,) + x_shape[1:]
    inputs = (_leaf(_random(rng, *small)), _leaf(_random(rng, *w_shape)),
              _leaf(_random(rng, w_shape[0])))
    fn = lambda x, w, b: F.conv2d(x, w, b, **kwargs)  # noqa: E731
    assert gradcheck(fn, inputs, fast_mode=True)
    assert gradgradcheck(fn, inputs, fast_mode=True)


def test_conv2d_complex_gradients(rng):
    inputs = (_leaf(_random(rng, 1, 2, 4, 4, dtype=np.complex128)),
              _leaf(_random(rng, 2, 2, 3, 3, dtype=np.complex128)),
              _leaf(_random(rng, 2, dtype=np.complex128)))
    fn = lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1)  # noqa: E731
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs, fast_mode=True)


def test_conv2d_unbatched_input(rng):
    x, w = _random(rng, 2, 5, 5), _random(rng, 3, 2, 3, 3)
    out = F.conv2d(cr.tensor(x), cr.tensor(w), padding=1)
    assert out.shape == (3, 5, 5)
    expected = _conv_reference(x[None], w, None, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)[0]
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-12)


def test_conv2d_grad_fn_and_absent_bias_edge(rng):
    x, w = _leaf(_random(rng, 1, 2, 4, 4)), _leaf(_random(rng, 3, 2, 3, 3))
    out = F.conv2d(x, w)
    assert out.grad_fn.name() == "ConvolutionBackward0"
    assert len(out.grad_fn.next_functions) == 3
    assert out.grad_fn.next_functions[2][0] is None


def test_conv2d_bias_gradient_sums_over_batch_and_pixels(rng):
    x, w, b = _random(rng, 2, 2, 5, 5), _random(rng, 3, 2, 3, 3), _leaf(np.zeros(3))
    out = F.conv2d(cr.tensor(x), cr.tensor(w), b)
    g = _random(rng, *out.shape)
    out.backward(cr.tensor(g))
    np.testing.assert_allclose(b.grad.numpy(), g.sum(axis=(0, 2, 3)))


def test_conv2d_float32_stays_float32(rng):
    x = cr.tensor(_random(rng, 2, 3, 8, 8, dtype=np.float32), requires_grad=True)
    w = cr.tensor(_random(rng, 4, 3, 3, 3, dtype=np.float32), requires_grad=True)
    out = F.conv2d(x, w, padding=1)
    out.sum().backward()
    assert out.dtype == x.grad.dtype == w.grad.dtype == cr.float32


def test_conv2d_same_padding_with_even_kernel_warns_like_the_reference(rng):
    with pytest.warns(UserWarning, match="padding='same' with even kernel lengths"):
        out = F.conv2d(cr.zeros(1, 1, 5, 5), cr.zeros(1, 1, 2, 2), padding="same")
    assert out.shape == (1, 1, 5, 5)


@pytest.mark.parametrize("args, kwargs, message", [
    (((1, 2, 5, 5), (3, 1, 3, 3)), {}, r"Given groups=1, weight of size \[3, 1, 3, 3\], "
     r"expected input\[1, 2, 5, 5\] to have 1 channels, but got 2 channels instead"),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"groups": 2}, "Given groups=2, expected weight to be "
     "divisible by 2 at dimension 0"),
    (((1, 2, 2, 2), (3, 2, 3, 3)), {}, r"Calculated padded input size per channel: \(2 x 2\). "
     r"Kernel size: \(3 x 3\). Kernel size can't be greater than actual input size"),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"stride": 2, "padding": "same"},
     "padding='same' is not supported for strided convolutions"),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"padding": "foo"}, "Invalid padding string: 'foo'"),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"padding": -1}, "negative padding is not supported"),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"stride": 0}, "non-positive stride is not supported"),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"stride": (1, 2, 3)}, "expected stride to be a single "
     r"integer value or a list of 2 values to match the convolution dimensions, but got "
     r"stride=\[1, 2, 3\]"),
    (((2, 5, 5, 5, 5), (3, 2, 3, 3)), {}, r"Expected 3D \(unbatched\) or 4D \(batched\) input "
     r"to conv2d, but got input of size: \[2, 5, 5, 5, 5\]"),
    (((1, 2, 5, 5), (3, 2, 3)), {}, r"expected stride to be a single integer value or a list "
     r"of 1 values to match the convolution dimensions, but got stride=\[1, 1\]"),
    (((1, 2, 5, 5), (3, 2)), {}, r"weight should have at least three dimensions"),
])
def test_conv2d_errors(args, kwargs, message):
    x, w = (cr.zeros(*s) for s in args)
    with pytest.raises(RuntimeError, match=message):
        F.conv2d(x, w, **kwargs)


def test_conv2d_bias_and_dtype_errors():
    with pytest.raises(RuntimeError, match=r"Given weight of size \[3, 2, 3, 3\], expected bias "
                                           r"to be 1-dimensional with 3 elements, but got bias "
                                           r"of size \[4\] instead"):
        F.conv2d(cr.zeros(1, 2, 5, 5), cr.zeros(3, 2, 3, 3), cr.zeros(4))
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        F.conv2d(cr.zeros(1, 2, 5, 5, dtype=cr.float64), cr.zeros(3, 2, 3, 3))


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}{c[1]}{c[2]}")
def test_conv2d_parity_with_torch(torch, rng, case):
    x_shape, w_shape, kwargs = case
    arrays = [_random(rng, *x_shape), _random(rng, *w_shape), _random(rng, w_shape[0])]
    ours = [_leaf(a) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = F.conv2d(*ours, **kwargs)
        expected = torch.nn.functional.conv2d(*theirs, **kwargs)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-10)
    g = _random(rng, *out.shape)
    out.backward(cr.tensor(g))
    expected.backward(torch.tensor(g))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-10)


# --- activations -----------------------------------------------------------------------------
def _gelu(x):
    return np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.ravel()]).reshape(
        x.shape)


ACTIVATIONS = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "gelu": (F.gelu, _gelu),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                   * (x + 0.044715 * x ** 3)))),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "softplus": (F.softplus, lambda x: np.log1p(np.exp(x))),
    "softplus_beta": (lambda x: F.softplus(x, beta=2.0, threshold=3.0),
                      lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2)),
    "sigmoid": (F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (F.tanh, np.tanh),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values_and_gradients(rng, name):
    fn, reference = ACTIVATIONS[name]
    x = _random(rng, 3, 4) * 2
    np.testing.assert_allclose(fn(cr.tensor(x)).numpy(), reference(x), rtol=1e-12, atol=1e-12)
    leaf = _leaf(x)
    assert gradcheck(fn, (leaf,))
    assert gradgradcheck(fn, (leaf,))


def test_activation_grad_fn_names(rng):
    x = _leaf(_random(rng, 3))
    assert F.gelu(x).grad_fn.name() == "GeluBackward0"
    assert F.silu(x).grad_fn.name() == "SiluBackward0"
    assert F.softplus(x).grad_fn.name() == "SoftplusBackward0"
    assert F.relu(x).grad_fn.name() == "ReluBackward0"


@pytest.fixture
def method_slot():
    """set_method_accelerator, with whatever was installed put back afterwards."""
    previous = _method_slot.set_method_accelerator(None)
    yield _method_slot.set_method_accelerator
    _method_slot.set_method_accelerator(previous)


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh"])
def test_activations_call_the_tensor_method(method_slot, name):
    # Note [functional methods]: an accelerated method is what F.<name> runs.
    calls = []

    def make(kind, op, attrs, fn):
        def method(*args):
            calls.append(op.name)
            return fn(*args)
        return method
    method_slot(make)
    x = cr.tensor([-1.0, 2.0], requires_grad=True)
    out = F.__dict__[name](x)
    assert calls == [name] and out.grad_fn.name() == cr.__dict__[name](x).grad_fn.name()
    with pytest.raises(AttributeError, match="'list' object has no attribute '_data'"):
        F.__dict__[name]([1.0])                      # what the Python function raises
    method_slot(None)
    assert F.__dict__[name](cr.tensor([1, 2])).dtype == cr.__dict__[name](cr.tensor([1, 2])).dtype


def test_activations_are_stable_at_extremes():
    x = cr.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0], dtype=cr.float64)
    assert np.isfinite(F.softplus(x).numpy()).all()
    assert np.isfinite(F.silu(x).numpy()).all()
    np.testing.assert_allclose(F.softplus(x).numpy()[[0, 4]], [0.0, 1000.0])
    np.testing.assert_allclose(F.gelu(x).numpy()[[0, 4]], [0.0, 1000.0])


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
        F.gelu(cr.zeros(2), approximate="x")


def test_inplace_relu_and_silu_write_into_their_input():
    x = cr.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x
    assert x.tolist() == [0.0, 2.0]
    y = cr.tensor([0.0, 1.0])
    assert F.silu(y, inplace=True) is y
    np.testing.assert_allclose(y.numpy(), [0.0, 1 / (1 + math.exp(-1))], rtol=1e-6)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        F.relu(cr.zeros(2, requires_grad=True), inplace=True)


def test_softmax_implicit_dim_warns_and_picks_the_reference_dim():
    x = cr.tensor(np.arange(24.0).reshape(2, 3, 4))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been "
                                         "deprecated"):
        out = F.softmax(x)
    np.testing.assert_allclose(out.numpy().sum(axis=0), np.ones((3, 4)))
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        out = F.log_softmax(cr.zeros(2, 3))
    np.testing.assert_allclose(np.exp(out.numpy()).sum(axis=1), [1.0, 1.0], rtol=1e-6)


def test_softmax_dtype_argument_casts_first():
    out = F.softmax(cr.zeros(2, 3), dim=1, dtype=cr.float64)
    assert out.dtype == cr.float64
    assert F.log_softmax(cr.zeros(2, 3), 1, dtype=cr.float64).dtype == cr.float64


@pytest.mark.parametrize("name", ["relu", "gelu", "silu", "softplus", "sigmoid", "tanh"])
def test_activation_parity_with_torch(torch, rng, name):
    x = _random(rng, 4, 5) * 3
    ours = F.__dict__[name](cr.tensor(x)).numpy()
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# --- losses -----------------------------------------------------------------------------------
def _log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _nll_reference(logp, target, weight, ignore_index, reduction):
    """Reference on (N, C) input by a loop."""
    n, c = logp.shape
    weight = np.ones(c) if weight is None else weight
    losses, weights = np.zeros(n), np.zeros(n)
    for i, t in enumerate(target):
        if t != ignore_index:
            weights[i] = weight[t]
            losses[i] = -weight[t] * logp[i, t]
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.sum() / weights.sum()


TARGET = np.array([0, 3, 1, 1, 2])
WEIGHT = np.array([0.5, 2.0, 1.0, 1.5])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weight", [None, WEIGHT], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_nll_loss_values(rng, reduction, weight, ignore_index):
    logp = _random(rng, 5, 4)
    out = F.nll_loss(cr.tensor(logp), cr.tensor(TARGET),
                     None if weight is None else cr.tensor(weight),
                     ignore_index=ignore_index, reduction=reduction)
    expected = _nll_reference(logp, TARGET, weight, ignore_index, reduction)
    np.testing.assert_allclose(out.numpy(), expected)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_nll_loss_gradients(rng, reduction, ignore_index):
    x = _leaf(_random(rng, 5, 4))
    fn = lambda x: F.nll_loss(x, cr.tensor(TARGET), cr.tensor(WEIGHT),  # noqa: E731
                              ignore_index=ignore_index, reduction=reduction)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))
    assert fn(x).grad_fn.name() == "NllLossBackward0"


def test_nll_loss_spatial_and_unbatched(rng):
    x = _random(rng, 2, 4, 3, 2)
    target = rng.integers(0, 4, (2, 3, 2))
    out = F.nll_loss(cr.tensor(x), cr.tensor(target), reduction="none")
    expected = -np.take_along_axis(x, target[:, None], axis=1)[:, 0]
    np.testing.assert_allclose(out.numpy(), expected)
    single = F.nll_loss(cr.tensor(x[0, :, 0, 0]), cr.tensor(target[0, 0, 0]), reduction="none")
    assert single.shape == ()
    np.testing.assert_allclose(single.item(), -x[0, target[0, 0, 0], 0, 0])


def test_nll_loss_everything_ignored_gives_nan_mean_and_zero_sum():
    x = cr.zeros(3, 4, requires_grad=True)
    target = cr.tensor([-100, -100, -100])
    assert math.isnan(F.nll_loss(x, target).item())
    total = F.nll_loss(x, target, reduction="sum")
    assert total.item() == 0.0
    total.backward()
    assert not x.grad.numpy().any()


@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 2)], ids=["2d", "spatial"])
@pytest.mark.parametrize("loss_fn", [F.nll_loss, F.cross_entropy], ids=["nll", "ce"])
def test_everything_ignored_mean_gives_zero_gradients_without_warnings(shape, loss_fn):
    # The reference skips ignored entries in the backward: zeros, not 0 * (g / 0) = nan.
    x = cr.zeros(*shape, requires_grad=True)
    target = cr.full(shape[:1] + shape[2:], 2, dtype=cr.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = loss_fn(x, target, ignore_index=2)
        loss.backward()
    assert math.isnan(loss.item())
    assert not x.grad.numpy().any() and not np.isnan(x.grad.numpy()).any()


def test_nll_loss_ignored_entries_add_nothing_even_inf():
    # An ignored row's input never enters the loss (the reference skips it): an inf
    # there does not make the loss nan (0 * inf), and its gradient is zero.
    x = cr.tensor([[np.inf, 0.5, 1.0], [0.25, 0.75, 2.0]], requires_grad=True)
    target = cr.tensor([-100, 2])
    for reduction, expected in (("mean", -2.0), ("sum", -2.0)):
        loss = F.nll_loss(x, target, reduction=reduction)
        assert loss.item() == expected
    per_row = F.nll_loss(x, target, reduction="none")
    assert per_row.tolist() == [0.0, -2.0]
    per_row.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, -1.0]]


def test_zero_class_weight_with_zero_total_stays_nan_like_the_reference():
    # A class weight of 0 is not an ignored entry: 0 * (g / 0) is nan there.
    x = cr.zeros(2, 3, requires_grad=True)
    F.nll_loss(x, cr.tensor([1, 1]), weight=cr.tensor([1.0, 0.0, 1.0])).backward()
    assert np.isnan(x.grad.numpy()[:, 1]).all() and not x.grad.numpy()[:, [0, 2]].any()


@pytest.mark.parametrize("shape", [(0, 4), (0, 4, 2)], ids=["2d", "spatial"])
def test_nll_loss_mean_over_nothing_is_nan_without_warnings(shape):
    # 0 / 0 in forward and backward: nan and zero gradients, no NumPy warnings.
    x = cr.zeros(*shape, requires_grad=True)
    target = cr.zeros(shape[:1] + shape[2:], dtype=cr.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.nll_loss(x, target)
        loss.backward()
    assert math.isnan(loss.item()) and x.grad.shape == shape


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weight", [None, WEIGHT], ids=["unweighted", "weighted"])
def test_nll_loss_spatial_gradients(rng, reduction, weight):
    # (N, C, d): the put_along_axis branch of the backward, a 0-d or an (N, d) value.
    x = _leaf(_random(rng, 3, 4, 2))
    target = cr.tensor(np.array([[0, 3], [1, 1], [2, 0]]))
    w = None if weight is None else cr.tensor(weight)
    fn = lambda x: F.nll_loss(x, target, w, reduction=reduction)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_nll_loss_accepts_byte_targets(rng):
    x = _random(rng, 3, 4)
    out = F.nll_loss(cr.tensor(x), cr.tensor(np.array([0, 1, 3], np.uint8)), reduction="sum")
    np.testing.assert_allclose(out.item(), -(x[0, 0] + x[1, 1] + x[2, 3]))


@pytest.mark.parametrize("x_shape, target, kwargs, error, message", [
    ((3, 4), [0, 1, 5], {}, IndexError, "Target 5 is out of bounds."),
    ((3, 4), [0, 1, -1], {}, IndexError, "Target -1 is out of bounds."),
    ((3, 4), [0, 1], {}, ValueError, r"Expected input batch_size \(3\) to match target "
                                     r"batch_size \(2\)."),
    ((3, 4), [[0], [1], [2]], {}, RuntimeError, "0D or 1D target tensor expected, "
                                                "multi-target not supported"),
    ((3, 4, 5), [0, 1, 2], {}, RuntimeError, r"Expected target size \[3, 5\], got \[3\]"),
    ((4,), [2, 1], {}, ValueError, "For 1D input, 1D target must have size 1, but got target "
                                   "size: 2"),
    ((3, 4), [0, 1, 2], {"reduction": "foo"}, ValueError, "foo is not a valid value for "
                                                          "reduction"),
    ((3, 4), [0, 1, 2], {"weight": cr.ones(3, dtype=cr.float32)}, RuntimeError,
     r"weight tensor should be defined either for all 4 classes or no classes but got weight "
     r"tensor of shape: \[3\]"),
])
def test_nll_loss_errors(x_shape, target, kwargs, error, message):
    with pytest.raises(error, match=message):
        F.nll_loss(cr.zeros(*x_shape), cr.tensor(target), **kwargs)


def test_nll_loss_dtype_errors():
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got "
                                           "Float"):
        F.nll_loss(cr.zeros(3, 4), cr.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got "
                                           "Int"):
        F.nll_loss(cr.zeros(3, 4), cr.tensor([0, 1, 2], dtype=cr.int32))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument "
                                           "'weight'"):
        F.nll_loss(cr.zeros(3, 4), cr.tensor([0, 1, 2]), weight=cr.ones(4, requires_grad=True))


def _packed_by_nll_loss(log_probs, target, **kwargs):
    """(shape, dtype) of what saved-tensor hooks see the nll_loss node save, and the loss."""
    seen = []

    def pack(t):
        seen.append((tuple(t.shape), t.dtype))
        return t
    with cr.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = F.nll_loss(log_probs, target, **kwargs)
    return seen, loss


def test_nll_loss_saves_self_target_weight_and_total_weight_through_hooks():
    # The reference saves those four: hooks pack them and backward unpacks them.
    x = cr.tensor([[-1.0, -2.0, -3.0], [-2.0, -1.0, -0.5]], requires_grad=True)
    target, weight = cr.tensor([2, 0]), cr.tensor([1.0, 2.0, 0.5])
    seen, loss = _packed_by_nll_loss(x, target, weight=weight)
    assert seen == [((2, 3), cr.float32), ((2,), cr.int64), ((3,), cr.float32),
                    ((), cr.float32)]
    unpacked = []
    with cr.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: unpacked.append(1) or t):
        loss = F.nll_loss(x, target, weight=weight)
    loss.backward()
    assert len(unpacked) == 4
    assert x.grad.flatten().tolist() == pytest.approx([0.0, 0.0, -1 / 3, -2 / 3, 0.0, 0.0])
    seen, _ = _packed_by_nll_loss(x, target)           # no weight: nothing packed for it
    assert [s for s, _ in seen] == [(2, 3), (2,), ()]


def test_nll_loss_saved_attributes_read_what_the_reference_saved():
    x = cr.tensor([[-1.0, -2.0], [-2.0, -1.0], [-0.5, -1.5]], requires_grad=True)
    node = F.nll_loss(x, cr.tensor([1, -100, 0]), weight=cr.tensor([3.0, 2.0]),
                      reduction="sum").grad_fn
    assert node._saved_target.tolist() == [1, -100, 0]       # ignored entries as given
    assert node._saved_weight.tolist() == [3.0, 2.0]
    assert node._saved_total_weight.item() == 5.0             # also for a sum
    assert node._saved_self is not None and node._saved_self.shape == (3, 2)
    none = F.nll_loss(x, cr.tensor([1, 0, 0]), reduction="none").grad_fn
    assert none._saved_weight is None and none._saved_total_weight.item() == 0.0


def _first_names(node, count):
    """The names of the first ``count`` nodes from ``node`` along each first edge."""
    names = []
    while node is not None and len(names) < count:
        names.append(node.name().rsplit("::", 1)[-1])
        node = next((f for f, _ in node.next_functions if f is not None), None)
    return names


@pytest.mark.parametrize("shape, reduction, names, saved_shape", [
    ((3,), "none", ["NllLossBackward0", "AccumulateGrad"], (3,)),
    ((2, 3), "mean", ["NllLossBackward0", "AccumulateGrad"], (2, 3)),
    ((2, 3, 2, 2), "none", ["NllLoss2DBackward0", "AccumulateGrad"], (2, 3, 2, 2)),
    ((2, 3, 4), "mean", ["NllLoss2DBackward0", "ViewBackward0", "AccumulateGrad"], (2, 3, 1, 4)),
    ((2, 3, 4), "none", ["ViewBackward0", "NllLoss2DBackward0", "ViewBackward0"], (2, 3, 1, 4)),
    ((2, 3, 2, 2, 2), "sum", ["NllLoss2DBackward0", "ViewBackward0"], (2, 3, 1, 8)),
])
def test_nll_loss_records_the_reference_kernel_for_each_rank(shape, reduction, names,
                                                              saved_shape):
    # 4-d inputs run nll_loss2d, other K-d ones its (N, C, 1, rest) view; (C,) runs as is.
    x = cr.randn(*shape, dtype=cr.float64, requires_grad=True)
    target = cr.zeros(*(shape[:1] + shape[2:] if len(shape) > 1 else ()), dtype=cr.int64)
    loss = F.nll_loss(x, target, reduction=reduction)
    assert _first_names(loss.grad_fn, len(names)) == names
    node = loss.grad_fn if names[0] != "ViewBackward0" else loss.grad_fn.next_functions[0][0]
    assert tuple(node._saved_self.shape) == saved_shape
    loss.sum().backward()
    expected = np.zeros(shape)
    expected[(slice(None), 0) if len(shape) > 1 else 0] = -1.0
    divisor = np.prod(target.shape) if reduction == "mean" else 1
    assert np.allclose(x.grad.numpy(), expected / divisor)


def test_label_smoothing_records_the_reference_graph():
    # (1 - s) * nll + s / C * smooth with mul.Scalar, ignored elements masked_fill'ed to 0
    # (hooks see the mask) and a mean over the count of the others.
    x = cr.tensor([[0.1, 0.5, -0.3], [1.0, -1.0, 0.0]], requires_grad=True)
    target = cr.tensor([2, 1])
    seen = []
    with cr.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t.dtype) or t, lambda t: t):
        loss = F.cross_entropy(x, target, label_smoothing=0.3, ignore_index=1)
    nll_part, smooth_part = (f for f, _ in loss.grad_fn.next_functions)
    assert (loss.grad_fn.name(), nll_part.name(), smooth_part.name()) == \
        ("AddBackward0", "MulBackward1", "MulBackward1")
    assert _first_names(smooth_part, 5)[1:] == ["DivBackward0", "SumBackward0",
                                                "MaskedFillBackward0", "NegBackward0"]
    assert cr.bool in seen
    logp = np.log(np.exp([0.1, 0.5, -0.3]) / np.exp([0.1, 0.5, -0.3]).sum())
    assert loss.item() == pytest.approx(-0.7 * logp[2] - 0.1 * logp.sum(), rel=1e-6)


@pytest.mark.parametrize("reduction, names", [
    ("mean", ["DivBackward1", "NegBackward0", "SumBackward0", "MulBackward0"]),
    ("sum", ["NegBackward0", "SumBackward0", "MulBackward0"]),
    ("none", ["NegBackward0", "SumBackward1", "MulBackward0"]),
])
def test_soft_target_cross_entropy_sums_everything_then_negates(reduction, names):
    # The reference: -(sum of all terms) for a sum or mean, per element for "none".
    x = cr.tensor([[0.2, -0.4, 1.0], [0.0, 0.3, -0.1]], requires_grad=True)
    probs = cr.tensor([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])
    loss = F.cross_entropy(x, probs, reduction=reduction)
    assert _first_names(loss.grad_fn, len(names)) == names
    logp = np.log(np.exp(x.detach().numpy()) / np.exp(x.detach().numpy()).sum(1, keepdims=True))
    per_row = -(logp * probs.numpy()).sum(1)
    want = {"mean": per_row.mean(), "sum": per_row.sum(), "none": per_row}[reduction]
    assert np.allclose(loss.detach().numpy(), want)


def test_absent_optional_inputs_read_as_none():
    # An optional tensor that was not given reads as None, like the reference's
    # undefined tensor (Note [absent tensor input]).
    x = cr.ones(2, 3, requires_grad=True)
    node = F.layer_norm(x, (3,)).grad_fn
    assert node._saved_weight is None and node._saved_bias is None
    node = F.binary_cross_entropy_with_logits(x, cr.ones(2, 3)).grad_fn
    assert node._saved_weight is None and node._saved_pos_weight is None


def test_legacy_reduction_arguments_warn_and_map():
    x, t = cr.tensor([[-1.0, -2.0], [-3.0, -4.0]]), cr.tensor([0, 1])
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, "
                                         "please use reduction='sum' instead."):
        assert F.nll_loss(x, t, size_average=False).item() == 5.0
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert F.nll_loss(x, t, reduce=False).tolist() == [1.0, 4.0]
    with pytest.warns(UserWarning, match="reduction='mean'"):
        assert F.mse_loss(x, x * 0, size_average=True).item() == 7.5


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weight", [None, WEIGHT], ids=["unweighted", "weighted"])
def test_cross_entropy_class_indices(rng, reduction, label_smoothing, weight):
    x = _random(rng, 5, 4)
    out = F.cross_entropy(cr.tensor(x), cr.tensor(TARGET),
                          None if weight is None else cr.tensor(weight), ignore_index=1,
                          reduction=reduction, label_smoothing=label_smoothing)
    logp = _log_softmax(x, 1)
    nll = _nll_reference(logp, TARGET, weight, 1, reduction)
    w = np.ones(4) if weight is None else weight
    keep = TARGET != 1
    smooth = -(logp * w).sum(1) * keep
    if reduction == "sum":
        smooth = smooth.sum()
    elif reduction == "mean":
        smooth = smooth.sum() / (keep.sum() if weight is None else w[TARGET[keep]].sum())
    expected = (1 - label_smoothing) * nll + label_smoothing / 4 * smooth
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy_class_probabilities(rng, reduction, label_smoothing):
    x, p = _random(rng, 5, 4), rng.dirichlet(np.ones(4), 5)
    tx, tp = _leaf(x), _leaf(p)
    out = F.cross_entropy(tx, tp, cr.tensor(WEIGHT), reduction=reduction,
                          label_smoothing=label_smoothing)
    q = p * (1 - label_smoothing) + label_smoothing / 4
    losses = -(_log_softmax(x, 1) * q * WEIGHT).sum(1)
    expected = {"none": losses, "sum": losses.sum(), "mean": losses.sum() / 5}[reduction]
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    fn = lambda x, p: F.cross_entropy(x, p, reduction=reduction,  # noqa: E731
                                      label_smoothing=label_smoothing)
    assert gradcheck(fn, (tx, tp))
    assert gradgradcheck(fn, (tx, tp))


def test_cross_entropy_probabilities_mean_records_a_division_by_a_number(rng):
    # the reference divides by the number of samples with div.Scalar: DivBackward1
    x, p = _leaf(_random(rng, 5, 4)), cr.tensor(rng.dirichlet(np.ones(4), 5))
    assert F.cross_entropy(x, p).grad_fn.name() == "DivBackward1"
    assert F.cross_entropy(x, p, reduction="sum").grad_fn.name() == "NegBackward0"   # -(sum)
    assert cr.div(x, 2, rounding_mode="floor").grad_fn.name() == "DivBackward2"


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_gradients(rng, label_smoothing):
    x = _leaf(_random(rng, 2, 4, 3))
    target = cr.tensor(rng.integers(0, 4, (2, 3)))
    fn = lambda x: F.cross_entropy(x, target, cr.tensor(WEIGHT),  # noqa: E731
                                   label_smoothing=label_smoothing)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_cross_entropy_gradient_is_softmax_minus_one_hot(rng):
    x = _leaf(_random(rng, 5, 4))
    F.cross_entropy(x, cr.tensor(TARGET), reduction="sum").backward()
    expected = np.exp(_log_softmax(x.detach().numpy(), 1))
    expected[np.arange(5), TARGET] -= 1
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-10)


def test_cross_entropy_errors():
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. "
                                           "Got: 1.5"):
        F.cross_entropy(cr.zeros(3, 4), cr.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        F.cross_entropy(cr.zeros(3, 4), cr.zeros(3, 5))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte"):
        F.cross_entropy(cr.zeros(3, 4), cr.tensor([0.0, 1.0, 2.0]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(rng, reduction):
    a, b = _random(rng, 3, 4), _random(rng, 3, 4)
    ta, tb = _leaf(a), _leaf(b)
    out = F.mse_loss(ta, tb, reduction=reduction)
    sq = (a - b) ** 2
    expected = {"none": sq, "sum": sq.sum(), "mean": sq.mean()}[reduction]
    np.testing.assert_allclose(out.detach().numpy(), expected)
    assert out.grad_fn.name() == "MseLossBackward0"
    fn = lambda a, b: F.mse_loss(a, b, reduction=reduction)  # noqa: E731
    assert gradcheck(fn, (ta, tb))
    assert gradgradcheck(fn, (ta, tb))


def test_mse_loss_broadcasts_with_the_reference_warning(rng):
    a, b = _leaf(_random(rng, 3, 4)), _leaf(_random(rng, 4))
    with pytest.warns(UserWarning, match="Using a target size .* that is different to the "
                                         "input size"):
        out = F.mse_loss(a, b)
    np.testing.assert_allclose(out.item(), ((a.detach().numpy() - b.detach().numpy()) ** 2)
                               .mean())
    out.backward()
    assert b.grad.shape == (4,)
    with pytest.raises(RuntimeError, match="The size of tensor a \\(3\\) must match the size of "
                                           "tensor b \\(4\\)"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        F.mse_loss(cr.zeros(3), cr.zeros(4))


def test_mse_loss_weight(rng):
    a, b, w = _random(rng, 3, 4), _random(rng, 3, 4), np.abs(_random(rng, 3, 4))
    out = F.mse_loss(cr.tensor(a), cr.tensor(b), weight=cr.tensor(w))
    np.testing.assert_allclose(out.item(), (w * (a - b) ** 2).sum() / w.sum())
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        F.mse_loss(cr.tensor(a), cr.tensor(b), weight=cr.ones(4))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("shape", [(5, 4), (2, 4, 3), (4,)], ids=str)
def test_loss_parity_with_torch(torch, rng, reduction, label_smoothing, shape):
    x = _random(rng, *shape)
    target = rng.integers(0, 4, shape[:1] + shape[2:] if len(shape) > 1 else ())
    kwargs = dict(reduction=reduction, label_smoothing=label_smoothing, ignore_index=2)
    ours_x, theirs_x = _leaf(x), torch.tensor(x, requires_grad=True)
    ours = F.cross_entropy(ours_x, cr.tensor(target), cr.tensor(WEIGHT), **kwargs)
    theirs = torch.nn.functional.cross_entropy(theirs_x, torch.tensor(target),
                                               torch.tensor(WEIGHT), **kwargs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               equal_nan=True)
    g = _random(rng, *ours.shape)
    ours.backward(cr.tensor(g))
    theirs.backward(torch.tensor(g))
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-10,
                               atol=1e-12, equal_nan=True)


# --- putting it together -------------------------------------------------------------------------
def test_small_cnn_training_step_reduces_the_loss(rng):
    x = cr.tensor(_random(rng, 8, 1, 6, 6, dtype=np.float32))
    y = cr.tensor(rng.integers(0, 3, 8))
    w1 = cr.tensor(_random(rng, 4, 1, 3, 3, dtype=np.float32) * 0.5, requires_grad=True)
    b1 = cr.zeros(4, requires_grad=True)
    w2 = cr.tensor(_random(rng, 3, 36, dtype=np.float32) * 0.1, requires_grad=True)
    params = [w1, b1, w2]

    def loss_fn():
        h = F.gelu(F.conv2d(x, w1, b1, padding=1, stride=2))
        return F.cross_entropy(F.linear(h.reshape(8, 36), w2), y)

    first = loss_fn()
    for _ in range(20):
        loss = loss_fn()
        loss.backward()
        with cr.no_grad():
            for p in params:
                p.sub_(p.grad * 0.5)
                p.grad = None
    assert loss_fn().item() < first.item()


# --- JVPs of every nn-family table op (finite differences, both namespaces) -------------------
def _nn_family_ops():
    from chainrule._ops._registry import OPS, NOT_IMPLEMENTED
    return {name: op for name, op in OPS.items()
            if (getattr(op.forward, "__module__", None) or "").endswith("_ops.nn")
            and op.jvp is not None and op.jvp != NOT_IMPLEMENTED}


def _recorded_forwards(monkeypatch, ops):
    calls, originals = [], {}
    for op in ops.values():
        originals[op.name] = op.forward

        def forward(*arrays, _op=op, _f=op.forward, **attrs):
            calls.append((_op, [np.array(a, copy=True) for a in arrays], dict(attrs)))
            return _f(*arrays, **attrs)
        monkeypatch.setattr(op, "forward", forward)
    return calls, originals


def _numeric_jvp(op, arrays, attrs, tangents, eps=1e-6):
    def run(sign):
        moved = [a + sign * eps * t if t is not None else a for a, t in zip(arrays, tangents)]
        return np.asarray(op.forward(*moved, **attrs))
    return (run(1) - run(-1)) / (2 * eps)


def _check_nn_jvp(op, arrays, attrs, rng):
    from chainrule._ops import ARRAY_NS, TENSOR_NS
    from chainrule._ops._registry import NONDIFF
    tangents = tuple(rng.standard_normal(a.shape) if a.dtype == np.float64 and
                     f is not NONDIFF else None for a, f in zip(arrays, op.vjps))
    if all(t is None for t in tangents):
        return False
    result = np.asarray(op.forward(*arrays, **attrs))
    env = dict(attrs, result=result)
    env.update(zip(op.inputs, arrays))
    env.update((n + "_shape", a.shape) for n, a in zip(op.inputs, arrays))
    numeric = _numeric_jvp(op, arrays, attrs, tangents)
    # -inf padding (max pooling) and empty means (nan) have no derivative to compare
    finite = np.isfinite(result)
    wrap = cr.Tensor._wrap
    tensor_env = {k: wrap(v) if isinstance(v, np.ndarray) and (k in op.inputs or k == "result")
                  else v for k, v in env.items()}
    for ns, e, ts in ((ARRAY_NS, env, tangents),
                      (TENSOR_NS, tensor_env, tuple(None if t is None else wrap(t)
                                                    for t in tangents))):
        out = op.jvp(ns, ts, e)
        out = out._data if isinstance(out, cr.Tensor) else np.asarray(out)
        out = np.where(finite, np.broadcast_to(out, numeric.shape), 0)
        np.testing.assert_allclose(out, np.where(finite, numeric, 0), atol=1e-6,
                                   rtol=1e-5, err_msg=f"{op.name} jvp ({type(ns).__name__})")
    return True


def test_every_nn_family_op_has_a_checked_jvp(monkeypatch):
    from samples import nn as nn_samples
    from samples._inputs import make_inputs
    ops = _nn_family_ops()
    calls, originals = _recorded_forwards(monkeypatch, ops)
    for sample in nn_samples.SAMPLES:
        if not sample.complex:
            sample.call(*make_inputs(sample))
    for op in ops.values():
        op.forward = originals[op.name]
    seen = set()
    rng = np.random.default_rng(0)
    for op, arrays, attrs in calls:
        if _check_nn_jvp(op, arrays, attrs, rng):
            seen.add(op.name)
    missing = set(ops) - seen
    assert not missing, f"nn-family ops whose JVP no sample reached: {sorted(missing)}"


# --- the pointwise activations ---------------------------------------------------------------
_POINTWISE = ["leaky_relu", "elu", "selu", "celu", "hardtanh", "relu6", "hardsigmoid",
              "hardswish", "mish", "softsign", "tanhshrink", "softshrink", "hardshrink",
              "logsigmoid"]


@pytest.mark.parametrize("name", _POINTWISE + ["threshold", "softmin", "glu", "prelu", "rrelu"])
def test_activation_signatures_match_torch(torch, name):
    theirs = getattr(torch.nn.functional, name)
    try:
        expected = [(p.name, p.default) for p in inspect.signature(theirs).parameters.values()]
    except (TypeError, ValueError):             # a C builtin: compare with its docstring
        return
    ours = [(p.name, p.default) for p in inspect.signature(getattr(F, name)).parameters.values()]
    assert ours == expected


@pytest.mark.parametrize("name", _POINTWISE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_values_and_dtypes_match_torch(torch, rng, name, dtype):
    x = (rng.standard_normal((5, 6)) * 4).astype(dtype)
    ours = getattr(F, name)(cr.tensor(x))
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x))
    assert ours.dtype == cr.float32 if dtype == np.float32 else cr.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "selu", "celu", "hardtanh", "relu6",
                                  "hardsigmoid", "hardswish", "mish"])
def test_activation_inplace_writes_into_the_input(rng, name):
    x = rng.standard_normal(6)
    leaf = cr.tensor(x, requires_grad=True)
    y = leaf * 1.0
    out = getattr(F, name)(y, inplace=True)
    assert out is y and y._version == 1
    expected = getattr(F, name)(cr.tensor(x))
    np.testing.assert_allclose(y.detach().numpy(), expected.numpy())
    y.sum().backward()
    other = cr.tensor(x, requires_grad=True)
    getattr(F, name)(other * 1.0).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), other.grad.numpy())


def test_inplace_activation_on_a_leaf_raises():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        F.elu_(cr.zeros(2, requires_grad=True))


def test_activations_refuse_integer_input_like_the_reference():
    with pytest.raises(NotImplementedError, match="\"elu_cpu\" not implemented for 'Long'"):
        F.elu(cr.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="\"leaky_relu_cpu\" not implemented"):
        F.leaky_relu(cr.tensor([1, 2]))


def test_activation_argument_errors():
    x = cr.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 3.40282e\+38\] for "
                                           "input dtype Float, but found -1"):
        F.softshrink(x, -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is "
                                           "size 3"):
        F.glu(x, 1)
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(cr.tensor(1.0))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel "
                                           "size. Found parameter numbers = 2 and channel "
                                           "size = 3."):
        F.prelu(x, cr.ones(2))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(x, 0.5, 0.1, training=True)
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(x, 0.0)


def test_kinks_take_the_reference_side():
    x = cr.tensor([-1.0, 0.0, 1.0], dtype=cr.float64, requires_grad=True)
    F.hardtanh(x).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]          # 0 at the bounds
    x.grad = None
    F.leaky_relu(x, 0.1).sum().backward()
    assert x.grad.tolist() == [0.1, 0.1, 1.0]          # the slope at 0
    x.grad = None
    F.threshold(x, 0.0, 5.0).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


def test_rrelu_training_draws_slopes_in_bounds_from_the_default_generator():
    x = -cr.ones(1000, dtype=cr.float64)
    cr.manual_seed(4)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    cr.manual_seed(4)
    assert cr.equal(y, F.rrelu(x, 0.1, 0.3, training=True))
    assert F.rrelu(cr.tensor([2.0]), training=True).tolist() == [2.0]


def test_top_level_activation_forms():
    # one function behind two dispatching wrappers (Note [torch function slot])
    assert all(getattr(cr, n).__wrapped__ is getattr(F, n).__wrapped__
               for n in ("selu", "prelu", "hardshrink"))


# --- dropout -------------------------------------------------------------------------------
def test_dropout_masks_and_scales_with_the_default_generator():
    x = cr.ones(2000, dtype=cr.float64, requires_grad=True)
    cr.manual_seed(1)
    y = F.dropout(x, 0.25)
    values = set(np.unique(y.detach().numpy()).tolist())
    assert values == {0.0, 1 / 0.75}
    assert abs((y.detach().numpy() == 0).mean() - 0.25) < 0.04
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())   # the same mask
    cr.manual_seed(1)
    assert cr.equal(F.dropout(x, 0.25), y)


def test_dropout_eval_zero_and_one():
    x = cr.ones(3, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    y = F.dropout(x, 1.0)
    assert y.tolist() == [0.0, 0.0, 0.0] and y.requires_grad
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        F.dropout(x, 1.5)


def test_dropout_inplace():
    y = cr.ones(100) * 1.0
    out = F.dropout(y, 0.5, inplace=True)
    assert out is y and y._version == 1 and set(y.tolist()) <= {0.0, 2.0}


@pytest.mark.parametrize("name, shape, channels", [
    ("dropout1d", (4, 8, 5), 32), ("dropout1d", (8, 5), 8), ("dropout2d", (4, 8, 3, 3), 32),
    ("dropout2d", (8, 3, 3), 24), ("dropout3d", (2, 8, 2, 2, 2), 16),
    ("feature_alpha_dropout", (4, 8, 3), 32)])
def test_channel_dropout_zeroes_whole_channels(name, shape, channels):
    cr.manual_seed(2)
    kwargs = {"training": True} if "alpha" in name else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # dropout2d reads 3-D input as (N, C, L)
        y = getattr(F, name)(cr.ones(*shape, dtype=cr.float64), 0.5, **kwargs).numpy()
    per_channel = y.reshape(channels, -1)
    assert all(len(set(c.tolist())) == 1 for c in per_channel)
    assert len(set(per_channel[:, 0].tolist())) == 2           # some dropped, some kept


def test_channel_dropout_rank_errors_and_warnings():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a "
                                           "1D input"):
        F.dropout1d(cr.ones(3))
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(cr.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        F.dropout2d(cr.ones(2, 3))
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        F.feature_alpha_dropout(cr.ones(3), 0.5, True)


def test_alpha_dropout_keeps_zero_mean_unit_variance():
    cr.manual_seed(3)
    x = cr.randn(200000, dtype=cr.float64)
    y = F.alpha_dropout(x, 0.3, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    assert F.alpha_dropout(x, 0.3) is x


def test_top_level_dropout():
    x = cr.ones(4)
    assert cr.dropout(x, 0.5, False) is x
    assert set(cr.dropout(x, 0.5, True).tolist()) <= {0.0, 2.0}


# --- the composite losses ----------------------------------------------------------------------
_LOSSES = ["l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
           "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "triplet_margin_loss",
           "multi_margin_loss", "normalize"]


@pytest.mark.parametrize("name", _LOSSES)
def test_loss_signatures_match_torch(torch, name):
    theirs = inspect.signature(getattr(torch.nn.functional, name))
    ours = inspect.signature(getattr(F, name))
    assert [(p.name, p.default) for p in ours.parameters.values()] == \
        [(p.name, p.default) for p in theirs.parameters.values()]


def test_loss_argument_errors_use_the_reference_messages():
    x, t = cr.full((2, 3), 0.5), cr.full((2, 3), 0.5)
    with pytest.raises(ValueError, match=r"Using a target size \(chainrule.Size\(\[1, 3\]\)\) "
                                         "that is different to the input size"):
        F.binary_cross_entropy(cr.full((3,), 0.5), cr.full((1, 3), 0.5))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(x * 3, t)
    with pytest.raises(ValueError, match=r"Target size \(.*\) must be the same as input size"):
        F.binary_cross_entropy_with_logits(x, t[0])
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values "
                                           "for beta."):
        F.smooth_l1_loss(x, t, beta=-1.0)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values"):
        F.huber_loss(x, t, delta=0.0)
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(x, t, -1.0)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, t, cr.ones(5))
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, cr.tensor([0, 1]), p=3)
    with pytest.raises(RuntimeError, match="margin_ranking_loss : All input tensors should have "
                                           "same dimension"):
        F.margin_ranking_loss(x, x, cr.ones(2))
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        F.l1_loss(x, t, weight=cr.ones(3))
    with pytest.raises(ValueError, match="bogus is not a valid value for reduction"):
        F.l1_loss(x, t, reduction="bogus")


def test_kl_div_mean_warns_and_batchmean_divides_by_the_batch():
    x = cr.tensor([[0.1, 0.9], [0.5, 0.5]]).log()
    t = cr.tensor([[0.2, 0.8], [0.5, 0.5]])
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss by both"):
        mean = F.kl_div(x, t)
    total = F.kl_div(x, t, reduction="sum").item()
    assert mean.item() == pytest.approx(total / 4)
    assert F.kl_div(x, t, reduction="batchmean").item() == pytest.approx(total / 2)


def test_kl_div_zero_targets_add_nothing_and_keep_gradients_finite():
    t = cr.tensor([0.0, 1.0], dtype=cr.float64, requires_grad=True)
    x = cr.tensor([-1.0, -0.5], dtype=cr.float64, requires_grad=True)
    loss = F.kl_div(x, t, reduction="sum")
    assert loss.item() == pytest.approx(0.5)
    loss.backward()
    assert np.isfinite(t.grad.numpy()).all() and x.grad.tolist() == [0.0, -1.0]


def test_binary_cross_entropy_clamps_its_logs_like_the_reference(torch):
    x = cr.tensor([0.0, 1.0, 0.3], dtype=cr.float64)
    t = cr.tensor([1.0, 0.0, 1.0], dtype=cr.float64)
    ours = F.binary_cross_entropy(x, t, reduction="none").tolist()
    theirs = torch.nn.functional.binary_cross_entropy(torch.tensor(x.numpy()),
                                                      torch.tensor(t.numpy()), reduction="none")
    np.testing.assert_allclose(ours, theirs.numpy())
    assert ours[:2] == [100.0, 100.0]


def test_bce_with_logits_is_stable_for_large_logits():
    x = cr.tensor([1000.0, -1000.0, 0.0], dtype=cr.float64, requires_grad=True)
    t = cr.tensor([0.0, 1.0, 1.0], dtype=cr.float64)
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [1000.0, 1000.0, math.log(2)])
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, -1.0, -0.5])     # sigmoid(x) - t


def test_gaussian_nll_clamps_var_without_stopping_its_gradient():
    var = cr.tensor([0.0, 2.0], dtype=cr.float64, requires_grad=True)
    x = cr.zeros(2, dtype=cr.float64)
    F.gaussian_nll_loss(x, x, var, eps=0.5, reduction="sum").backward()
    np.testing.assert_allclose(var.grad.numpy(), [1.0, 0.25])          # 0.5 / clamped var


def test_cosine_similarity_and_normalize_at_zero_vectors():
    z = cr.zeros(1, 3, dtype=cr.float64, requires_grad=True)
    assert F.cosine_similarity(z, cr.ones(1, 3, dtype=cr.float64)).tolist() == [0.0]
    assert F.normalize(z).tolist() == [[0.0, 0.0, 0.0]]
    F.normalize(z).sum().backward()
    assert np.isfinite(z.grad.numpy()).all()


def test_multi_margin_loss_unbatched_and_weights(torch):
    x = np.array([0.1, 0.2, 0.4, 0.8])
    for kwargs in ({}, {"p": 2, "margin": 0.5}, {"reduction": "none"}):
        ours = F.multi_margin_loss(cr.tensor(x), cr.tensor(3), **kwargs)
        theirs = torch.nn.functional.multi_margin_loss(torch.tensor(x), torch.tensor(3),
                                                       **kwargs)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_deprecated_size_average_and_reduce_are_honoured():
    x, t = cr.tensor([1.0, 3.0]), cr.zeros(2)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert F.l1_loss(x, t, size_average=False).item() == 4.0


# --- normalisation -----------------------------------------------------------------------------
def test_batch_norm_updates_running_stats_in_place_like_torch(torch, rng):
    x = rng.standard_normal((5, 3, 4))
    rm, rv = cr.zeros(3, dtype=cr.float64), cr.ones(3, dtype=cr.float64)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    for momentum in (0.1, 0.5):
        ours = F.batch_norm(cr.tensor(x), rm, rv, training=True, momentum=momentum)
        theirs = torch.nn.functional.batch_norm(torch.tensor(x), trm, trv, training=True,
                                                momentum=momentum)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), atol=1e-12)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), atol=1e-12)
    assert rm._version == 2 and not rm.requires_grad
    ours = F.batch_norm(cr.tensor(x), rm, rv)                      # evaluation: running stats
    theirs = torch.nn.functional.batch_norm(torch.tensor(x), trm, trv)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)
    assert rm._version == 2


def test_batch_norm_running_stats_do_not_enter_the_graph():
    x = cr.randn(4, 2, dtype=cr.float64, requires_grad=True)
    rm, rv = cr.zeros(2, dtype=cr.float64), cr.ones(2, dtype=cr.float64)
    F.batch_norm(x, rm, rv, training=True).sum().backward()
    assert rm.grad_fn is None and x.grad is not None


def test_normalisation_errors():
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when "
                                         r"training, got input size chainrule.Size\(\[1, 3\]\)"):
        F.batch_norm(cr.zeros(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(cr.zeros(2, 3), None, None)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(cr.zeros(2, 3), cr.zeros(4), cr.ones(4))
    with pytest.raises(TypeError, match="'momentum' .* must be float, not NoneType"):
        F.batch_norm(cr.zeros(2, 3), cr.zeros(3), cr.ones(3), training=True, momentum=None)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with "
                                           r"shape \[\*, 4\], but got input of size\[2, 3\]"):
        F.layer_norm(cr.zeros(2, 3), [4])
    with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as "
                                           r"normalized_shape, but got weight of shape \[1, 3\] "
                                           r"and normalized_shape = \[3\]"):
        F.layer_norm(cr.zeros(2, 3), [3], cr.ones(1, 3))
    with pytest.raises(TypeError, match="layer_norm\\(\\): argument 'normalized_shape' "
                                        r"\(position 2\) must be tuple of ints, not int"):
        F.layer_norm(cr.zeros(2, 3), 3)
    with pytest.raises(RuntimeError, match="Expected bias to be of same shape"):
        F.layer_norm(cr.zeros(2, 3), [3], None, cr.ones(2))
    with pytest.raises(RuntimeError, match=r"mixed dtype \(CPU\): expect parameter to have "
                                           "scalar type of Float"):
        F.layer_norm(cr.zeros(2, 3), [3], cr.ones(3, dtype=cr.float64))
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be "
                                           "divisible by num_groups, but got input of shape "
                                           r"\[2, 3, 4\] and num_groups=2"):
        F.group_norm(cr.zeros(2, 3, 4), 2)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(cr.zeros(2, 3, 1))


def test_rms_norm_default_eps_is_the_dtypes_epsilon():
    x = cr.zeros(1, 2)
    assert F.rms_norm(x, (2,)).tolist() == [[0.0, 0.0]]
    y = F.rms_norm(cr.tensor([[1e-4, 0.0]], dtype=cr.float64), (2,))
    assert y[0, 0].item() == pytest.approx(1e-4 / math.sqrt(0.5e-8 + np.finfo(np.float64).eps))


def test_top_level_norm_forms():
    x = cr.randn(2, 3)
    assert cr.equal(cr.layer_norm(x, (3,)), F.layer_norm(x, (3,)))
    rm, rv = cr.zeros(3), cr.ones(3)
    assert cr.equal(cr.batch_norm(x, None, None, rm, rv, False, 0.1, 1e-5, False),
                    F.batch_norm(x, rm, rv))
    assert cr.equal(cr.group_norm(cr.ones(2, 4, 2), 2), F.group_norm(cr.ones(2, 4, 2), 2))


# --- pad ---------------------------------------------------------------------------------------
def test_pad_errors_use_the_reference_messages():
    x = cr.zeros(2, 3)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two "
                                           "times the input dimension but got padding length 6 "
                                           "and input of dimension 2"):
        F.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(RuntimeError, match=r"Argument #4: Padding size should be less than the "
                                           r"corresponding input dimension, but got: padding "
                                           r"\(3, 3\) at dimension 1 of input \[2, 3\]"):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once"):
        F.pad(x, (4, 4), mode="circular")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D input"):
        F.pad(cr.zeros(3), (1, 1), mode="reflect")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode bogus"):
        F.pad(x, (1, 1), mode="bogus")
    with pytest.raises(RuntimeError, match="Padding mode \"reflect\" doesn't take in value"):
        F.pad(x, (1, 1), mode="reflect", value=1.0)


def test_circular_pad_copies_slices_like_the_reference():
    x = cr.arange(4.).reshape(1, 1, 4).requires_grad_()
    y = F.pad(x, (2, 1), mode="circular")
    assert y.tolist() == [[[2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0]]]
    node = y.grad_fn                  # back padding <- front padding <- the copied middle
    assert [type(f).__name__ for f, _ in node.next_functions] == ["CopySlices", "SliceBackward0"]
    middle = node.next_functions[0][0].next_functions[0][0]
    assert [type(f).__name__ if f else None for f, _ in middle.next_functions] == \
        [None, "SliceBackward0"]
    y.backward(cr.arange(7.).reshape(1, 1, 7))
    assert x.grad.tolist() == [[[2.0 + 6.0, 3.0, 0.0 + 4.0, 1.0 + 5.0]]]


def test_circular_pad_under_vmap_matches_per_entry():
    x = cr.arange(48.).reshape(2, 2, 3, 4)
    mapped = cr.vmap(lambda a: F.pad(a, (1, -2, 0, 2), mode="circular"))(x)
    assert cr.equal(mapped, cr.stack([F.pad(a, (1, -2, 0, 2), mode="circular") for a in x]))


def test_circular_pad_emptying_a_dim_raises():
    with pytest.raises(RuntimeError, match="Negative padding value is resulting in an empty"):
        F.pad(cr.zeros(1, 2, 4), (-3, -2), mode="circular")


def test_negative_constant_padding_crops_and_its_gradient_is_zero_there():
    x = cr.arange(6.0, dtype=cr.float64).reshape(2, 3).requires_grad_()
    y = F.pad(x, (-1, 1))
    assert y.tolist() == [[1.0, 2.0, 0.0], [4.0, 5.0, 0.0]]
    y.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]


def test_reflect_padding_gradient_adds_where_positions_repeat():
    x = cr.tensor([[[1.0, 2.0, 3.0]]], dtype=cr.float64, requires_grad=True)
    F.pad(x, (2, 2), mode="reflect").sum().backward()
    assert x.grad.tolist() == [[[2.0, 3.0, 2.0]]]


# --- pooling -----------------------------------------------------------------------------------
_POOL_CASES = [("max_pool2d", (2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1,
                                                 ceil_mode=True, return_indices=True)),
               ("max_pool2d", (3, 7, 6), dict(kernel_size=(2, 3), dilation=2, padding=1,
                                              return_indices=True)),
               ("max_pool1d", (2, 3, 7), dict(kernel_size=2, return_indices=True)),
               ("avg_pool2d", (2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1,
                                                 ceil_mode=True, count_include_pad=False)),
               ("avg_pool2d", (2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1,
                                                 ceil_mode=True)),
               ("avg_pool1d", (2, 3, 7), dict(kernel_size=3, padding=1,
                                              count_include_pad=False)),
               ("adaptive_max_pool2d", (2, 3, 7, 6), dict(output_size=(3, 4),
                                                          return_indices=True)),
               ("adaptive_max_pool1d", (2, 3, 7), dict(output_size=5, return_indices=True)),
               ("adaptive_avg_pool2d", (2, 3, 7, 6), dict(output_size=(None, 4))),
               ("adaptive_avg_pool1d", (2, 3, 7), dict(output_size=5)),
               ("max_pool3d", (2, 2, 5, 6, 7), dict(kernel_size=(2, 3, 2), stride=(1, 2, 2),
                                                    dilation=(1, 1, 2), ceil_mode=True,
                                                    return_indices=True)),
               ("avg_pool3d", (2, 5, 6, 7), dict(kernel_size=3, stride=2, padding=1,
                                                 ceil_mode=True, count_include_pad=False)),
               ("adaptive_max_pool3d", (2, 2, 5, 6, 7), dict(output_size=(2, 3, 4),
                                                             return_indices=True)),
               ("adaptive_avg_pool3d", (2, 5, 6, 7), dict(output_size=(None, 2, 3)))]


@pytest.mark.parametrize("name, shape, kwargs", _POOL_CASES)
def test_pooling_values_and_indices_match_torch(torch, rng, name, shape, kwargs):
    x = rng.standard_normal(shape)
    ours = getattr(F, name)(cr.tensor(x), **kwargs)
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs)
    ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
    for a, b in zip(ours, theirs):
        assert a.shape == tuple(b.shape) and a.dtype.is_floating_point == b.is_floating_point()
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-12)


def test_max_pool_gradient_goes_to_one_maximum_of_a_tie():
    x = cr.ones(1, 1, 2, 2, dtype=cr.float64, requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    assert x.grad.sum().item() == 1.0


def test_pooling_errors_use_the_reference_messages():
    x = cr.zeros(1, 1, 5, 5)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel "
                                           "size, but got pad=2, kernel_size=3 and dilation=1"):
        F.max_pool2d(x, 3, padding=2)
    with pytest.raises(RuntimeError, match="pad should be at most half of kernel size, but got "
                                           "pad=2 and kernel_size=3"):
        F.avg_pool2d(x, 3, padding=2)
    with pytest.raises(RuntimeError, match=r"Given input size: \(1x5x5\). Calculated output "
                                           r"size: \(1x0x0\). Output size is too small"):
        F.max_pool2d(x, 7)
    with pytest.raises(RuntimeError, match="non-empty 3D or 4D \\(batch mode\\) tensor expected"):
        F.max_pool2d(cr.zeros(5, 5), 2)
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        F.max_pool2d(x, 2, stride=0)
    with pytest.raises(RuntimeError, match="max_pool1d: Expected 2D or 3D \\(batch mode\\)"):
        F.max_pool1d(cr.zeros(5), 2)


# --- conv1d / conv3d / transposed / unfold / fold ------------------------------------------------
def test_conv_family_errors_use_the_reference_messages():
    with pytest.raises(RuntimeError, match="Expected 2D \\(unbatched\\) or 3D \\(batched\\) input "
                                           "to conv1d, but got input of size: \\[5\\]"):
        F.conv1d(cr.zeros(5), cr.zeros(3, 2, 3))
    with pytest.raises(RuntimeError, match="Expected 4-dimensional input for 4-dimensional "
                                           "weight"):
        F.conv1d(cr.zeros(1, 2, 5), cr.zeros(3, 2, 3, 3))
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or "
                                           "dilation, but got output_padding_height: 1"):
        F.conv_transpose2d(cr.zeros(1, 2, 3, 3), cr.zeros(2, 3, 3, 3), output_padding=1)
    with pytest.raises(RuntimeError, match="Given transposed=1, weight of size \\[2, 3, 3, 3\\], "
                                           "expected input\\[1, 3, 3, 3\\] to have 2 channels"):
        F.conv_transpose2d(cr.zeros(1, 3, 3, 3), cr.zeros(2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Expected size of input's dimension 1 to be divisible "
                                           "by the product of kernel_size"):
        F.fold(cr.zeros(1, 5, 12), (4, 5), 2)
    with pytest.raises(RuntimeError, match="calculated number of sliding blocks 3 \\* 4 = 12, but "
                                           "got input.size\\(2\\)=10"):
        F.fold(cr.zeros(1, 8, 10), (4, 5), 2)


@pytest.mark.parametrize("call,message", [
    (lambda: F.conv3d(cr.zeros(1, 2, 5, 5, 5), cr.zeros(3, 2, 2, 2)),
     "a list of 2 values to match the convolution dimensions, but got stride=\\[1, 1, 1\\]"),
    (lambda: F.conv1d(cr.zeros(1, 2, 5), cr.zeros(3, 2)),
     "weight should have at least three dimensions"),
    (lambda: F.conv3d(cr.zeros(1, 2, 1, 5, 5), cr.zeros(3, 2, 2, 2, 2)),
     "Calculated padded input size per channel: \\(1 x 5 x 5\\). Kernel size: \\(2 x 2 x 2\\)"),
    (lambda: F.conv3d(cr.zeros(1, 2, 5, 5, 5), cr.zeros(3, 2, 2, 2, 2), padding="same", stride=2),
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv_transpose1d(cr.zeros(1, 2, 4), cr.zeros(2, 2, 2), output_padding=2, stride=2),
     "but got output_padding_height: 0 output_padding_width: 2 stride_height: 1 stride_width: 2 "
     "dilation_height: 1 dilation_width: 1"),
    (lambda: F.conv_transpose3d(cr.zeros(1, 2, 4, 4, 4), cr.zeros(2, 2, 2, 2, 2),
                                output_padding=2, stride=2),
     "output_padding_depth: 2 output_padding_height: 2 output_padding_width: 2 stride_depth: 2"),
    (lambda: F.conv_transpose1d(cr.zeros(1, 2, 5), cr.zeros(2, 2, 2), bias=cr.zeros(3)),
     "Given transposed=1, weight of size \\[2, 2, 2\\], expected bias to be 1-dimensional with "
     "2 elements, but got bias of size \\[3\\] instead"),
    (lambda: F.conv_transpose1d(cr.zeros(1, 4, 5), cr.zeros(4, 2, 2), groups=3),
     "Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of "
     "size \\[\\[4, 2, 2\\]\\] instead"),
    (lambda: F.conv_transpose1d(cr.zeros(1, 2, 5), cr.zeros(2, 2, 2), output_padding=-1),
     "negative output_padding is not supported"),
    (lambda: F.conv_transpose1d(cr.zeros(1, 2, 1), cr.zeros(2, 2, 2), padding=3),
     "Given input size per channel: \\(1 x 1\\). Calculated output size per channel: "
     "\\(1 x -4\\). Output size is too small"),
])
def test_convolution_errors_use_the_reference_messages(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()
    with pytest.raises(TypeError, match="conv_transpose1d\\(\\): argument 'padding' must be "
                                        "tuple of ints, not str"):
        F.conv_transpose1d(cr.zeros(1, 2, 4), cr.zeros(2, 2, 2), padding="same")


@pytest.mark.parametrize("name,x,w", [("conv1d", (2, 4, 7), (6, 2, 3)),
                                      ("conv3d", (4, 3, 3, 4), (2, 4, 2, 1, 2)),
                                      ("conv_transpose1d", (2, 6, 7), (6, 1, 3)),
                                      ("conv_transpose3d", (1, 4, 3, 3, 2), (4, 3, 2, 2, 2))])
def test_every_convolution_records_one_convolution_node(name, x, w):
    groups = 2 if name.endswith("1d") else 1
    y = getattr(F, name)(cr.ones(*x, requires_grad=True), cr.ones(*w, requires_grad=True),
                         cr.ones(w[0] if name.startswith("conv1") or name == "conv3d" else
                                 w[1] * groups, requires_grad=True), groups=groups)
    node = y.grad_fn if len(x) == len(w) else y.grad_fn.next_functions[0][0]
    assert type(node).__name__ == "ConvolutionBackward0"
    assert [type(f).__name__ for f, _ in node.next_functions][1:] == ["AccumulateGrad"] * 2


def test_fold_is_the_adjoint_of_unfold(rng):
    x = cr.tensor(rng.standard_normal((2, 3, 5, 6)))
    y = cr.tensor(rng.standard_normal((2, 3 * 4, 12)))
    kwargs = dict(kernel_size=2, padding=1, stride=2)
    lhs = (F.unfold(x, **kwargs) * y).sum().item()
    rhs = (x * F.fold(y, (5, 6), **kwargs)).sum().item()
    assert lhs == pytest.approx(rhs)


def test_conv_transpose_is_the_input_gradient_of_conv(rng):
    x = cr.tensor(rng.standard_normal((1, 2, 7, 7)), requires_grad=True)
    w = cr.tensor(rng.standard_normal((3, 2, 3, 3)))
    g = cr.tensor(rng.standard_normal((1, 3, 3, 3)))
    (F.conv2d(x, w, stride=2) * g).sum().backward()
    np.testing.assert_allclose(F.conv_transpose2d(g, w, stride=2).numpy(), x.grad.numpy())


def test_top_level_conv_forms():
    assert all(getattr(cr, n).__wrapped__ is getattr(F, n).__wrapped__
               for n in ("conv1d", "conv_transpose2d", "conv2d"))


# --- embedding / one_hot -----------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{"padding_idx": 2}, {"scale_grad_by_freq": True},
                                    {"padding_idx": -1, "scale_grad_by_freq": True}])
def test_embedding_gradients_match_torch(torch, rng, kwargs):
    w = rng.standard_normal((5, 3))
    idx = np.array([[0, 2, 4], [2, 2, 4]])
    g = rng.standard_normal((2, 3, 3))
    ours = cr.tensor(w, requires_grad=True)
    F.embedding(cr.tensor(idx), ours, **kwargs).backward(cr.tensor(g))
    theirs = torch.tensor(w, requires_grad=True)
    torch.nn.functional.embedding(torch.tensor(idx), theirs, **kwargs).backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())


def test_embedding_max_norm_renormalises_looked_up_rows_in_place(torch):
    w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    ours, theirs = cr.tensor(w), torch.tensor(w)
    out = F.embedding(cr.tensor([0, 1]), ours, max_norm=1.0)
    expected = torch.nn.functional.embedding(torch.tensor([0, 1]), theirs, max_norm=1.0)
    np.testing.assert_allclose(out.numpy(), expected.numpy())
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())        # row 2: not looked up
    assert ours.numpy()[2].tolist() == [6.0, 8.0]


def test_embedding_errors():
    w = cr.zeros(4, 2)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have "
                                           "one of the following scalar types: Long, Int"):
        F.embedding(cr.tensor([0.0]), w)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(cr.tensor([0]), w, padding_idx=4)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(cr.tensor([4]), w)


def test_one_hot():
    assert F.one_hot(cr.tensor([[1], [0]])).tolist() == [[[0, 1]], [[1, 0]]]
    assert F.one_hot(cr.tensor([1]), 3).dtype == cr.int64
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(cr.tensor([3]), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(cr.tensor([-1]), 3)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(cr.tensor([1.0]))


# --- resampling and attention ------------------------------------------------------------------
@pytest.mark.parametrize("mode, shape", [("nearest", (2, 3, 5, 4)), ("nearest-exact", (2, 3, 5)),
                                         ("bilinear", (2, 3, 5, 4)), ("bicubic", (1, 2, 5, 4)),
                                         ("trilinear", (1, 2, 3, 4, 5)), ("area", (2, 3, 7, 5))])
@pytest.mark.parametrize("kwargs", [{"size": 7}, {"scale_factor": 0.6},
                                    {"scale_factor": 2.5, "recompute_scale_factor": True}])
def test_interpolate_matches_torch(torch, rng, mode, shape, kwargs):
    x = rng.standard_normal(shape)
    for align in ([None] if mode in ("nearest", "nearest-exact", "area") else [False, True]):
        extra = {} if align is None else {"align_corners": align}
        ours = F.interpolate(cr.tensor(x), mode=mode, **kwargs, **extra)
        theirs = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, **kwargs, **extra)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)


def test_interpolate_errors():
    x = cr.zeros(1, 2, 4, 5)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=3, scale_factor=2.0)
    with pytest.raises(ValueError, match="align_corners option can only be set with the "
                                         "interpolating modes"):
        F.interpolate(x, size=3, align_corners=True)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(ValueError, match="Input and output must have the same number of spatial "
                                         "dimensions"):
        F.interpolate(x, size=(3,), mode="bilinear")
    with pytest.raises(RuntimeError, match="pixel_shuffle expects its input's 'channel' "
                                           "dimension to be divisible by the square of "
                                           "upscale_factor, but input.size\\(-3\\)=3"):
        F.pixel_shuffle(cr.zeros(1, 3, 2, 2), 2)


def test_pixel_unshuffle_inverts_pixel_shuffle(rng):
    x = cr.tensor(rng.standard_normal((2, 3, 8, 2, 2)))
    assert cr.equal(F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2), x)


def test_attention_errors_and_dropout():
    q = cr.ones(2, 3, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when "
                                           "is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=cr.ones(3, 3, dtype=cr.bool),
                                       is_causal=True)
    cr.manual_seed(0)
    v = cr.randn(2, 3, 4)
    dropped = F.scaled_dot_product_attention(q, q, v, dropout_p=0.5)
    assert not cr.allclose(dropped, F.scaled_dot_product_attention(q, q, v))


# --- every public function: torch's signature --------------------------------------------------
def test_every_function_has_torchs_signature_where_torch_has_one(torch):
    checked = []
    for name in F.__all__:
        theirs = getattr(torch.nn.functional, name)
        try:
            params = list(inspect.signature(theirs).parameters.values())
        except (TypeError, ValueError):                 # a C builtin
            continue
        if params and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
            continue                                    # a dispatch wrapper (*args, **kwargs)
        ours = inspect.signature(getattr(F, name)).parameters.values()
        assert [(p.name, p.default, p.kind) for p in ours] == \
            [(p.name, p.default, p.kind) for p in params], name
        checked.append(name)
    assert len(checked) > 60


def test_every_function_has_a_runnable_docstring():
    for name in F.__all__:
        assert ">>>" in (getattr(F, name).__doc__ or ""), name


# --- ctc_loss ----------------------------------------------------------------------------------
def test_ctc_loss_matches_torch_for_concatenated_targets_and_impossible_alignments(torch, rng):
    lp = torch.tensor(rng.standard_normal((6, 3, 5))).log_softmax(2)
    lengths, target_lengths = [6, 5, 4], [3, 1, 2]
    flat = torch.tensor([1, 2, 2, 3, 4, 4])
    ours = F.ctc_loss(cr.tensor(lp.numpy()), cr.tensor(flat.numpy()), lengths, target_lengths,
                      reduction="none")
    theirs = torch.nn.functional.ctc_loss(lp, flat, torch.tensor(lengths),
                                          torch.tensor(target_lengths), reduction="none")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    repeated = cr.tensor([[1, 1, 1]] * 3)                  # needs 5 steps, gets 2
    assert F.ctc_loss(cr.tensor(lp.numpy()), repeated, [2] * 3, [3] * 3,
                      reduction="none").tolist() == [math.inf] * 3
    zeroed = F.ctc_loss(cr.tensor(lp.numpy(), requires_grad=True), repeated, [2] * 3, [3] * 3,
                        zero_infinity=True)
    assert zeroed.item() == 0.0


def test_ctc_loss_unbatched(torch, rng):
    lp = torch.tensor(rng.standard_normal((5, 4))).log_softmax(1)
    ours = F.ctc_loss(cr.tensor(lp.numpy()), cr.tensor([1, 2]), 5, 2)
    theirs = torch.nn.functional.ctc_loss(lp, torch.tensor([1, 2]), torch.tensor(5),
                                          torch.tensor(2))
    assert ours.item() == pytest.approx(theirs.item())


def test_ctc_loss_gradient_is_the_references_exp_minus_occupancy(rng):
    # Note [ctc gradient]: per valid frame the gradient sums to 0 over the classes (the
    # exp term and the label occupancy each sum to 1); past an input's length it is 0
    lp = cr.tensor(rng.standard_normal((6, 2, 4)), requires_grad=True)
    norm = lp.log_softmax(2).detach().requires_grad_()
    loss = F.ctc_loss(norm, cr.tensor([[1, 2], [3, 3]]), (6, 4), (2, 2), reduction="none")
    assert type(loss.grad_fn).__name__ == "CtcLossBackward0"
    g, = cr.autograd.grad(loss.sum(), norm, create_graph=True)
    np.testing.assert_allclose(g.detach().sum(2).numpy(), 0, atol=1e-12)
    assert g[4:, 1].abs().max().item() == 0
    assert type(g.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not"):
        g.sum().backward()
    through_logits, = cr.autograd.grad(F.ctc_loss(lp.log_softmax(2), cr.tensor([[1, 2], [3, 3]]),
                                                  (6, 4), (2, 2), reduction="sum"), lp)
    np.testing.assert_allclose(through_logits.numpy(), g.detach().numpy(), atol=1e-12)


def test_top_level_forms_are_the_references_top_level_names(torch):
    for name, fn in F.TOP_LEVEL.items():
        assert hasattr(torch, name), name
        ours = getattr(cr, name)       # under __torch_function__ and dim/axis spellings
        while ours is not fn and hasattr(ours, "__wrapped__"):
            ours = ours.__wrapped__
        assert ours is fn, name


def _chain(fn):
    """The grad_fn tree as nested (name, children) tuples; leaves' nodes by name."""
    if fn is None:
        return None
    return (fn.name(), tuple(_chain(n) for n, _ in fn.next_functions))


_ACC = ("torch::autograd::AccumulateGrad", ())


@pytest.mark.parametrize("shape", [(2, 4), (4,), (2, 5, 4), (2, 2, 5, 4)])
def test_linear_records_the_references_addmm_graph(shape):
    """Note [linear's graph]: AddmmBackward0 over the bias, the input (viewed to 2-D) and
    TBackward0 of the weight; the result of an N-D input viewed back."""
    w, b = cr.randn(3, 4, requires_grad=True), cr.randn(3, requires_grad=True)
    x = cr.randn(*shape, requires_grad=True)
    y = F.linear(x, w, b)
    assert y.shape == shape[:-1] + (3,)
    x_edge = _ACC if len(shape) == 2 else ("ViewBackward0", (_ACC,))
    addmm = ("AddmmBackward0", (_ACC, x_edge, ("TBackward0", (_ACC,))))
    assert _chain(y.grad_fn) == (addmm if len(shape) == 2 else ("ViewBackward0", (addmm,)))
    assert _chain(F.linear(cr.randn(2, 4), w).grad_fn) == \
        ("MmBackward0", (None, ("TBackward0", (_ACC,))))


def test_linear_weight_gradient_is_stolen_not_copied():
    """The weight's gradient arrives in the weight's layout, an array of its own."""
    w, b = cr.randn(3, 4, requires_grad=True), cr.randn(3, requires_grad=True)
    F.linear(cr.randn(5, 2, 4), w, b).sum().backward()
    g = w.grad.numpy()
    assert g.flags.c_contiguous and g.flags.owndata
    assert gradcheck(F.linear, (cr.randn(2, 3, 4, dtype=cr.float64, requires_grad=True),
                                cr.randn(3, 4, dtype=cr.float64, requires_grad=True),
                                cr.randn(3, dtype=cr.float64, requires_grad=True)))


def test_addmm_is_one_node():
    b, m1, m2 = cr.randn(3, requires_grad=True), cr.randn(2, 4, requires_grad=True), \
        cr.randn(3, 4, requires_grad=True)
    y = cr.addmm(b, m1, m2.t())
    assert _chain(y.grad_fn) == ("AddmmBackward0", (_ACC, _ACC, ("TBackward0", (_ACC,))))
    np.testing.assert_allclose(y.detach().numpy(), m1.detach().numpy() @ m2.detach().numpy().T
                               + b.detach().numpy(), rtol=1e-6)


def test_linear_of_a_non_contiguous_input_is_matmul_plus_bias():
    w, b = cr.ones(3, 4, requires_grad=True), cr.ones(3, requires_grad=True)
    x = cr.ones(5, 2, 4, requires_grad=True).transpose(0, 1)
    y = F.linear(x, w, b)
    assert y.grad_fn.name() == "AddBackward0" and y.shape == (2, 5, 3)
    y.sum().backward()
    assert w.grad.tolist() == [[10.0] * 4] * 3 and b.grad.tolist() == [10.0] * 3


def test_layer_norm_is_one_node_with_torchs_name():
    x = cr.tensor([[1.0, 2.0, 4.0], [0.0, -1.0, 1.0]], requires_grad=True)
    w = cr.tensor([1.0, 2.0, 0.5], requires_grad=True)
    y = F.layer_norm(x, (3,), w, cr.zeros(3))
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    assert [type(f[0]).__name__ for f in y.grad_fn.next_functions[:2]] == ["AccumulateGrad"] * 2
    (y * cr.tensor([1.0, -1.0, 2.0])).sum().backward()
    np.testing.assert_allclose(x.grad.sum(1).numpy(), [0.0, 0.0], atol=1e-6)  # mean-free
    assert F.layer_norm(x, (3,)).grad_fn.next_functions[1:] == ((None, 0), (None, 0))


def test_linear_on_other_ranks_folds_rows_into_one_addmm_like_torch():
    w = cr.ones(2, 3, requires_grad=True)
    b = cr.zeros(2, requires_grad=True)
    y = F.linear(cr.ones(4, 5, 3), w, b)
    assert y.shape == (4, 5, 2) and y.grad_fn.name() == "ViewBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "AddmmBackward0"
    assert F.linear(cr.ones(3), w, b).grad_fn.name() == "ViewBackward0"
    assert F.linear(cr.ones(4, 3), w, b).grad_fn.name() == "AddmmBackward0"
    y.sum().backward()
    assert w.grad.tolist() == [[20.0] * 3] * 2 and b.grad.tolist() == [20.0, 20.0]


def test_bce_with_logits_is_one_node_differentiable_in_input_and_target_only():
    x = cr.tensor([0.5, -1.0], dtype=cr.float64, requires_grad=True)
    t = cr.tensor([1.0, 0.25], dtype=cr.float64, requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="sum")
    assert loss.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), (x.sigmoid() - t).detach().numpy())
    np.testing.assert_allclose(t.grad.numpy(), [-0.5, 1.0])           # -input
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument "
                                           "'pos_weight'"):
        F.binary_cross_entropy_with_logits(x, t, pos_weight=cr.ones(2, dtype=cr.float64,
                                                                     requires_grad=True))


def test_bce_is_one_node_with_torchs_clamped_gradients():
    x = cr.tensor([0.0, 0.3, 1.0], dtype=cr.float64, requires_grad=True)
    t = cr.tensor([0.0, 0.5, 0.2], dtype=cr.float64, requires_grad=True)
    loss = F.binary_cross_entropy(x, t, reduction="none")
    assert loss.grad_fn.name() == "BinaryCrossEntropyBackward0"
    np.testing.assert_allclose(loss.detach().numpy()[[0, 2]], [0.0, 80.0])  # logs at -100
    loss.backward(cr.ones(3, dtype=cr.float64))
    np.testing.assert_allclose(x.grad.numpy(), [0.0, -0.2 / 0.21, 0.8e12])
    assert t.grad.tolist()[0] == math.inf and t.grad.tolist()[2] == -math.inf


def test_batch_norm_under_vmap_needs_batched_running_stats():
    x = cr.randn(2, 3, 4, dtype=cr.float64)
    mean, var = cr.zeros(4, dtype=cr.float64), cr.ones(4, dtype=cr.float64)
    with pytest.raises(RuntimeError, match="Batch norm got a batched tensor as input while "
                                           "the running_mean or running_var"):
        cr.vmap(lambda a: F.batch_norm(a, mean, var, training=True))(x)
    means, vars_ = cr.zeros(2, 4, dtype=cr.float64), cr.ones(2, 4, dtype=cr.float64)
    out = cr.vmap(lambda a, m, v: F.batch_norm(a, m, v, training=True))(x, means, vars_)
    assert out.shape == (2, 3, 4) and not np.allclose(means.numpy(), 0)
    assert cr.vmap(lambda a: F.batch_norm(a, mean, var))(x).shape == (2, 3, 4)     # eval
    assert cr.vmap(lambda a: F.batch_norm(a, None, None, training=True))(x).shape == (2, 3, 4)


def test_batch_norm_records_one_node_and_updates_running_stats_outside_it():
    x = cr.tensor([[1., 2.], [3., 6.]], requires_grad=True)
    rm, rv = cr.zeros(2), cr.ones(2)
    y = F.batch_norm(x, rm, rv, training=True, momentum=0.5)
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    assert len(y.grad_fn.next_functions) == 3            # input, weight, bias
    assert rm.tolist() == [1.0, 2.0] and rv.tolist() == [1.5, 4.5]
    rm.add_(1.0)              # not saved in training: backward still works
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), 0, atol=1e-6)


def test_pooling_ops_are_the_reference_nodes_on_unbatched_inputs():
    x = cr.arange(16.).reshape(1, 4, 4).requires_grad_()
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    assert values.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert indices.tolist() == [[[5, 7], [13, 15]]]
    assert F.avg_pool2d(x, 2).grad_fn.name() == "AvgPool2DBackward0"
    assert F.adaptive_avg_pool2d(x, 1).grad_fn.name() == "MeanBackward1"
    assert F.adaptive_avg_pool2d(x, 3).grad_fn.name() == "AdaptiveAvgPool2DBackward0"
    values.sum().backward()
    assert x.grad.reshape(-1).tolist() == [0., 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1]


def test_max_pool_takes_the_first_maximum_of_a_window_of_equal_values():
    x = cr.ones(1, 1, 2, 3, requires_grad=True)
    values, indices = F.max_pool2d(x, 2, stride=1, padding=1, return_indices=True)
    assert indices.tolist() == [[[[0, 0, 1, 2], [0, 0, 1, 2], [3, 3, 4, 5]]]]
    assert F.max_pool2d(cr.full((1, 2, 2), -float("inf")), 2, padding=1,
                        return_indices=True)[1].tolist() == [[[0, 1], [2, 3]]]


def test_celu_records_its_own_node_with_elus_formulas():
    x = cr.tensor([-1.5, 0.5], requires_grad=True)
    y = F.celu(x, alpha=2.0)
    assert type(y.grad_fn).__name__ == "CeluBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [np.exp(-0.75), 1.0])


def test_glu_is_one_node_with_the_reference_errors():
    x = cr.tensor([[1.0, -2.0, 0.5, 3.0]], requires_grad=True)
    y = F.glu(x, -1)
    assert type(y.grad_fn).__name__ == "GluBackward0"
    y.sum().backward()
    s = 1 / (1 + np.exp(-np.array([0.5, 3.0])))
    np.testing.assert_allclose(x.grad.numpy()[0], np.r_[s, np.array([1.0, -2.0]) * s * (1 - s)],
                               rtol=1e-6)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 0 is "
                                           "size 3"):
        F.glu(cr.zeros(3))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(cr.tensor(1.0))


def test_pairwise_distance_records_the_reference_norm_over_the_eps_shift():
    a, b = cr.ones(2, 3, requires_grad=True), cr.zeros(3, requires_grad=True)
    y = F.pairwise_distance(a, b, p=1.0, eps=0.5, keepdim=True)
    assert y.tolist() == [[4.5], [4.5]]
    add = y.grad_fn.next_functions[0][0]
    assert (type(y.grad_fn).__name__, type(add).__name__) == ("NormBackward1", "AddBackward1")
    assert [type(f).__name__ for f, _ in add.next_functions] == ["SubBackward0"]
    assert F.pairwise_distance(cr.tensor([1, 2]), cr.tensor([3, 5]), eps=0.0).item() == \
        pytest.approx(13 ** 0.5)


def test_margin_losses_clamp_with_clamp_min():
    """The reference clamps these losses with clamp_min: their nodes are ClampMinBackward0."""
    a = cr.randn(3, 4, requires_grad=True)
    b, y = cr.randn(3, 4), cr.ones(3, 4)
    assert F.margin_ranking_loss(a, b, y, reduction="none").grad_fn.name() == "ClampMinBackward0"
    assert F.triplet_margin_loss(a, b, b.flip(0), reduction="none").grad_fn.name() == \
        "ClampMinBackward0"
