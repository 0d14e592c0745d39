"""Derivative table: neural-network ops (linear, 1/2/3-D and transposed convolution,
GELU, SiLU, softplus, NLL and MSE losses) and the argument handling of
``chainrule.nn.functional``.

The convolution is im2col (a strided view of the padded input copied once into
columns) times the weight as one matrix product per group; its backward ops are the
transposed products, and are table ops themselves so that double backward works
(a transposed convolution swaps the roles: Note [convolution entries]):

    conv(x, W)               VJP x: conv2d_input_grad(g, conj W)
                             VJP W: conv2d_weight_grad(conj x, g)
    conv2d_input_grad(g, W)  VJP g: conv(h, conj W); VJP W: conv2d_weight_grad(h, conj g)
    conv2d_weight_grad(x, g) VJP x: conv2d_input_grad(conj g, h); VJP g: conv(conj x, h)
"""
import math
import warnings

import numpy as np

from .. import _grad_mode
from .._dtypes import scalar_type_name
from .._batched import BatchedTensor
from .._meta import MetaArray
from .._tensor import Tensor, asarray, on_device_of, strided_view as as_strided, zeros_on
from ._common import (ABSENT, EMPTY, FUNCTIONS, broadcast_error, check_same_dtype,
                      commit_inplace, formula_helper, kernel_error, promote, require_tensor)
from ._formula_helpers import helper
from ._namespaces import array_fn
from ._registry import NONDIFF, apply_op, defop
from .elementwise import DIV_SCALAR, MUL_SCALAR, _erf, _sigmoid
from .linalg import _matmul_forward, _numel, in_float32, matmul
from .reduction import _mean_forward, _var_forward


# ndarray.sum() and .max() without their Python wrappers (the same reductions; pass
# axis=None, the methods' default, as a ufunc's is 0)
_add, _max, _min = np.add.reduce, np.maximum.reduce, np.minimum.reduce


# --- linear ------------------------------------------------------------------------------
# Note [linear's graph]: the reference's F.linear with a bias is addmm(bias, x, w.t())
# (AddmmBackward0 over the bias, x and TBackward0 of the weight; an input of other than
# 2 dims is viewed to 2 dims and the result viewed back: ViewBackward0 on both sides;
# when it is not contiguous, matmul(x, w.t()) + bias), and without a bias matmul(x,
# w.t()). chainrule records the same nodes, so a printed grad_fn chain reads the same.
# The weight's gradient costs no copy: the product g^T @ x is made in the weight's
# layout and handed through TBackward0 as a view.
@in_float32                     # (bfloat16: the bias added before the one rounding)
def _addmm_forward(bias, mat1, mat2):
    if mat1.dtype.kind == "b":        # no bool kernel (a linear layer's fast path gets here)
        raise _NO_BOOL_ADDMM(mat1.dtype)
    out = _matmul_forward(mat1, mat2)
    out += bias
    return out


_NO_BOOL_ADDMM = kernel_error("addmm_impl_cpu_")


@helper
def linear_grad_weight(F, g, input):
    """g^T @ conj(input), with the batch dims of ``input`` folded into the rows."""
    if len(input.shape) == 1:
        return F.outer(g, F.conj(input))
    if len(input.shape) == 2:
        return F.matmul(F.transpose(g, 0, 1), F.conj(input))
    rows = _numel(tuple(input.shape)[:-1])
    g2 = F.reshape(g, (rows, g.shape[-1]))
    x2 = F.reshape(input, (rows, input.shape[-1]))
    return F.matmul(F.transpose(g2, 0, 1), F.conj(x2))


ADDMM = defop("addmm", _addmm_forward, inputs=("self", "mat1", "mat2"),
              node_name="AddmmBackward0",
              vjp=(lambda F, g, self_shape: F.sum_to(g, tuple(self_shape)),
                   lambda F, g, mat2: F.matmul(g, F.adjoint(mat2)),
                   lambda F, g, mat1: F.t(F.linear_grad_weight(g, mat1))),
              jvp=lambda F, t, mat1, mat2: F.matmul(t[1], mat2) + F.matmul(mat1, t[2]) + t[0])


# --- convolution (1-, 2- and 3-D, plain and transposed) ------------------------------------
# Note [convolution entries]: one table op ``convolution`` for every dimensionality and
# the transposed flag (the reference's ConvolutionBackward0). A transposed convolution
# is the input gradient of the plain one whose weight is the same array read as
# (out=C_in, in/groups=C_out/groups, *k). The two backward convolutions are table ops
# too, so that double backward works. Spatial dims are the trailing len(stride) ones.
def _out_size(size, pad, kernel, stride, dilation):
    return (size + pad[0] + pad[1] - dilation * (kernel - 1) - 1) // stride + 1


