"""The activations of ``chainrule.nn.functional`` beyond relu/gelu/silu/softplus:
pointwise table entries (Note [pointwise activation entries] in _ops/nn.py) and the
few that are compositions (softmin, glu, prelu, rrelu)."""
from .. import _random
from .._ops import nn as _nn
from .._ops._registry import apply_op as _apply_op
from .. import _dtypes
from .._ops._common import (FUNCTIONS as _FUNCTIONS, commit_inplace as _commit_inplace,
                            float_input as _float_input, kernel_error as _kernel_error,
                            require_tensors as _require_tensors)
from .._ops.elementwise import BOOL_SUBTRACTION as _BOOL_SUBTRACTION

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.leaky_relu(cr.tensor([-1., 2.]), 0.25).tolist()
    [-0.25, 2.0]
    """
    return _nn.pointwise(_nn.LEAKY_RELU, input, negative_slope, inplace=inplace)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.leaky_relu_(cr.tensor([-1., 2.]), 0.5).tolist()
    [-0.5, 2.0]
    """
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.elu(cr.tensor([0., 2.])).tolist()
    [0.0, 2.0]
    """
    return _nn.pointwise(_nn.ELU, input, alpha, 1.0, 1.0, inplace=inplace)


def elu_(input, alpha=1.0):
    """In-place :func:`elu`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.elu_(cr.tensor([3.])).tolist()
    [3.0]
    """
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """Scaled ELU with the self-normalising constants (alpha 1.6733, scale 1.0507).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.selu(cr.tensor([1.])).item(), 4)
    1.0507
    """
    return _nn.pointwise(_nn.ELU, input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace=inplace,
                         kernel="elu")


def selu_(input):
    """In-place :func:`selu`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.selu_(cr.tensor([0.])).tolist()
    [0.0]
    """
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.celu(cr.tensor([2.]), alpha=2.).tolist()
    [2.0]
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _nn.pointwise(_nn.CELU, input, alpha, 1.0, 1.0 / alpha, inplace=inplace,
                         kernel="elu")


def celu_(input, alpha=1.0):
    """In-place :func:`celu`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.celu_(cr.tensor([1.])).tolist()
    [1.0]
    """
    return celu(input, alpha, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``x`` clamped to ``[min_val, max_val]`` (gradient 0 at and beyond the bounds).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.hardtanh(cr.tensor([-3., 0.5, 3.])).tolist()
    [-1.0, 0.5, 1.0]
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _nn.pointwise(_nn.HARDTANH, input, min_val, max_val, inplace=inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.hardtanh_(cr.tensor([5.])).tolist()
    [1.0]
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(0, x), 6)``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.relu6(cr.tensor([-1., 3., 9.])).tolist()
    [0.0, 3.0, 6.0]
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    """``clamp(x / 6 + 1/2, 0, 1)``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.hardsigmoid(cr.tensor([-4., 0., 4.])).tolist()
    [0.0, 0.5, 1.0]
    """
    return _nn.pointwise(_nn.HARDSIGMOID, input, inplace=inplace)


def hardswish(input, inplace=False):
    """``x * hardsigmoid(x)``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.hardswish(cr.tensor([-4., 0., 4.])).tolist()
    [-0.0, 0.0, 4.0]
    """
    return _nn.pointwise(_nn.HARDSWISH, input, inplace=inplace)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.mish(cr.tensor([1.])).item(), 4)
    0.8651
    """
    return _nn.pointwise(_nn.MISH, input, inplace=inplace)


def softsign(input):
    """``x / (1 + |x|)``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.softsign(cr.tensor([1., -3.])).tolist()
    [0.5, -0.75]
    """
    if input.dtype == _dtypes.bool_:       # the reference's x / (1 + |x|) stops at abs
        raise _kernel_error("abs_cpu")(input._data.dtype)
    return _nn.pointwise(_nn.SOFTSIGN, _float_input(input))


def tanhshrink(input):
    """``x - tanh(x)``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.tanhshrink(cr.tensor([0.])).tolist()
    [0.0]
    """
    if input.dtype == _dtypes.bool_:       # the reference's x - tanh(x) stops at the "-"
        raise RuntimeError(_BOOL_SUBTRACTION[1])
    return _nn.pointwise(_nn.TANHSHRINK, _float_input(input))


