"""``nn.utils.fusion``: folding an eval-mode BatchNorm into the convolution or linear
layer before it (one module computing both)."""
import copy

from ... import _factories
from ..._ops import FUNCTIONS
from ..parameter import Parameter

_F = FUNCTIONS

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _check_eval(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _check_running(bn):
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` (eval mode) computing ``bn(conv(x))`` (``bn`` in eval mode);
    ``transpose=True`` for transposed convolutions.

    >>> import chainrule as cr
    >>> conv, bn = cr.nn.Conv2d(2, 3, 1).eval(), cr.nn.BatchNorm2d(3).eval()
    >>> x = cr.randn(1, 2, 4, 4)
    >>> fused = cr.nn.utils.fuse_conv_bn_eval(conv, bn)
    >>> bool(cr.allclose(fused(x), bn(conv(x)), atol=1e-6))
    True
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    _check_running(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The (weight, bias) Parameters of the convolution equal to the convolution
    ``conv_w``/``conv_b`` followed by the BatchNorm with running mean ``bn_rm``, running
    variance ``bn_rv``, ``bn_eps``, affine ``bn_w``/``bn_b`` (None: identity);
    ``transpose``: ``conv_w`` is a transposed convolution's (channels on dim 1).

    >>> import chainrule as cr
    >>> w, b = cr.nn.utils.fuse_conv_bn_weights(cr.ones(2, 1, 1), None, cr.zeros(2),
    ...                                         cr.full((2,), 3.), 1., None, cr.ones(2))
    >>> w.flatten().tolist(), b.tolist()
    ([0.5, 0.5], [1.0, 1.0])
    """
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    conv_b = _factories.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = _factories.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = _factories.zeros_like(bn_rm) if bn_b is None else bn_b
    rsqrt = _F["rsqrt"](bn_rv + bn_eps)
    channels = [1, -1] if transpose else [-1, 1]
    shape = channels + [1] * (len(conv_w.shape) - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` (eval mode) computing ``bn(linear(x))`` (``bn`` in eval
    mode, with ``linear.out_features`` features or one).

    >>> import chainrule as cr
    >>> linear, bn = cr.nn.Linear(3, 2).eval(), cr.nn.BatchNorm1d(2).eval()
    >>> x = cr.randn(4, 3)
    >>> fused = cr.nn.utils.fuse_linear_bn_eval(linear, bn)
    >>> bool(cr.allclose(fused(x), bn(linear(x)), atol=1e-6))
    True
    """
    _check_eval(linear, bn)
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    _check_running(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The (weight, bias) Parameters of the linear layer equal to ``linear_w``/
    ``linear_b`` followed by the BatchNorm with running mean ``bn_rm``, running variance
    ``bn_rv``, ``bn_eps`` and affine ``bn_w``/``bn_b``.

    >>> import chainrule as cr
    >>> w, b = cr.nn.utils.fuse_linear_bn_weights(cr.ones(2, 1), cr.ones(2), cr.zeros(2),
    ...                                           cr.full((2,), 3.), 1., cr.ones(2), cr.zeros(2))
    >>> w.flatten().tolist(), b.tolist()
    ([0.5, 0.5], [0.5, 0.5])
    """
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    linear_b = _factories.zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * _F["rsqrt"](bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b.requires_grad))