def _im2col(x, kernel, stride, padding, dilation, groups, outs=None):
    """Columns (groups, C/groups*prod(k), N*prod(out)) of the padded input, and the output
    sizes (``outs`` when given: a transposed convolution's output padding may leave rows
    no output reads)."""
    if any(p[0] or p[1] for p in padding):
        x = np.pad(x, ((0, 0), (0, 0)) + tuple(padding))
    n, c = x.shape[:2]
    if outs is None:
        outs = tuple(_out_size(s, (0, 0), k, st, d)
                     for s, k, st, d in zip(x.shape[2:], kernel, stride, dilation))
    s = x.strides
    tap_strides = tuple(s[2 + i] * dilation[i] for i in range(len(kernel)))
    out_strides = tuple(s[2 + i] * stride[i] for i in range(len(kernel)))
    windows = as_strided(x, (c,) + tuple(kernel) + (n,) + tuple(outs),
                         (s[1],) + tap_strides + (s[0],) + out_strides, writeable=False)
    return windows.reshape(groups, c // groups * _numel(kernel), n * _numel(outs)), outs


def _grouped(w, groups):
    o = w.shape[0]
    return w.reshape(groups, o // groups, _numel(w.shape[1:]))


def _channels_first(prod, channels, n, outs):
    """(G, C/G, N*prod(outs)) -> (N, C, *outs)."""
    nd = len(outs)
    prod = prod.reshape((channels, n) + tuple(outs))
    return prod.transpose((1, 0) + tuple(range(2, nd + 2)))


def _add_bias(prod, bias):
    dtype = np.result_type(prod, bias) if bias.size else prod.dtype
    out = np.empty_like(prod, dtype, order="C")
    if bias.size:
        np.add(prod, bias.reshape((-1,) + (1,) * (prod.ndim - 2)), out=out)
    else:
        np.copyto(out, prod)
    return out


def _conv_plain(x, w, stride, padding, dilation, groups):
    cols, outs = _im2col(x, w.shape[2:], stride, padding, dilation, groups)
    prod = np.matmul(_grouped(w, groups), cols)                 # (G, O/G, N*prod(outs))
    return _channels_first(prod, w.shape[0], x.shape[0], outs)


@in_float32
def _conv_forward(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        shape = _transposed_shape(x.shape, w.shape, stride, padding, dilation, output_padding,
                                  groups)
        return _add_bias(_input_grad_forward(x, w, shape, stride, padding, dilation, groups), bias)
    return _add_bias(_conv_plain(x, w, stride, padding, dilation, groups), bias)


def _transposed_shape(xs, ws, stride, padding, dilation, output_padding, groups):
    sizes = tuple((xs[2 + i] - 1) * stride[i] - sum(padding[i]) + dilation[i] * (ws[2 + i] - 1)
                  + output_padding[i] + 1 for i in range(len(stride)))
    return (xs[0], ws[1] * groups) + sizes


@in_float32
def _weight_grad_forward(x, g, weight_shape, stride, padding, dilation, groups):
    o = weight_shape[0]
    cols, _ = _im2col(x, weight_shape[2:], stride, padding, dilation, groups, g.shape[2:])
    g2 = np.moveaxis(g, 1, 0).reshape(groups, o // groups, cols.shape[2])
    return np.matmul(g2, cols.transpose(0, 2, 1)).reshape(weight_shape)


@in_float32
def _input_grad_forward(g, w, input_shape, stride, padding, dilation, groups):
    """col2im of W^T g: each kernel tap adds its slice of columns back into place."""
    n, c = input_shape[:2]
    kernel, outs = w.shape[2:], g.shape[2:]
    g2 = np.moveaxis(g, 1, 0).reshape(groups, w.shape[0] // groups, n * _numel(outs))
    cols = np.matmul(_grouped(w, groups).transpose(0, 2, 1), g2)
    cols = cols.reshape((c, _numel(kernel), n) + tuple(outs))
    padded = np.zeros((c, n) + tuple(s + sum(p) for s, p in zip(input_shape[2:], padding)),
                      cols.dtype)
    padded = on_device_of(padded, cols)
    for t, tap in enumerate(np.ndindex(*kernel)):     # a loop over kernel taps, not pixels
        where = tuple(slice(i * d, i * d + s * (o - 1) + 1, s)
                      for i, d, s, o in zip(tap, dilation, stride, outs))
        padded[(slice(None), slice(None)) + where] += cols[:, t]
    inner = tuple(slice(p[0], p[0] + s) for p, s in zip(padding, input_shape[2:]))
    out = padded[(slice(None), slice(None)) + inner]
    return np.moveaxis(out, 0, 1).copy(order="C")


_CONV_ATTRS = ("stride", "padding", "dilation", "groups")


def _conv_attrs(stride, padding, dilation, groups):
    return {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}


def _convolution_attrs(stride, padding, dilation, transposed, output_padding, groups):
    return {"stride": stride, "padding": padding, "dilation": dilation,
            "transposed": transposed, "output_padding": output_padding, "groups": groups}


@helper
def conv_bias_tangent(F, t, dims):
    if t is None or tuple(t.shape) == (0,):
        return 0
    return F.reshape(t, (-1,) + (1,) * dims)


@helper
def conv_vjp_input(F, g, weight, input_shape, stride, padding, dilation, transposed, groups):
    if transposed:
        return F._conv_cropped(g, F.conj(weight), tuple(input_shape), stride, padding, dilation,
                               groups)
    return F._conv_input_grad(g, F.conj(weight), tuple(input_shape), stride, padding, dilation,
                              groups)


@helper
def conv_vjp_weight(F, g, input, weight_shape, stride, padding, dilation, transposed, groups):
    if transposed:
        return F._conv_weight_grad(g, F.conj(input), tuple(weight_shape), stride, padding,
                                   dilation, groups)
    return F._conv_weight_grad(F.conj(input), g, tuple(weight_shape), stride, padding, dilation,
                               groups)


@helper
def conv_jvp(F, t, input, weight, stride, padding, dilation, transposed, output_padding,
             groups):
    conv = F._conv_transposed if transposed else F._conv
    args = (stride, padding, dilation, output_padding, groups) if transposed else \
        (stride, padding, dilation, groups)
    return (conv(t[0], weight, *args) + conv(input, t[1], *args)
            + F.conv_bias_tangent(t[2], len(stride)))


CONV = defop("convolution", _conv_forward, inputs=("input", "weight", "bias"),
             attrs=("stride", "padding", "dilation", "transposed", "output_padding", "groups"),
             vjp=(lambda F, g, weight, input_shape, stride, padding, dilation, transposed, groups:
                  F.conv_vjp_input(g, weight, input_shape, stride, padding, dilation,
                                   transposed, groups),
                  lambda F, g, input, weight_shape, stride, padding, dilation, transposed, groups:
                  F.conv_vjp_weight(g, input, weight_shape, stride, padding, dilation,
                                    transposed, groups),
                  lambda F, g, stride: F.sum(g, (0,) + tuple(range(2, len(stride) + 2)))),
             jvp=lambda F, t, input, weight, stride, padding, dilation, transposed,
             output_padding, groups: F.conv_jvp(t, input, weight, stride, padding, dilation,
                                                transposed, output_padding, groups))
CONV_INPUT_GRAD = defop(
    "conv2d_input_grad", _input_grad_forward, inputs=("grad_output", "weight"),
    attrs=("input_shape",) + _CONV_ATTRS,
    vjp=(lambda F, g, weight, grad_output_shape, stride, padding, dilation, groups:
         F._conv_cropped(g, F.conj(weight), tuple(grad_output_shape), stride, padding, dilation,
                         groups),
         lambda F, g, grad_output, weight_shape, stride, padding, dilation, groups:
         F._conv_weight_grad(g, F.conj(grad_output), tuple(weight_shape), stride, padding,
                             dilation, groups)),
    jvp=lambda F, t, grad_output, weight, input_shape, stride, padding, dilation, groups:
        F._conv_input_grad(t[0], weight, input_shape, stride, padding, dilation, groups)
        + F._conv_input_grad(grad_output, t[1], input_shape, stride, padding, dilation,
                             groups))
CONV_WEIGHT_GRAD = defop(
    "conv2d_weight_grad", _weight_grad_forward, inputs=("input", "grad_output"),
    attrs=("weight_shape",) + _CONV_ATTRS,
    vjp=(lambda F, g, grad_output, input_shape, stride, padding, dilation, groups:
         F._conv_input_grad(F.conj(grad_output), g, tuple(input_shape), stride, padding,
                            dilation, groups),
         lambda F, g, input, grad_output_shape, stride, padding, dilation, groups:
         F._conv_cropped(F.conj(input), g, tuple(grad_output_shape), stride, padding, dilation,
                         groups)),
    jvp=lambda F, t, input, grad_output, weight_shape, stride, padding, dilation, groups:
        F._conv_weight_grad(t[0], grad_output, weight_shape, stride, padding, dilation,
                            groups)
        + F._conv_weight_grad(input, t[1], weight_shape, stride, padding, dilation, groups))


# The convolutions in both formula namespaces (normalised args). ``_conv_cropped`` is a
# plain convolution cut to ``shape``: the adjoint of an input gradient whose input had
# rows no output reads (a transposed convolution's output padding).
def _crop(out, shape):
    if tuple(out.shape) == tuple(shape):
        return out
    return out[tuple(slice(0, s) for s in shape)]


@array_fn("_conv")
def _conv_array(x, w, stride, padding, dilation, groups):
    return _conv_forward(x, w, ABSENT._data, stride, padding, dilation, False, None, groups)


@array_fn("_conv_transposed")
def _conv_transposed_array(x, w, stride, padding, dilation, output_padding, groups):
    return _conv_forward(x, w, ABSENT._data, stride, padding, dilation, True, output_padding,
                         groups)


@array_fn("_conv_cropped")
def _conv_cropped_array(x, w, shape, stride, padding, dilation, groups):
    return _crop(_conv_array(x, w, stride, padding, dilation, groups), shape)


array_fn("_conv_input_grad")(_input_grad_forward)
array_fn("_conv_weight_grad")(_weight_grad_forward)


@formula_helper
def _conv(x, w, stride, padding, dilation, groups):
    attrs = _convolution_attrs(stride, padding, dilation, False, (0,) * len(stride), groups)
    return apply_op(CONV, (x, w, ABSENT), attrs)


@formula_helper
def _conv_transposed(x, w, stride, padding, dilation, output_padding, groups):
    attrs = _convolution_attrs(stride, padding, dilation, True, output_padding, groups)
    return apply_op(CONV, (x, w, ABSENT), attrs)


@formula_helper
def _conv_cropped(x, w, shape, stride, padding, dilation, groups):
    return _crop(_conv(x, w, stride, padding, dilation, groups), shape)


@formula_helper
def _conv_input_grad(g, w, input_shape, stride, padding, dilation, groups):
    attrs = _conv_attrs(stride, padding, dilation, groups)
    attrs["input_shape"] = tuple(input_shape)
    return apply_op(CONV_INPUT_GRAD, (g, w), attrs)


@formula_helper
def _conv_weight_grad(x, g, weight_shape, stride, padding, dilation, groups):
    attrs = _conv_attrs(stride, padding, dilation, groups)
    attrs["weight_shape"] = tuple(weight_shape)
    return apply_op(CONV_WEIGHT_GRAD, (x, g), attrs)


# --- activations ---------------------------------------------------------------------
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_CUBIC = 0.044715


def _gelu_forward(x, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)
        return 0.5 * x * (1 + np.tanh(inner))
    return (0.5 * x * (1 + _erf(x * _INV_SQRT_2))).astype(x.dtype, copy=False)   # (bfloat16)


@helper
def gelu_derivative(F, x, approximate):
    if approximate == "tanh":
        th = F.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x))
        slope = _SQRT_2_OVER_PI * (1 + 3 * _GELU_CUBIC * x * x)
        return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * slope
    return 0.5 * (1 + F.erf(x * _INV_SQRT_2)) + x * F.exp(-0.5 * x * x) * _INV_SQRT_2PI


@helper
def silu_derivative(F, x):
    s = F.sigmoid(x)
    return s * (1 + x * (1 - s))


@helper
def softplus_derivative(F, x, beta, threshold):
    s = F.sigmoid(x * beta)
    return F.where(x * beta > threshold, s * 0 + 1, s)


def _softplus_forward(x, beta, threshold):
    bx = x * beta
    soft = np.logaddexp(0, bx) / beta
    return np.where(bx > threshold, x, soft).astype(x.dtype, copy=False)


GELU = defop("gelu", _gelu_forward, attrs=("approximate",),
             vjp=(lambda F, g, self, approximate: g * F.gelu_derivative(self, approximate),),
             jvp=lambda F, t, self, approximate: t[0] * F.gelu_derivative(self, approximate))
SILU = defop("silu", lambda x: x * _sigmoid(x),
             vjp=(lambda F, g, self: g * F.silu_derivative(self),),
             jvp=lambda F, t, self: t[0] * F.silu_derivative(self))
SOFTPLUS = defop("softplus", _softplus_forward, attrs=("beta", "threshold"),
                 vjp=(lambda F, g, self, beta, threshold:
                      g * F.softplus_derivative(self, beta, threshold),),
                 jvp=lambda F, t, self, beta, threshold:
                     t[0] * F.softplus_derivative(self, beta, threshold))


# --- losses ----------------------------------------------------------------------------
def _reduce_array(losses, reduction):
    if reduction == "none":
        return losses
    total = np.sum(losses)
    if reduction == "sum":
        return asarray(total)
    with np.errstate(invalid="ignore"):          # the mean of nothing is nan, silently
        return asarray(total / losses.size)


@helper
def reduce_loss(F, losses, reduction):
    if reduction == "none":
        return losses
    return F.sum(losses) if reduction == "sum" else F.mean(losses)


@helper
def mse_loss_grad(F, g, self, target, reduction):
    diff = (self - target) * 2
    if reduction == "mean":
        diff = diff / max(_numel(tuple(diff.shape)), 1)
    return diff * g


MSE_LOSS = defop("mse_loss", lambda a, b, reduction: _reduce_array(np.square(a - b), reduction),
                 inputs=("self", "target"), attrs=("reduction",),
                 vjp=(lambda F, g, self, target, reduction:
                      F.mse_loss_grad(g, self, target, reduction),
                      lambda F, g, self, target, reduction:
                      -F.mse_loss_grad(g, self, target, reduction)),
                 jvp=lambda F, t, self, target, reduction:
                     F.reduce_loss((self - target) * (t[0] - t[1]) * 2, reduction))


# --- smooth L1 and Huber losses (SmoothL1LossBackward0, HuberLossBackward0) ---------------
# Both are 0.5 d**2 / beta inside |d| < beta and linear outside (Huber: the same times
# beta, named delta); the input's gradient is the slope clamp(d / beta, -1, 1) (times
# delta for Huber), the target's its negation.
def _smooth_l1_forward(a, b, reduction, beta, huber):
    d = a - b
    ad = np.abs(d)
    if huber:
        losses = np.where(ad < beta, 0.5 * d * d, beta * (ad - 0.5 * beta))
    else:
        losses = np.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)
    return _reduce_array(losses.astype(a.dtype, copy=False), reduction)


@helper
def smooth_l1_slope(F, self, target, beta, huber):
    d = self - target
    inside = d if huber else d / beta
    edge = beta if huber else 1.0
    return F.where(d < -beta, -edge, F.where(d > beta, edge, inside))


@helper
def smooth_l1_grad(F, g, self, target, reduction, beta, huber):
    slope = smooth_l1_slope(F, self, target, beta, huber)
    if reduction == "mean":
        slope = slope / max(_numel(tuple(slope.shape)), 1)
    return slope * g


def _smooth_l1_op(name, node_name):
    return defop(
        name, _smooth_l1_forward, inputs=("self", "target"),
        attrs=("reduction", "beta", "huber"), node_name=node_name,
        vjp=(lambda F, g, self, target, reduction, beta, huber:
             F.smooth_l1_grad(g, self, target, reduction, beta, huber),
             lambda F, g, self, target, reduction, beta, huber:
             -F.smooth_l1_grad(g, self, target, reduction, beta, huber)),
        jvp=lambda F, t, self, target, reduction, beta, huber: F.reduce_loss(
            F.smooth_l1_slope(self, target, beta, huber) * _tangent_difference(t), reduction))


def _tangent_difference(t):
    if t[1] is None:
        return t[0]
    return -t[1] if t[0] is None else t[0] - t[1]


SMOOTH_L1_LOSS = _smooth_l1_op("smooth_l1_loss", "SmoothL1LossBackward0")
HUBER_LOSS = _smooth_l1_op("huber_loss", "HuberLossBackward0")


def smooth_l1_loss(input, target, reduction, beta, huber=False):
    """smooth_l1_loss (or huber_loss, ``beta`` its delta) on checked arguments."""
    a, b = promote(input, target)
    if tuple(a.shape) != tuple(b.shape):          # the reference expands both first
        shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
        a, b = (t if tuple(t.shape) == shape else t.expand(shape) for t in (a, b))
    return apply_op(HUBER_LOSS if huber else SMOOTH_L1_LOSS, (a, b),
                    {"reduction": reduction, "beta": float(beta), "huber": huber})


def _nll_forward(x, target, weight, total_weight, safe_target, element_weight, divisor,
                 reduction, ignored):
    """The table op's forward: the loss from the attributes; the tensor inputs beyond
    ``x`` are there to be saved (Note [nll_loss's saved tensors])."""
    return _nll_values(x, safe_target, element_weight, divisor, reduction, ignored)


def _nll_values(x, target, element_weight, total_weight, reduction, ignored):
    """The loss of x: (N, C, *d), or (C,) as the one sample (1, C)."""
    if x.ndim == 1:
        return _nll_samples(x[None], target, element_weight, total_weight, reduction,
                            ignored).reshape(())
    return _nll_samples(x, target, element_weight, total_weight, reduction, ignored)


def _nll_samples(x, target, element_weight, total_weight, reduction, ignored):
    """x: (N, C, *d); target: class indices (N, *d), ignored ones already 0;
    ``ignored``: where target was ignore_index (None: nowhere). Ignored entries add
    nothing, not even a nan or inf of x, like the reference."""
    if x.ndim == 2:
        picked = x[np.arange(x.shape[0]), target]
    else:
        picked = np.take_along_axis(x, target[:, None], axis=1)[:, 0]
    if ignored is not None:
        picked = np.where(ignored, x.dtype.type(0), picked)
    if reduction == "none":
        return -picked if element_weight is None else -(picked * element_weight)
    total = -(_add(picked, None) if element_weight is None else picked.dot(element_weight)
              if picked.ndim == 1 else _add(picked * element_weight, None))
    if reduction == "sum":
        return asarray(total)
    return asarray(_divide_quietly(total, total_weight, x.dtype))


def _quiet_divisor(divisor):
    """Whether the total weight (in the gradient's dtype) is zero or not finite
    (everything ignored: 0 / 0): dividing by it, or multiplying by the result, gives
    IEEE's nan/inf/0, which the reference returns without warnings."""
    return not (divisor != 0 and math.isfinite(divisor))


def _divide_quietly(value, total_weight, dtype):
    """``value / total_weight`` in ``dtype``, without NumPy's warnings for a quiet
    divisor; the errstate is entered only then (it costs a microsecond)."""
    if type(total_weight) is MetaArray:
        return value / total_weight.astype(dtype)
    divisor = dtype.type(total_weight)
    if not _quiet_divisor(divisor):
        return value / divisor
    with np.errstate(invalid="ignore", divide="ignore"):
        return value / divisor


def _nll_backward(grad, safe_target, element_weight, divisor, reduction, ignored,
                  self_shape):
    """The input's gradient; an unbatched input's (C,) is that of the one sample (1, C)."""
    if len(self_shape) == 1:
        return _nll_samples_backward(grad, safe_target, element_weight, divisor, reduction,
                                     ignored, (1,) + tuple(self_shape)).reshape(self_shape)
    return _nll_samples_backward(grad, safe_target, element_weight, divisor, reduction,
                                 ignored, self_shape)


def _nll_samples_backward(grad, safe_target, element_weight, divisor, reduction, ignored,
                          self_shape):
    """The dense gradient: -weight * grad at each target class, zero elsewhere and at
    ignored entries (also when everything is ignored: 0 * (grad / 0) would be nan)."""
    quiet = reduction == "mean" and type(divisor) is not MetaArray and \
        _quiet_divisor(grad.dtype.type(divisor))
    scale = _divide_quietly(grad, divisor, grad.dtype) if reduction == "mean" else grad
    out = zeros_on(self_shape, grad.dtype, grad)
    if element_weight is None:
        values = -scale
    elif quiet:                         # g / 0 = inf: a zero weight gives nan, quietly
        with np.errstate(invalid="ignore"):
            values = -(element_weight * scale)
    else:
        values = -(element_weight * scale)
    if ignored is not None:
        values = np.where(ignored, grad.dtype.type(0), values)
    if len(self_shape) == 2:
        out[np.arange(self_shape[0]), safe_target] = values      # a 0-d value broadcasts
    else:
        values = np.broadcast_to(values, safe_target.shape)
        np.put_along_axis(out, safe_target[:, None], values[:, None], axis=1)
    return out


# Note [nll_loss's saved tensors]
#     The reference's nll_loss node saves self, target, weight and total_weight, so
#     saved-tensor hooks pack (and backward unpacks) those four, in that order, and
#     ``_saved_<name>`` reads them. Here they are the op's tensor inputs (no
#     gradient; an absent weight is ABSENT, Note [absent tensor input]) and the VJP
#     names them so that they are saved; the formulas themselves compute from the
#     attributes prepared once in the forward: ``safe_target`` (ignored entries set
#     to 0), ``element_weight``, ``divisor`` (what a mean divides by) and ``ignored``.
_NLL_ATTRS = ("safe_target", "element_weight", "divisor", "reduction", "ignored")


def _nll_vjp(F, g, self, target, weight, total_weight, safe_target, element_weight, divisor,
             reduction, ignored):
    return F._nll_loss_backward(g, safe_target, element_weight, divisor, reduction, ignored,
                                tuple(self.shape))


def _nll_op(name, node_name):
    return defop(name, _nll_forward, inputs=("self", "target", "weight", "total_weight"),
                 attrs=_NLL_ATTRS, vjp=(_nll_vjp, NONDIFF, NONDIFF, NONDIFF),
                 jvp=lambda F, t, safe_target, element_weight, divisor, reduction, ignored:
                     F._nll_loss(t[0], safe_target, element_weight, divisor, reduction,
                                 ignored), node_name=node_name)


# One kernel, two names: the reference's nll_loss2d (NllLoss2DBackward0) takes the
# 4-d inputs, and the other K-dimensional ones as (N, C, 1, rest) views (nll_loss).
NLL_LOSS = _nll_op("nll_loss", "NllLossBackward0")
NLL_LOSS2D = _nll_op("nll_loss2d", "NllLoss2DBackward0")
# The backward is linear in its gradient; its own VJP is the forward again.
NLL_LOSS_BACKWARD = defop(
    "nll_loss_backward", _nll_backward, inputs=("grad_output",),
    attrs=_NLL_ATTRS + ("self_shape",),
    vjp=(lambda F, g, safe_target, element_weight, divisor, reduction, ignored:
         F._nll_loss(g, safe_target, element_weight, divisor, reduction, ignored),),
    jvp=lambda F, t, safe_target, element_weight, divisor, reduction, ignored, self_shape:
        F._nll_loss_backward(t[0], safe_target, element_weight, divisor, reduction, ignored,
                             self_shape))

array_fn("_nll_loss")(_nll_values)
array_fn("_nll_loss_backward")(_nll_backward)


def _nll_attrs(target, element_weight, total_weight, reduction, ignored):
    return {"safe_target": target, "element_weight": element_weight, "divisor": total_weight,
            "reduction": reduction, "ignored": ignored}


@formula_helper
def _nll_loss(x, target, element_weight, total_weight, reduction, ignored):
    return apply_op(NLL_LOSS, (x, ABSENT, ABSENT, ABSENT),
                    _nll_attrs(target, element_weight, total_weight, reduction, ignored))


@formula_helper
def _nll_loss_backward(g, target, element_weight, total_weight, reduction, ignored,
                       self_shape):
    attrs = _nll_attrs(target, element_weight, total_weight, reduction, ignored)
    attrs["self_shape"] = tuple(self_shape)
    return apply_op(NLL_LOSS_BACKWARD, (g,), attrs)


# --- argument handling for chainrule.nn.functional -------------------------------------
def _reshape(t, shape):
    return FUNCTIONS["reshape"](t, shape)


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``."""
    if _plain_linear(input, weight, bias):
        return _addmm_linear(input, weight, bias)
    return _checked_linear(input, weight, bias)


def _addmm_linear(x, w, b):
    """addmm(b, x, w.t()), x viewed to 2 dims and back; a non-contiguous input of other
    than 2 dims: matmul(x, w.t()) + b (Note [linear's graph])."""
    wt = FUNCTIONS["t"](w)
    shape = x._data.shape
    if len(shape) == 2:
        return apply_op(ADDMM, (b, x, wt), EMPTY)
    if not x._data.flags.c_contiguous:
        return FUNCTIONS["add"](matmul(x, wt), b)
    out = apply_op(ADDMM, (b, FUNCTIONS["view"](x, (-1, shape[-1])), wt), EMPTY)
    return FUNCTIONS["view"](out, shape[:-1] + wt._data.shape[1:])


def _plain_linear(x, w, b):
    """The call of every layer, for which all of _checked_linear's checks pass: three
    plain Tensors of one dtype, a matrix weight fitting the input's last dim, a bias of
    the weight's rows (checked here with no calls)."""
    if type(x) is not Tensor or type(w) is not Tensor or type(b) is not Tensor:
        return False
    xa, wa, ba = x._data, w._data, b._data
    return xa.dtype == wa.dtype == ba.dtype and wa.ndim == 2 and xa.ndim > 0 and \
        xa.shape[-1] == wa.shape[1] and ba.shape == wa.shape[:1]


def _checked_linear(input, weight, bias):
    x = require_tensor(input, "linear", "input", 1)
    w = require_tensor(weight, "linear", "weight", 2)
    xs, ws = x._data.shape, w._data.shape
    if not xs or not ws:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{len(xs)}D and {len(ws)}D")
    if len(ws) != 2:
        return _linear_vector_weight(x, w, bias)
    if bias is None:                  # matmul's checks, shapes first (Note [product checks])
        return matmul(x, FUNCTIONS["t"](w))
    b = require_tensor(bias, "linear", "bias", 3)
    # addmm's: dtypes first, the bias's against the weight's before the input's
    check_same_dtype(b, w, "self and mat2 must have the same dtype, but got {a} and {b}")
    check_same_dtype(x, w, "mat1 and mat2 must have the same dtype, but got {a} and {b}")
    if xs[-1] != ws[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_numel(xs[:-1])}x"
                           f"{xs[-1]} and {ws[1]}x{ws[0]})")
    if b._data.shape != ws[:1]:
        _check_bias_broadcast(b._data.shape, xs[:-1] + ws[:1])
    return _addmm_linear(x, w, b)


def _linear_vector_weight(x, w, bias):
    """The reference accepts a 1-D weight (a dot product) when there is no bias."""
    if bias is not None:
        raise RuntimeError(f"mat2 must be a matrix, got {w._data.ndim}-D tensor")
    if w._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{w._data.ndim}D")
    return matmul(x, w)


def _check_bias_broadcast(bias_shape, out_shape):
    try:
        fits = np.broadcast_shapes(bias_shape, out_shape) == tuple(out_shape)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"The expanded size of the tensor ({out_shape[-1]}) must match the "
                           f"existing size ({bias_shape[-1]}) at non-singleton dimension "
                           f"{len(out_shape) - 1}.  Target sizes: {list(out_shape)}.  Tensor "
                           f"sizes: {list(bias_shape)}")


def _ntuple(value, nd, name):
    """``value`` (an int or a sequence) as ``nd`` ints, with the reference's message."""
    if isinstance(value, int):
        return (value,) * nd
    value = tuple(value)
    if len(value) == 1:
        return value * nd
    if len(value) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return value


def _pair(value, name):
    return _ntuple(value, 2, name)


def _conv_padding(padding, kernel, stride, dilation):
    """((before, after), ...) per spatial dim from an int, a tuple, 'valid' or 'same'."""
    nd = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return tuple((t // 2, t - t // 2) for t in total)
    pad = _ntuple(padding, nd, "padding")
    if min(pad) < 0:
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pad)


def _check_conv_shapes(xs, ws, bias, groups, transposed):
    if len(ws) != len(xs):
        raise RuntimeError(f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional "
                           f"weight {list(ws)}, but got {len(xs)}-dimensional input of size "
                           f"{list(xs)} instead")
    if ws[0] % groups:
        shown = [list(ws)] if transposed else list(ws)      # (the reference's own brackets)
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size {shown} instead")
    channels = ws[0] if transposed else ws[1] * groups
    flag = "transposed=1" if transposed else f"groups={groups}"
    if xs[1] != channels:
        raise RuntimeError(f"Given {flag}, weight of size {list(ws)}, expected "
                           f"input{list(xs)} to have {channels} channels, but got "
                           f"{xs[1]} channels instead")
    out_channels = ws[1] * groups if transposed else ws[0]
    flag = "transposed=1, " if transposed else ""
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise RuntimeError(f"Given {flag}weight of size {list(ws)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size "
                           f"{list(bias.shape)} instead")


def _sizes(values):
    return " x ".join(str(v) for v in values)


def _check_conv_size(xs, ws, padding, dilation):
    nd = len(padding)
    padded = [xs[2 + i] + sum(padding[i]) for i in range(nd)]
    kernel = [dilation[i] * (ws[2 + i] - 1) + 1 for i in range(nd)]
    if any(p < k for p, k in zip(padded, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: ({_sizes(padded)}). "
                           f"Kernel size: ({_sizes(kernel)}). Kernel size can't be greater "
                           "than actual input size")


def _check_positive(stride, dilation, groups):
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")


def _conv_operands(name, nd, input, weight, bias):
    """(x batched, w, bias or ABSENT, unbatched) after the reference's tensor checks."""
    x = require_tensor(input, name, "input", 1)
    w = require_tensor(weight, name, "weight", 2)
    if x._data.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(x._data.shape)}")
    if w._data.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    unbatched = x._data.ndim == nd + 1
    if unbatched:                  # the reference's nodes: UnsqueezeBackward0, SqueezeBackward1
        x = FUNCTIONS["unsqueeze"](x, 0)
    b = ABSENT if bias is None else require_tensor(bias, name, "bias", 3)
    return x, w, b, unbatched


def _finish(out, unbatched):
    return FUNCTIONS["squeeze"](out, 0) if unbatched else out


# --- conv_tbc: (time, batch, channels) input, (width, in, out) weight, one node ----------
def _pad_time(x, pad):
    """``x`` padded with ``pad`` zeros at both ends of dim 0 (cropped where negative)."""
    if pad >= 0:
        return np.pad(x, [(pad, pad)] + [(0, 0)] * (x.ndim - 1))
    return x[-pad:x.shape[0] + pad]


def _conv_tbc_forward(x, w, b, pad):
    """The kernel's windows over time (a strided view, as sliding_window_view makes
    it, but one device arrays have too), contracted with the weight."""
    x = _pad_time(x, pad)
    steps = x.shape[0] - w.shape[0] + 1
    if steps < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {steps}: "
                           f"[{steps}, {x.shape[1]}, {w.shape[2]}]")
    windows = as_strided(x, (steps,) + x.shape[1:] + (w.shape[0],),
                         x.strides + (x.strides[0],), writeable=False)
    return np.einsum("tbik,kio->tbo", windows, w) + b


# Its gradients are conv_tbcs too: the input's is g with the weight flipped in time and
# transposed (padded so that it covers the input's length), the weight's is the input
# (batch and channels swapped) with g as the weight.
CONV_TBC = defop(
    "conv_tbc", _conv_tbc_forward, inputs=("self", "weight", "bias"), attrs=("pad",),
    vjp=(lambda F, g, weight, pad: F._conv_tbc(g, F.transpose(F.flip(weight, (0,)), 1, 2),
                                               F.sum(weight, (0, 2)) * 0,
                                               weight.shape[0] - 1 - pad),
         lambda F, g, self, pad: F._conv_tbc(F.transpose(self, 1, 2), g,
                                             F.sum(g, (0, 1)) * 0, pad),
         lambda F, g: F.sum(g, (0, 1))),
    jvp=lambda F, t, self, weight, pad: F._conv_tbc(t[0], weight, t[2], pad)
    + F._conv_tbc(self, t[1], t[2] * 0, pad))


array_fn("_conv_tbc")(_conv_tbc_forward)


@formula_helper
def _conv_tbc(input, weight, bias, pad):
    """conv_tbc after its checks (for the formulas)."""
    return apply_op(CONV_TBC, (input, weight, bias), {"pad": int(pad)})


def conv_tbc(input, weight, bias, pad=0):
    """The reference's checks of conv_tbc's arguments, then the op."""
    for t, message in ((input, "Input must have 3 dims: time, batch, in_channel"),
                       (weight, "Weight tensor must have 3 dims: kernel_width, in_channels, "
                                "out_channels.")):
        if t.dim() != 3:
            raise RuntimeError(message)
    if bias.dim() != 1 or bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    return _conv_tbc(*promote(input, weight, bias), pad)


def convolution_nd(name, nd, input, weight, bias, stride, padding, dilation, groups):
    """conv1d/conv2d/conv3d: one ``convolution`` node (Note [convolution entries])."""
    x, w, b, unbatched = _conv_operands(name, nd, input, weight, bias)
    knd = w._data.ndim - 2
    stride = _ntuple(_ntuple(stride, nd, "stride"), knd, "stride")
    dilation = _ntuple(_ntuple(dilation, nd, "dilation"), knd, "dilation")
    _check_positive(stride, dilation, groups)
    _check_conv_shapes(x._data.shape, w._data.shape, bias, groups, False)
    check_same_dtype(x, w)
    if bias is not None:
        check_same_dtype(x, b)
    pad = _conv_padding(padding, w._data.shape[2:], stride, dilation)
    _check_conv_size(x._data.shape, w._data.shape, pad, dilation)
    if any(a != b for a, b in pad):
        x, pad = _pad_same_extra(x, pad)
    attrs = _convolution_attrs(stride, pad, dilation, False, (0,) * knd, groups)
    return _finish(apply_op(CONV, (x, w, b), attrs), unbatched)


def _pad_same_extra(x, pad):
    """padding='same' with an odd total: the reference pads the extra element at the end
    as its own node (ConstantPadNdBackward0) and convolves with the symmetric rest."""
    warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                  "require a zero-padded copy of the input be created", stacklevel=4)
    extra = ((0, 0), (0, 0)) + tuple((0, b - a) for a, b in pad)
    return _constant_pad(x, extra, 0.0), tuple((a, a) for a, _ in pad)


def _check_output_padding(output_padding, stride, dilation):
    if min(output_padding) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if all(o < s or o < d for o, s, d in zip(output_padding, stride, dilation)):
        return
    if len(stride) == 1:                     # the reference reports 1-D as a height-1 2-D
        output_padding, stride, dilation = (0,) + output_padding, (1,) + stride, (1,) + dilation
    names = ("depth", "height", "width")[-len(stride):]
    parts = [f"{kind}_{n}: {v}" for kind, vs in (("output_padding", output_padding),
                                                 ("stride", stride), ("dilation", dilation))
             for n, v in zip(names, vs)]
    raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                       "got " + " ".join(parts))