def _check_lambd(input, lambd):
    if lambd < 0:
        from .._dtypes import scalar_type_name
        raise RuntimeError(f"lambda must be in range [0, 3.40282e+38] for input dtype "
                           f"{scalar_type_name(input._data.dtype)}, but found {lambd:g}")


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.softshrink(cr.tensor([-2., 0.2, 2.])).tolist()
    [-1.5, 0.0, 1.5]
    """
    _check_lambd(input, lambd)
    return _nn.pointwise(_nn.SOFTSHRINK, input, lambd)


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, 0 elsewhere.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.hardshrink(cr.tensor([-2., 0.2, 2.])).tolist()
    [-2.0, 0.0, 2.0]
    """
    return _nn.pointwise(_nn.HARDSHRINK, input, lambd)


def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, ``value`` elsewhere.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.threshold(cr.tensor([0.5, 2.]), 1., -1.).tolist()
    [-1.0, 2.0]
    """
    return _nn.pointwise(_nn.THRESHOLD, input, threshold, value, inplace=inplace)


def threshold_(input, threshold, value):
    """In-place :func:`threshold`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.threshold_(cr.tensor([0.5]), 1., 0.).tolist()
    [0.0]
    """
    return globals()["threshold"](input, threshold, value, inplace=True)


def logsigmoid(input):
    """``log(sigmoid(x))``, computed stably.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> round(F.logsigmoid(cr.tensor([0.])).item(), 4)
    -0.6931
    """
    return _nn.pointwise(_nn.LOG_SIGMOID, input)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x)`` along ``dim``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.softmin(cr.tensor([0., 0.]), dim=0).tolist()
    [0.5, 0.5]
    """
    from .functional import _softmax_dim
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return _FUNCTIONS["softmax"](-input, dim, dtype=dtype)


def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``dim``.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.glu(cr.tensor([2., 0.])).tolist()
    [1.0]
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input._data.dtype.kind in "buic":
        raise _kernel_error("glu_cpu")(input._data.dtype)
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.dim()} is size {size}")
    return _apply_op(_nn.GLU, (input,), {"dim": dim % input.dim()})


def prelu(input, weight):
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` has one element or one
    per channel (dim 1).

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.prelu(cr.tensor([[-1., 2.]]), cr.tensor([0.25])).tolist()
    [[-0.25, 2.0]]
    """
    _require_tensors("prelu", ("input", "weight"), input, weight)
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_dtypes.scalar_type_name(input._data.dtype)} and "
                           f"{_dtypes.scalar_type_name(weight._data.dtype)}")
    channels = input.shape[1] if input.dim() >= 2 else 1
    n = weight.numel()
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {n} and channel size = {channels}.")
    if input.dim() >= 2:                      # (C or 1, 1, ...): broadcast over dim 1
        weight = weight.reshape((n,) + (1,) * (input.dim() - 2))
    elif input.dim() == 0:
        weight = weight.reshape(())
    return _apply_op(_nn.PRELU, (input, weight), {})


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training, each negative element is scaled by a slope
    drawn uniformly from ``[lower, upper]`` (the default generator); in evaluation by
    their mean.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.rrelu(cr.tensor([-3., 2.])).tolist()
    [-0.6875, 2.0]
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return _nn.pointwise(_nn.RRELU_EVAL, input, (lower + upper) / 2, inplace=inplace,
                             kernel="leaky_relu")
    slopes = _random.rrelu_slopes(input, lower, upper)
    out = _FUNCTIONS["where"](input >= 0, input, input * slopes)
    return _commit_inplace(input, out) if inplace else out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`.

    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> F.rrelu_(cr.tensor([2.])).tolist()
    [2.0]
    """
    return rrelu(input, lower, upper, training, inplace=True)


__all__ = ["leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu", "celu_",
           "hardtanh", "hardtanh_", "relu6", "hardsigmoid", "hardswish", "mish", "softsign",
           "tanhshrink", "softshrink", "hardshrink", "threshold", "threshold_", "logsigmoid",
           "softmin", "glu", "prelu", "rrelu", "rrelu_"]