def conv_transpose_nd(name, nd, input, weight, bias, stride, padding, output_padding, groups,
                      dilation):
    """conv_transpose1d/2d/3d: one ``convolution`` node with transposed=True."""
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    x, w, b, unbatched = _conv_operands(name, nd, input, weight, bias)
    knd = w._data.ndim - 2
    stride, padding, output_padding, dilation = (
        _ntuple(_ntuple(v, nd, n), knd, n) for v, n in
        ((stride, "stride"), (padding, "padding"), (output_padding, "output_padding"),
         (dilation, "dilation")))
    _check_positive(stride, dilation, groups)
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    _check_output_padding(output_padding, stride, dilation)
    _check_conv_shapes(x._data.shape, w._data.shape, bias, groups, True)
    check_same_dtype(x, w)
    if bias is not None:
        check_same_dtype(x, b)
    pad = tuple((p, p) for p in padding)
    _check_transposed_size(x._data.shape, w._data.shape, stride, pad, dilation, output_padding,
                           groups)
    attrs = _convolution_attrs(stride, pad, dilation, True, output_padding, groups)
    return _finish(apply_op(CONV, (x, w, b), attrs), unbatched)


def _check_transposed_size(xs, ws, stride, pad, dilation, output_padding, groups):
    shape = _transposed_shape(xs, ws, stride, pad, dilation, output_padding, groups)
    if min(shape[2:]) <= 0:
        spatial = list(xs[2:]) if len(xs) > 3 else [1] + list(xs[2:])
        out = list(shape[2:]) if len(xs) > 3 else [1] + list(shape[2:])
        raise RuntimeError(f"Given input size per channel: ({_sizes(spatial)}). Calculated "
                           f"output size per channel: ({_sizes(out)}). Output size is too small")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation over (N, C, H, W) or unbatched (C, H, W) input."""
    return convolution_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return apply_op(GELU, (_floating_activation(input, "GeluKernelImpl"),),
                    {"approximate": approximate})


def silu(input):
    return apply_op(SILU, (_floating_activation(input, "silu_cpu", complex_ok=True),), EMPTY)


def softplus(input, beta=1.0, threshold=20.0):
    return apply_op(SOFTPLUS, (_floating_activation(input, "softplus_cpu"),),
                    {"beta": beta, "threshold": threshold})


# The pointwise entries' dtypes as the reference has them: clamping and thresholding
# keep integers; softsign and tanhshrink are compositions there, so complex numbers
# pass; every other kernel refuses bool, integers and complex numbers.
_INTEGER_ENTRIES = {"hardtanh", "threshold"}
_COMPLEX_ENTRIES = {"softsign", "tanhshrink"}
_KERNEL_NAMES = {"softshrink": "softshrink_check"}


def _check_pointwise_dtype(x, name, kernel, params):
    kind = x._data.dtype.kind
    if name == "hardtanh":
        _check_hardtanh_dtype(kind, params)
    refused = "bc" if name in _INTEGER_ENTRIES else "bui" if name in _COMPLEX_ENTRIES else "buic"
    if kind in refused:
        raise kernel_error(_KERNEL_NAMES.get(kernel, f"{kernel}_cpu"))(x._data.dtype)


def _check_hardtanh_dtype(kind, params):
    if kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if kind == "u" and min(params) < 0:
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")


def _floating_activation(input, kernel, complex_ok=False):
    """gelu, silu, softplus: the reference's kernels take floating inputs only."""
    kind = input._data.dtype.kind
    if kind in "bui" or (kind == "c" and not complex_ok):
        raise kernel_error(kernel)(input._data.dtype)
    return input


# --- losses: argument handling ---------------------------------------------------------
_REDUCTIONS = ("none", "mean", "sum")


def reduction_arg(size_average, reduce, reduction):
    """The reduction string, honouring the deprecated size_average/reduce pair."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", stacklevel=3)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def mse_loss(input, target, reduction, weight=None):
    if target._data.shape != input._data.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)
    a, b = promote(input, target)
    try:
        np.broadcast_shapes(a._data.shape, b._data.shape)
    except ValueError:
        raise broadcast_error(a._data.shape, b._data.shape) from None
    if weight is None:
        return apply_op(MSE_LOSS, (a, b), {"reduction": reduction})
    if weight._data.shape != input._data.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = apply_op(MSE_LOSS, (a, b), {"reduction": "none"}) * weight
    if reduction == "none":
        return weighted
    return weighted.sum() if reduction == "sum" else weighted.sum() / weight.sum()


def _class_weights(weight, n_classes, like):
    if weight is None:
        return None
    if weight.requires_grad:
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect "
                           "to argument 'weight'. This input cannot have requires_grad True.")
    if weight._data.shape != (n_classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight._data.shape)}")
    check_same_dtype(like, weight)
    return weight._data


def _check_nll_target(x, target):
    _check_nll_shapes(x._data.shape, target._data.shape)
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{scalar_type_name(target._data.dtype)}")


def _check_nll_shapes(xs, ts):
    if not xs:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if len(xs) <= 2 and len(ts) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if len(xs) == 1:
        if ts and ts[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target "
                             f"size: {ts[0]}")
        return
    if (ts[0] if ts else 0) != xs[0]:
        raise ValueError(f"Expected input batch_size ({xs[0]}) to match target batch_size "
                         f"({ts[0] if ts else 0}).")
    if ts != xs[:1] + xs[2:]:
        raise RuntimeError(f"Expected target size {list(xs[:1] + xs[2:])}, got {list(ts)}")


def _nll_element_weights(t, class_weight, ignore_index, n_classes, dtype):
    """Targets with ignored entries set to 0, each element's weight (None: all 1), and
    where the ignored entries are (None: nowhere)."""
    # One maximum finds the common case (nothing ignored, all in range): negative
    # int64 targets (ignore_index=-100 among them) read as huge unsigned numbers.
    unsigned = t.view(np.uint64) if t.dtype == np.int64 and type(t) is np.ndarray else t
    in_range = not t.size or (_max(unsigned, None) < n_classes and
                              (unsigned is not t or _min(t, None) >= 0))   # (device: no uint64)
    if not 0 <= ignore_index < n_classes and in_range:
        return t, None if class_weight is None else class_weight[t], None
    ignored = t == ignore_index
    safe = np.where(ignored, 0, t)
    bad = (safe < 0) | (safe >= n_classes)
    if bad.any():
        raise IndexError(f"Target {safe[bad].flat[0]} is out of bounds.")
    keep = ~ignored
    if class_weight is None:
        return safe, keep.astype(dtype), ignored
    return safe, class_weight[safe] * keep, ignored


def nll_loss(input, target, weight, ignore_index, reduction):
    x = require_tensor(input, "nll_loss", "input", 1)
    target = require_tensor(target, "nll_loss", "target", 2)
    _check_nll_target(x, target)
    if type(target) is BatchedTensor or type(weight) is BatchedTensor:
        return _nll_loss_batched(x, target, weight, ignore_index, reduction)
    ndim = x._data.ndim
    if ndim == 3 or ndim > 4:
        return _nll_loss_folded(x, target, weight, ignore_index, reduction)
    return _nll_loss_kernel(x, target, weight, ignore_index, reduction)


def _nll_loss_folded(x, target, weight, ignore_index, reduction):
    """The reference's K-dimensional loss (other than 4-d): the 2-d kernel on the
    (N, C, 1, rest) view of the input and the (N, 1, rest) view of the target; a
    "none" loss is viewed back to the target's shape."""
    n, c = x._data.shape[:2]
    rest = math.prod(x._data.shape[2:])
    out = _nll_loss_kernel(_reshape(x, (n, c, 1, rest)), _reshape(target, (n, 1, rest)),
                           weight, ignore_index, reduction)
    return _reshape(out, tuple(target._data.shape)) if reduction == "none" else out


def _nll_loss_kernel(x, target, weight, ignore_index, reduction):
    """nll_loss on a (C,), (N, C) or (N, C, H, W) input (checked), recorded as the
    reference records it (Note [nll_loss's saved tensors])."""
    unbatched = x._data.ndim == 1
    t = target._data.reshape((1,) if unbatched else x._data.shape[:1] + x._data.shape[2:])
    n_classes = x._data.shape[0 if unbatched else 1]
    class_weight = _class_weights(weight, n_classes, x)
    safe, element_weight, ignored = _nll_element_weights(t, class_weight, ignore_index,
                                                         n_classes, x._data.dtype)
    total_weight = _nll_total_weight(t, element_weight, reduction)
    divisor = total_weight if reduction == "mean" else 0.0
    saved = (target, ABSENT if weight is None else weight,
             _nll_total_weight_tensor(total_weight, x._data))
    return apply_op(NLL_LOSS2D if x._data.ndim == 4 else NLL_LOSS, (x,) + saved,
                    _nll_attrs(safe, element_weight, divisor, reduction, ignored))


def _nll_total_weight(t, element_weight, reduction):
    """The weight of the elements not ignored (their count without class weights),
    0 for reduction "none", like the reference's total_weight; a meta one stays a
    MetaArray (it has no value)."""
    if reduction == "none":
        return 0.0
    if element_weight is None:
        return float(t.size)
    total = element_weight.sum()
    return total if type(total) is MetaArray else float(total)


def _nll_total_weight_tensor(total_weight, like):
    """total_weight as the 0-d tensor of the input's dtype and device that the node
    saves (Note [nll_loss's saved tensors])."""
    if type(total_weight) is MetaArray:
        return Tensor._wrap(total_weight.astype(like.dtype))
    return Tensor._wrap(on_device_of(np.array(total_weight, like.dtype), like))


def _nll_loss_batched(x, target, weight, ignore_index, reduction):
    """nll_loss of batched targets inside vmap (Note [batched tensors]), from table ops:
    the targets are values, so the gathers that pick each element's log-probability
    (and class weight) run on the whole batch instead of reading them. (Shared targets
    are attributes of the table op: Note [targets along a trailing dimension].)
    Ignored elements add nothing and get no gradient, as in the reference."""
    class_dim = 0 if x.ndim == 1 else 1
    kept = target != ignore_index
    safe = FUNCTIONS["unsqueeze"](FUNCTIONS["where"](kept, target, 0), class_dim)
    picked = FUNCTIONS["squeeze"](FUNCTIONS["gather"](x, class_dim, safe), class_dim)
    scale = kept.to(x.dtype) if weight is None else \
        FUNCTIONS["where"](kept, _picked_weights(weight, x, class_dim, safe), 0)
    if reduction == "mean":
        return _nll_mean(picked, kept, scale)
    losses = FUNCTIONS["where"](kept, -picked * scale, 0)
    return losses if reduction == "none" else losses.sum()


def _nll_mean(picked, kept, scale):
    """sum(w * loss) / sum(w) as the reference differentiates it: each kept element's
    share w / sum(w) (nan when the weights sum to 0), nothing to ignored ones; nan
    when the weights sum to 0."""
    total = scale.sum()
    with np.errstate(invalid="ignore", divide="ignore"):     # 0 / 0: the quiet nan
        share = FUNCTIONS["where"](kept, scale / total, 0)
    mean = (-picked * share).sum()
    return FUNCTIONS["where"](total == 0, float("nan"), mean)


def _picked_weights(weight, x, class_dim, index):
    """Each element's class weight: ``weight`` gathered at the targets ``index``."""
    _class_weights(weight, x.shape[class_dim], x)
    shape = [1] * x.ndim
    shape[class_dim] = x.shape[class_dim]
    spread = FUNCTIONS["expand"](_reshape(weight, tuple(shape)), tuple(x.shape))
    return FUNCTIONS["squeeze"](FUNCTIONS["gather"](spread, class_dim, index), class_dim)


def cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing):
    x = require_tensor(input, "cross_entropy", "input", 1)
    target = require_tensor(target, "cross_entropy", "target", 2)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    class_dim = 0 if x._data.ndim == 1 else 1
    logp = FUNCTIONS["log_softmax"](x, class_dim)
    if target._data.dtype.kind in "fc":
        if target._data.shape != x._data.shape:
            _check_nll_target(x, target)        # the reference's error for this case
        return _soft_cross_entropy(logp, target, weight, reduction, label_smoothing,
                                   class_dim)
    loss = nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing == 0.0:
        return loss
    smooth = _smoothing_term(logp, target, weight, ignore_index, reduction, class_dim)
    share = label_smoothing / x._data.shape[class_dim]
    return apply_op(MUL_SCALAR, (loss,), {"other": 1 - label_smoothing}) + \
        apply_op(MUL_SCALAR, (smooth,), {"other": share})


def _class_weight_view(weight, ndim, class_dim):
    """Class weights shaped to broadcast along the class dim."""
    shape = [1] * ndim
    shape[class_dim] = weight._data.shape[0]
    return Tensor._wrap(weight._data.reshape(shape))


def _soft_cross_entropy(logp, target, weight, reduction, label_smoothing, class_dim):
    """Cross entropy against class probabilities: -sum_c w_c * p_c * log q_c."""
    n_classes = logp._data.shape[class_dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    terms = logp * target
    if weight is not None:
        _class_weights(weight, n_classes, logp)
        terms = terms * _class_weight_view(weight, logp._data.ndim, class_dim)
    if reduction == "none":
        return -FUNCTIONS["sum"](terms, class_dim)
    total = -FUNCTIONS["sum"](terms)          # one sum over everything, as the reference
    if reduction == "sum":
        return total
    return apply_op(DIV_SCALAR, (total,), {"other": logp._data.size // max(n_classes, 1)})


def _smoothing_term(logp, target, weight, ignore_index, reduction, class_dim):
    """The uniform-target part of label smoothing: -sum_c w_c log q_c per element,
    ignored elements filled with 0; a mean divides by the count of the others (their
    class weights' sum), as the reference does."""
    terms = logp
    if weight is not None:
        terms = logp * _class_weight_view(weight, logp._data.ndim, class_dim)
    shape = logp._data.shape[:class_dim] + logp._data.shape[class_dim + 1:]
    ignored = Tensor._wrap((target._data == ignore_index).reshape(shape))
    losses = FUNCTIONS["masked_fill"](-FUNCTIONS["sum"](terms, class_dim), ignored, 0.0)
    if reduction == "none":
        return losses
    total = FUNCTIONS["sum"](losses)
    if reduction == "sum":
        return total
    kept = ~ignored._data
    if weight is None:                  # (asarray: the count stays on the loss's device)
        return total / Tensor._wrap(asarray(kept.sum(), np.int64))
    picked = weight._data[target._data.reshape(shape)[kept]]
    return total / Tensor._wrap(asarray(picked.sum(), picked.dtype))


def silu_inplace(input):
    return commit_inplace(input, silu(input))


# --- pointwise activations ---------------------------------------------------------------
# Note [pointwise activation entries]
#     Each entry is y = f(x; params) with a backward helper ``<name>_backward(F, g, x,
#     *params)`` that maps an output gradient to the input's; the map is linear in g, so
#     the same helper is the JVP (applied to the tangent). The non-tensor arguments
#     travel as one attribute, ``params`` (a tuple), so one pair of lambdas serves all.
def _pointwise_entry(name, forward, backward):
    helper(backward)
    fn = backward.__name__
    return defop(name, lambda x, params: forward(x, *params), attrs=("params",),
                 vjp=(lambda F, g, self, params: getattr(F, fn)(g, self, *params),),
                 jvp=lambda F, t, self, params: getattr(F, fn)(t[0], self, *params))


def leaky_relu_backward(F, g, x, slope):
    return F.where(x > 0, g, g * slope)


def elu_backward(F, g, x, alpha, scale, input_scale):
    return F.where(x > 0, g * scale, g * (F.exp(x * input_scale) * (alpha * scale * input_scale)))


def celu_backward(F, g, x, alpha, scale, input_scale):
    """elu's, with 1 / alpha from alpha read as a float32 (the reference's derivative
    formula does; its forward divides in double)."""
    return elu_backward(F, g, x, alpha, scale, 1.0 / float(np.float32(alpha)))


def hardtanh_backward(F, g, x, low, high):
    return F.where((x > low) * (x < high), g, g * 0)


def hardsigmoid_backward(F, g, x):
    return F.where((x > -3) * (x < 3), g / 6, g * 0)


def hardswish_backward(F, g, x):
    return F.where(x < -3, g * 0, F.where(x <= 3, g * (x / 3 + 0.5), g))


def mish_backward(F, g, x):
    tsp = F.tanh(F.log1p(F.exp(-F.abs(x))) + F.maximum(x, x * 0))      # tanh(softplus(x))
    return g * (tsp + x * F.sigmoid(x) * (1 - tsp * tsp))


def softsign_backward(F, g, x):
    d = 1 + F.abs(x)
    return g / (d * d)


def tanhshrink_backward(F, g, x):
    th = F.tanh(x)
    return g * (th * th)


def shrink_backward(F, g, x, lambd):
    return F.where((x < -lambd) + (x > lambd), g, g * 0)


def threshold_backward(F, g, x, threshold, value):
    return F.where(x > threshold, g, g * 0)


def logsigmoid_backward(F, g, x):
    return g * F.sigmoid(-x)


def _elu(x, alpha, scale, input_scale):
    neg = np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale)
    return np.where(x > 0, x * scale, neg).astype(x.dtype, copy=False)


def _hardswish(x):
    return x * np.clip(x + 3, 0, 6) / 6


def _mish(x):
    return x * np.tanh(np.logaddexp(0, x))


def _softshrink(x, lambd):
    return np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0 * x))


def _logsigmoid(x):
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _keep_dtype(fn):
    """Forward ``fn`` cast back to the input's dtype (NumPy promotes float16 with
    Python floats in some formulas)."""
    return lambda x, *p: asarray(fn(x, *p)).astype(x.dtype, copy=False)


LEAKY_RELU = _pointwise_entry("leaky_relu", _keep_dtype(lambda x, a: np.where(x > 0, x, x * a)),
                              leaky_relu_backward)
# rrelu in evaluation: leaky_relu's formulas with the mean slope, as its own node
RRELU_EVAL = _pointwise_entry("rrelu_with_noise",
                              _keep_dtype(lambda x, a: np.where(x > 0, x, x * a)),
                              leaky_relu_backward)
ELU = _pointwise_entry("elu", _keep_dtype(_elu), elu_backward)
CELU = _pointwise_entry("celu", _keep_dtype(_elu), celu_backward)
HARDTANH = _pointwise_entry("hardtanh", _keep_dtype(lambda x, lo, hi: np.clip(x, lo, hi)),
                            hardtanh_backward)
HARDSIGMOID = _pointwise_entry("hardsigmoid", _keep_dtype(lambda x: np.clip(x / 6 + 0.5, 0, 1)),
                               hardsigmoid_backward)
HARDSWISH = _pointwise_entry("hardswish", _keep_dtype(_hardswish), hardswish_backward)
MISH = _pointwise_entry("mish", _keep_dtype(_mish), mish_backward)
SOFTSIGN = _pointwise_entry("softsign", _keep_dtype(lambda x: x / (1 + np.abs(x))),
                            softsign_backward)
TANHSHRINK = _pointwise_entry("tanhshrink", _keep_dtype(lambda x: x - np.tanh(x)),
                              tanhshrink_backward)
SOFTSHRINK = _pointwise_entry("softshrink", _keep_dtype(_softshrink), shrink_backward)
HARDSHRINK = defop("hardshrink", lambda x, params: np.where(np.abs(x) > params[0], x, 0 * x),
                   attrs=("params",),
                   vjp=(lambda F, g, self, params: F.shrink_backward(g, self, *params),),
                   jvp=lambda F, t, self, params: F.shrink_backward(t[0], self, *params))
THRESHOLD = _pointwise_entry(
    "threshold", _keep_dtype(lambda x, th, v: np.where(x > th, x, v)), threshold_backward)
LOG_SIGMOID = _pointwise_entry("log_sigmoid", _keep_dtype(_logsigmoid), logsigmoid_backward)


# --- glu: a * sigmoid(b) for the halves a, b of ``dim`` (the reference's GluBackward0) ----
def _glu_forward(x, dim):
    a, b = np.split(x, 2, axis=dim)
    return (a * _sigmoid(b)).astype(x.dtype, copy=False)


@helper
def glu_halves(F, x, dim):
    """(a, sigmoid(b)) for the halves of ``dim``."""
    n = x.shape[dim] // 2
    return F.narrow(x, dim, 0, n), F.sigmoid(F.narrow(x, dim, n, n))


@helper
def glu_backward(F, g, x, dim):
    a, s = F.glu_halves(x, dim)
    return F.cat([g * s, g * a * s * (1 - s)], dim)


@helper
def glu_jvp(F, t, x, dim):
    a, s = F.glu_halves(x, dim)
    n = x.shape[dim] // 2
    return F.narrow(t, dim, 0, n) * s + F.narrow(t, dim, n, n) * (a * s * (1 - s))


GLU = defop("glu", _glu_forward, attrs=("dim",),
            vjp=(lambda F, g, self, dim: F.glu_backward(g, self, dim),),
            jvp=lambda F, t, self, dim: F.glu_jvp(t[0], self, dim))


# --- prelu: the reference's _prelu_kernel (PreluKernelBackward0), weight broadcast ------
PRELU = defop("prelu_kernel", _keep_dtype(lambda x, w: np.where(x > 0, x, w * x)),
              inputs=("self", "weight"), node_name="PreluKernelBackward0",
              vjp=(lambda F, g, self, weight, self_shape:
                   F.sum_to(F.where(self > 0, g, g * weight), tuple(self_shape)),
                   lambda F, g, self, weight_shape:
                   F.sum_to(F.where(self > 0, g * 0, g * self), tuple(weight_shape))),
              jvp=lambda F, t, self, weight:
                  F.where(self > 0, t[0], t[0] * weight + self * t[1]))


def pointwise(op, input, *params, inplace=False, kernel=None):
    """Apply a pointwise activation entry (in place on ``input`` when asked), on the
    dtypes the reference's kernel has (Note [kernels without a dtype])."""
    x = require_tensor(input, kernel or op.name, "input", 1)
    _check_pointwise_dtype(x, op.name, kernel or op.name, params)
    out = apply_op(op, (x,), {"params": params})
    return commit_inplace(x, out) if inplace else out


# --- constant padding ---------------------------------------------------------------------
# ``pads`` holds one (before, after) pair per dim; a negative amount crops. Padding with
# -pads undoes it (what it added is cropped, what it cropped comes back as zeros), so
# the VJP is the same op with the pads negated and value 0; the JVP pads the tangent.
def _constant_pad_forward(x, pads, value):
    crop = tuple(slice(-b if b < 0 else 0, x.shape[i] + a if a < 0 else None)
                 for i, (b, a) in enumerate(pads))
    x = x[crop]
    grow = tuple((max(b, 0), max(a, 0)) for b, a in pads)
    if not any(b or a for b, a in grow):
        return x.copy()
    return np.pad(x, grow, constant_values=value)


def _negated(pads):
    return tuple((-b, -a) for b, a in pads)


CONSTANT_PAD = defop("constant_pad_nd", _constant_pad_forward, attrs=("pads", "value"),
                     vjp=(lambda F, g, pads: F._constant_pad(g, _negated(pads), 0),),
                     jvp=lambda F, t, pads: F._constant_pad(t[0], pads, 0))
array_fn("_constant_pad")(_constant_pad_forward)


@formula_helper
def _constant_pad(x, pads, value):
    return apply_op(CONSTANT_PAD, (x,), {"pads": tuple(pads), "value": value})


# --- embedding ----------------------------------------------------------------------------
# Note [embedding gradient factors]
#     The reference's padding_idx and scale_grad_by_freq change only the backward: rows
#     looked up at padding_idx get no gradient, and with scale_grad_by_freq each
#     lookup's gradient is divided by how often its row occurs in the batch. Both are a
#     per-lookup factor (``factor``: an array shaped like the indices, or None for all
#     1s) applied where the backward scatters. ``scaled`` applies the factor in the
#     forward too: the VJP of the backward (double backward) is such a scaled lookup.
def _embedding_forward(weight, indices, factor, scaled):
    out = weight[indices]
    if scaled and factor is not None:
        out *= on_device_of(factor[..., None].astype(out.dtype, copy=False), out)
    return out


def _embedding_backward_forward(grad, indices, factor, scaled, num_weights):
    width = grad.shape[-1]
    rows = grad.reshape(-1, width)
    if factor is not None:
        rows = rows * on_device_of(factor.reshape(-1, 1).astype(grad.dtype, copy=False), grad)
    out = zeros_on((num_weights, width), grad.dtype, grad)
    np.add.at(out, indices.reshape(-1), rows)
    return out


_EMBEDDING_ATTRS = ("indices", "factor", "scaled")
EMBEDDING = defop(
    "embedding", _embedding_forward, inputs=("weight",), attrs=_EMBEDDING_ATTRS,
    vjp=(lambda F, g, weight_shape, indices, factor, scaled:
         F._embedding_backward(g, indices, factor, weight_shape[0]),),
    jvp=lambda F, t, indices, factor, scaled: F._embedding(t[0], indices, factor, scaled))
EMBEDDING_BACKWARD = defop(
    "embedding_dense_backward", _embedding_backward_forward, inputs=("grad_output",),
    attrs=_EMBEDDING_ATTRS + ("num_weights",),
    vjp=(lambda F, g, indices, factor, scaled, num_weights:
         F._embedding(g, indices, factor, True),),
    jvp=lambda F, t, indices, factor, scaled, num_weights:
        F._embedding_backward(t[0], indices, factor, num_weights))
array_fn("_embedding")(_embedding_forward)


@array_fn("_embedding_backward")
def _embedding_backward_array(grad, indices, factor, num_weights):
    return _embedding_backward_forward(grad, indices, factor, True, num_weights)


@formula_helper
def _embedding(weight, indices, factor, scaled):
    return apply_op(EMBEDDING, (weight,), {"indices": indices, "factor": factor,
                                           "scaled": scaled})


@formula_helper
def _embedding_backward(grad, indices, factor, num_weights):
    return apply_op(EMBEDDING_BACKWARD, (grad,), {"indices": indices, "factor": factor,
                                                  "scaled": True, "num_weights": num_weights})


# --- layer norm --------------------------------------------------------------------------
# One table op (the reference's native_layer_norm: its node is NativeLayerNormBackward0)
# over the last ``ndim`` dims; an absent weight or bias is ABSENT. The input gradient
# and the tangent of the normalised value are the same self-adjoint map:
#     rstd * (v - mean(v) - xhat * mean(xhat * v))
def _layer_norm_forward(x, w, b, ndim, eps):
    dims = tuple(range(x.ndim - ndim, x.ndim))
    rstd = 1 / np.sqrt(_var_forward(x, dims, True, 0) + eps)
    y = (x - _mean_forward(x, dims, True, None)) * rstd
    if w.size:
        y = y * w
    if b.size:
        y = y + b
    return y


def _layer_norm_parts(F, input, ndim, eps):
    dims = tuple(range(len(input.shape) - ndim, len(input.shape)))
    centred = input - F.mean(input, dims, True)
    rstd = 1 / F.sqrt(F.mean(centred * centred, dims, True) + eps)
    return dims, centred * rstd, rstd


@helper
def layer_norm_xhat(F, input, ndim, eps):
    return _layer_norm_parts(F, input, ndim, eps)[1]


@helper
def layer_norm_input_grad(F, v, input, weight, ndim, eps):
    """The gradient of layer_norm's input for ``v`` (= g) or, with the weight
    absent, the tangent of the normalised value for ``v`` (= the input's tangent)."""
    dims, xhat, rstd = _layer_norm_parts(F, input, ndim, eps)
    if tuple(weight.shape) != (0,):
        v = v * weight
    return rstd * (v - F.mean(v, dims, True) - xhat * F.mean(v * xhat, dims, True))


@helper
def layer_norm_jvp(F, t, input, weight, ndim, eps):
    dims, xhat, rstd = _layer_norm_parts(F, input, ndim, eps)
    out = rstd * (t[0] - F.mean(t[0], dims, True) - xhat * F.mean(t[0] * xhat, dims, True))
    if tuple(weight.shape) != (0,):
        out = out * weight
        if t[1] is not None:
            out = out + xhat * t[1]
    if t[2] is not None and tuple(t[2].shape) != (0,):
        out = out + t[2]
    return out


LAYER_NORM = defop(
    "native_layer_norm", _layer_norm_forward, inputs=("input", "weight", "bias"),
    attrs=("ndim", "eps"), node_name="NativeLayerNormBackward0",
    vjp=(lambda F, g, input, weight, ndim, eps:
         F.layer_norm_input_grad(g, input, weight, ndim, eps),
         lambda F, g, input, weight_shape, ndim, eps:
         F.sum_to(g * F.layer_norm_xhat(input, ndim, eps), tuple(weight_shape)),
         lambda F, g, bias_shape: F.sum_to(g, tuple(bias_shape))),
    jvp=lambda F, t, input, weight, ndim, eps: F.layer_norm_jvp(t, input, weight, ndim, eps))


def native_layer_norm(input, weight, bias, ndim, eps):
    """layer_norm over the last ``ndim`` dims as one recorded op (weight/bias None or
    Tensors of the normalised shape; checked by the caller)."""
    return apply_op(LAYER_NORM, (input, ABSENT if weight is None else weight,
                                 ABSENT if bias is None else bias),
                    {"ndim": ndim, "eps": eps})


# --- batch norm --------------------------------------------------------------------------
# One table op (the reference's native_batch_norm: NativeBatchNormBackward0) normalising
# each channel (dim 1) over the other dims: with the batch's statistics in training,
# the running ones (constants) in evaluation. The running statistics are updated by the
# caller. Like the reference's kernel, the statistics are accumulated in float64 and the
# output is ``x * alpha + beta`` per channel (alpha = invstd * weight).
def _channel_shape(ndim, channels):
    return (1, channels) + (1,) * (ndim - 2)


def _batch_norm_forward(x, w, b, rm, rv, training, eps):
    shape = _channel_shape(x.ndim, x.shape[1])
    dims = (0,) + tuple(range(2, x.ndim))
    if training:
        wide = x.astype(np.float64) if x.dtype == np.float32 else x
        mean = _mean_forward(wide, dims, True, None)
        var = _var_forward(wide, dims, True, 0)
    else:
        mean, var = rm.reshape(shape), rv.reshape(shape)
    alpha = (1 / np.sqrt(var + eps)).astype(x.dtype, copy=False)
    if w.size:
        alpha = alpha * w.reshape(shape)
    beta = -mean.astype(x.dtype, copy=False) * alpha
    if b.size:
        beta = beta + b.reshape(shape)
    return x * alpha + beta


def _batch_norm_parts(F, input, running_mean, running_var, training, eps):
    """(reduced dims, channel shape, input - mean, 1 / sqrt(var + eps))."""
    ndim = len(input.shape)
    dims, shape = (0,) + tuple(range(2, ndim)), _channel_shape(ndim, input.shape[1])
    if training:
        centred = input - F.mean(input, dims, True)
        rstd = 1 / F.sqrt(F.mean(centred * centred, dims, True) + eps)
    else:
        centred = input - F.reshape(running_mean, shape)
        rstd = 1 / F.sqrt(F.reshape(running_var, shape) + eps)
    return dims, shape, centred, rstd


@helper
def batch_norm_xhat(F, input, running_mean, running_var, training, eps):
    _, _, centred, rstd = _batch_norm_parts(F, input, running_mean, running_var, training, eps)
    return centred * rstd


@helper
def batch_norm_input_grad(F, v, input, weight, running_mean, running_var, training, eps):
    """The gradient of batch_norm's input for ``v`` (= g), or the tangent of its output
    for ``v`` (= the input's tangent): the same self-adjoint map, in the order of the
    reference's kernel ``(v - mean(v) - centred * k) * rstd * weight``."""
    dims, shape, centred, rstd = _batch_norm_parts(F, input, running_mean, running_var,
                                                   training, eps)
    scale = rstd if tuple(weight.shape) == (0,) else rstd * F.reshape(weight, shape)
    if not training:
        return v * scale
    k = F.mean(centred * v, dims, True) * (rstd * rstd)
    return (v - F.mean(v, dims, True) - centred * k) * scale


@helper
def batch_norm_jvp(F, t, input, weight, running_mean, running_var, training, eps):
    shape = _channel_shape(len(input.shape), input.shape[1])
    xhat = batch_norm_xhat(F, input, running_mean, running_var, training, eps)
    out = 0 if t[0] is None else batch_norm_input_grad(
        F, t[0], input, weight, running_mean, running_var, training, eps)
    return _affine_tangent(F, out, xhat, t, shape)


def _affine_tangent(F, out, xhat, t, shape):
    """``out`` plus the tangents of the weight (times xhat) and bias (per channel)."""
    if t[1] is not None and tuple(t[1].shape) != (0,):
        out = out + xhat * F.reshape(t[1], shape)
    if t[2] is not None and tuple(t[2].shape) != (0,):
        out = out + F.reshape(t[2], shape)
    return out


def _batch_norm_dims(input_shape):
    return (0,) + tuple(range(2, len(input_shape)))


BATCH_NORM = defop(
    "native_batch_norm", _batch_norm_forward,
    inputs=("input", "weight", "bias", "running_mean", "running_var"),
    attrs=("training", "eps"), node_name="NativeBatchNormBackward0",
    vjp=(lambda F, g, input, weight, running_mean, running_var, training, eps:
         F.batch_norm_input_grad(g, input, weight, running_mean, running_var, training, eps),
         lambda F, g, input, input_shape, running_mean, running_var, training, eps:
         F.sum(g * F.batch_norm_xhat(input, running_mean, running_var, training, eps),
               _batch_norm_dims(input_shape)),
         lambda F, g, input_shape: F.sum(g, _batch_norm_dims(input_shape)),
         NONDIFF, NONDIFF),
    jvp=lambda F, t, input, weight, running_mean, running_var, training, eps:
        F.batch_norm_jvp(t, input, weight, running_mean, running_var, training, eps))


def native_batch_norm(input, weight, bias, running_mean, running_var, training, eps):
    """batch_norm's normalisation and affine map as one recorded op (arguments checked
    by the caller; weight, bias and the running statistics None or Tensors of C)."""
    if training:          # not read (nor saved: the caller updates them in place)
        running_mean = running_var = None
    args = (input,) + tuple(ABSENT if t is None else t
                            for t in (weight, bias, running_mean, running_var))
    return apply_op(BATCH_NORM, args, {"training": bool(training), "eps": eps})


# --- group norm --------------------------------------------------------------------------
# One table op (native_group_norm: NativeGroupNormBackward0): each sample's channels in
# ``groups`` groups normalised over the group's channels and spatial dims, then a
# per-channel affine map (statistics in float64 for float32, as for batch_norm).
def _param_shape(ndim, channels):
    return (channels,) + (1,) * (ndim - 2)


def _group_norm_forward(x, w, b, groups, eps):
    n, c = x.shape[0], x.shape[1]
    wide = (x.astype(np.float64) if x.dtype == np.float32 else x).reshape(n, groups, -1)
    mean = _mean_forward(wide, (2,), True, None)
    rstd = 1 / np.sqrt(_var_forward(wide, (2,), True, 0) + eps)
    y = ((wide - mean) * rstd).astype(x.dtype, copy=False).reshape(x.shape)
    if w.size:
        y = y * w.reshape(_param_shape(x.ndim, c))
    if b.size:
        y = y + b.reshape(_param_shape(x.ndim, c))
    return y


_NO_WEIGHT = np.zeros(0)


def _group_parts(F, input, groups, eps):
    grouped = F.reshape(input, (input.shape[0], groups, -1))
    centred = grouped - F.mean(grouped, 2, True)
    return centred, 1 / F.sqrt(F.mean(centred * centred, 2, True) + eps)


@helper
def group_norm_xhat(F, input, groups, eps):
    centred, rstd = _group_parts(F, input, groups, eps)
    return F.reshape(centred * rstd, tuple(input.shape))


@helper
def group_norm_input_grad(F, v, input, weight, groups, eps):
    """The input's gradient for ``v`` (= g): the weight, then one self-adjoint map per
    group (the tangent without the weight)."""
    centred, rstd = _group_parts(F, input, groups, eps)
    if tuple(weight.shape) != (0,):
        v = v * F.reshape(weight, _param_shape(len(input.shape), input.shape[1]))
    v = F.reshape(v, tuple(centred.shape))
    xhat = centred * rstd
    out = rstd * (v - F.mean(v, 2, True) - xhat * F.mean(v * xhat, 2, True))
    return F.reshape(out, tuple(input.shape))


@helper
def group_norm_jvp(F, t, input, weight, groups, eps):
    shape = _param_shape(len(input.shape), input.shape[1])
    out = 0                     # the weight scales after the map (it mixes channels)
    if t[0] is not None:
        out = group_norm_input_grad(F, t[0], input, _NO_WEIGHT, groups, eps)
        if tuple(weight.shape) != (0,):
            out = out * F.reshape(weight, shape)
    return _affine_tangent(F, out, group_norm_xhat(F, input, groups, eps), t, shape)


GROUP_NORM = defop(
    "native_group_norm", _group_norm_forward, inputs=("input", "weight", "bias"),
    attrs=("groups", "eps"), node_name="NativeGroupNormBackward0",
    vjp=(lambda F, g, input, weight, groups, eps:
         F.group_norm_input_grad(g, input, weight, groups, eps),
         lambda F, g, input, input_shape, groups, eps:
         F.sum(g * F.group_norm_xhat(input, groups, eps), _batch_norm_dims(input_shape)),
         lambda F, g, input_shape: F.sum(g, _batch_norm_dims(input_shape))),
    jvp=lambda F, t, input, weight, groups, eps: F.group_norm_jvp(t, input, weight, groups,
                                                                  eps))


def native_group_norm(input, weight, bias, groups, eps):
    """group_norm as one recorded op (arguments checked by the caller)."""
    return apply_op(GROUP_NORM, (input, ABSENT if weight is None else weight,
                                 ABSENT if bias is None else bias),
                    {"groups": groups, "eps": eps})


# --- binary cross entropy with logits -----------------------------------------------------
# One table op like the reference's (BinaryCrossEntropyWithLogitsBackward0): gradients
# for input and target; weight and pos_weight are constants (ABSENT when not given).
def _bce_logits_forward(x, t, w, pw, reduction):
    log_sig = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))     # log(sigmoid(x))
    if pw.size:
        log_sig = log_sig * ((pw - 1) * t + 1)
    losses = (1 - t) * x - log_sig
    if w.size:
        losses = losses * w
    return _reduce_array(losses.astype(x.dtype, copy=False), reduction)


@helper
def bce_logits_grads(F, g, input, target, weight, pos_weight, reduction):
    """(d loss / d input, d loss / d target), each times the loss's gradient ``g``."""
    s = F.sigmoid(input)
    if tuple(pos_weight.shape) != (0,):
        tp = pos_weight * target
        d_input = (tp + 1 - target) * s - tp
        d_target = F.log(1 - s) - pos_weight * F.log(s)
    else:
        d_input, d_target = s - target, -input
    if tuple(weight.shape) != (0,):
        d_input, d_target = d_input * weight, d_target * weight
    if reduction == "mean":
        g = g / max(_numel(tuple(input.shape)), 1)
    return d_input * g, d_target * g


BCE_WITH_LOGITS = defop(
    "binary_cross_entropy_with_logits", _bce_logits_forward,
    inputs=("self", "target", "weight", "pos_weight"), attrs=("reduction",),
    vjp=(lambda F, g, self, target, weight, pos_weight, reduction:
         F.bce_logits_grads(g, self, target, weight, pos_weight, reduction)[0],
         lambda F, g, self, target, weight, pos_weight, reduction:
         F.bce_logits_grads(g, self, target, weight, pos_weight, reduction)[1],
         NONDIFF, NONDIFF),
    jvp=lambda F, t, self, target, weight, pos_weight, reduction:
        F.bce_logits_jvp(t, self, target, weight, pos_weight, reduction))


@helper
def bce_logits_jvp(F, t, input, target, weight, pos_weight, reduction):
    d_input, d_target = bce_logits_grads(F, 1, input, target, weight, pos_weight, "none")
    parts = [d * dt for d, dt in ((d_input, t[0]), (d_target, t[1])) if dt is not None]
    return reduce_loss(F, parts[0] + parts[1] if len(parts) == 2 else parts[0], reduction)


def binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction):
    """The op on checked arguments (weight and pos_weight None or constants)."""
    for name, p in (("weight", weight), ("pos_weight", pos_weight)):
        if p is not None and p.requires_grad and _grad_mode.is_grad_enabled():
            raise RuntimeError(f"The function 'binary_cross_entropy_with_logits' is not "
                               f"differentiable with respect to argument '{name}'. This "
                               "input cannot have requires_grad True.")
    return apply_op(BCE_WITH_LOGITS, (input, target, ABSENT if weight is None else weight,
                                      ABSENT if pos_weight is None else pos_weight),
                    {"reduction": reduction})


# --- binary cross entropy (of probabilities) ----------------------------------------------
# BinaryCrossEntropyBackward0 in the reference: each log clamped at -100 in the forward;
# the input gradient divides by max(x (1 - x), 1e-12); weight is a constant.
def _bce_forward(x, t, w, reduction):
    with np.errstate(divide="ignore"):
        losses = (t - 1) * np.maximum(np.log1p(-x), -100) - t * np.maximum(np.log(x), -100)
    if w.size:
        losses = losses * w
    return _reduce_array(losses.astype(x.dtype, copy=False), reduction)


@helper
def bce_grads(F, g, input, target, weight, reduction):
    """(d loss / d input, d loss / d target), each times the loss's gradient ``g``."""
    d_input = (input - target) / F.maximum((1 - input) * input, input * 0 + 1e-12)
    d_target = F.log1p(-input) - F.log(input)
    if tuple(weight.shape) != (0,):
        d_input, d_target = d_input * weight, d_target * weight
    if reduction == "mean":
        g = g / max(_numel(tuple(input.shape)), 1)
    return d_input * g, d_target * g


@helper
def bce_jvp(F, t, input, target, weight, reduction):
    d_input, d_target = bce_grads(F, 1, input, target, weight, "none")
    parts = [d * dt for d, dt in ((d_input, t[0]), (d_target, t[1])) if dt is not None]
    return reduce_loss(F, parts[0] + parts[1] if len(parts) == 2 else parts[0], reduction)


BCE = defop("binary_cross_entropy", _bce_forward, inputs=("self", "target", "weight"),
            attrs=("reduction",),
            vjp=(lambda F, g, self, target, weight, reduction:
                 F.bce_grads(g, self, target, weight, reduction)[0],
                 lambda F, g, self, target, weight, reduction:
                 F.bce_grads(g, self, target, weight, reduction)[1], NONDIFF),
            jvp=lambda F, t, self, target, weight, reduction:
                F.bce_jvp(t, self, target, weight, reduction))


def binary_cross_entropy(input, target, weight, reduction):
    """The op on checked arguments (weight None or a constant)."""
    return apply_op(BCE, (input, target, ABSENT if weight is None else weight),
                    {"reduction": reduction})
