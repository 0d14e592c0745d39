"""Pooling layers: max, average, and adaptive (a fixed output size) pooling."""
from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "MaxUnpool1d",
           "MaxUnpool2d", "MaxUnpool3d", "LPPool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None and stride != [] else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return getattr(F, self._function)(input, self.kernel_size, self.stride, self.padding,
                                          self.dilation, ceil_mode=self.ceil_mode,
                                          return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max over sliding windows of (N, C, L) input.

    >>> import chainrule as cr
    >>> cr.nn.MaxPool1d(2)(cr.arange(4.).reshape(1, 1, 4)).tolist()
    [[[1.0, 3.0]]]
    """

    _function = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    """Max over sliding windows of (N, C, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.MaxPool2d(2)
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> cr.nn.MaxPool2d(2)(cr.arange(16.).reshape(1, 1, 4, 4)).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """

    _function = "max_pool2d"


class MaxPool3d(_MaxPoolNd):
    """Max over sliding windows of (N, C, D, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.MaxPool3d(2)(cr.arange(8.).reshape(1, 1, 2, 2, 2)).flatten().tolist()
    [7.0]
    """

    _function = "max_pool3d"


class AvgPool1d(Module):
    """Mean over sliding windows of (N, C, L) input.

    >>> import chainrule as cr
    >>> cr.nn.AvgPool1d(2)(cr.arange(4.).reshape(1, 1, 4)).tolist()
    [[[0.5, 2.5]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        single = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,)   # noqa: E731
        self.kernel_size = single(kernel_size)
        self.stride = single(stride if stride is not None else kernel_size)
        self.padding, self.ceil_mode = single(padding), ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """Mean over sliding windows of (N, C, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.AvgPool2d(2)(cr.arange(16.).reshape(1, 1, 4, 4)).tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """Mean over sliding windows of (N, C, D, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.AvgPool3d(2)(cr.arange(8.).reshape(1, 1, 2, 2, 2)).flatten().tolist()
    [3.5]
    """

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePool(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        fn = getattr(F, self._function)
        if self._max:
            return fn(input, self.output_size, self.return_indices)
        return fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling to ``output_size`` positions.

    >>> import chainrule as cr
    >>> cr.nn.AdaptiveAvgPool1d(1)(cr.arange(4.).reshape(1, 1, 4)).tolist()
    [[[1.5]]]
    """

    _function, _max = "adaptive_avg_pool1d", False


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling to an ``output_size`` grid.

    >>> import chainrule as cr
    >>> cr.nn.AdaptiveAvgPool2d(1)(cr.arange(4.).reshape(1, 1, 2, 2)).tolist()
    [[[[1.5]]]]
    """

    _function, _max = "adaptive_avg_pool2d", False


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling to ``output_size`` positions.

    >>> import chainrule as cr
    >>> cr.nn.AdaptiveMaxPool1d(1)(cr.arange(4.).reshape(1, 1, 4)).tolist()
    [[[3.0]]]
    """

    _function, _max = "adaptive_max_pool1d", True


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max pooling to an ``output_size`` grid.

    >>> import chainrule as cr
    >>> cr.nn.AdaptiveMaxPool2d(1)(cr.arange(4.).reshape(1, 1, 2, 2)).tolist()
    [[[[3.0]]]]
    """

    _function, _max = "adaptive_max_pool2d", True


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling of (N, C, D, H, W) input to an ``output_size`` grid.

    >>> import chainrule as cr
    >>> cr.nn.AdaptiveAvgPool3d(1)(cr.arange(8.).reshape(1, 1, 2, 2, 2)).flatten().tolist()
    [3.5]
    """

    _function, _max = "adaptive_avg_pool3d", False


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max pooling of (N, C, D, H, W) input to an ``output_size`` grid.

    >>> import chainrule as cr
    >>> cr.nn.AdaptiveMaxPool3d(1)(cr.arange(8.).reshape(1, 1, 2, 2, 2)).flatten().tolist()
    [7.0]
    """

    _function, _max = "adaptive_max_pool3d", True


class _MaxUnpoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._dims
        as_tuple = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * n)
        self.kernel_size = as_tuple(kernel_size)
        self.stride = as_tuple(stride if stride is not None else kernel_size)
        self.padding = as_tuple(padding)

    def forward(self, input, indices, output_size=None):
        return getattr(F, self._function)(input, indices, self.kernel_size, self.stride,
                                          self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: each value back at its max's index, zeros
    elsewhere.

    >>> import chainrule as cr
    >>> out, idx = cr.nn.MaxPool1d(2, return_indices=True)(cr.tensor([[[1., 3., 2., 0.]]]))
    >>> cr.nn.MaxUnpool1d(2)(out, idx).tolist()
    [[[0.0, 3.0, 2.0, 0.0]]]
    """

    _function, _dims = "max_unpool1d", 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d.

    >>> import chainrule as cr
    >>> cr.nn.MaxUnpool2d(2)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    """

    _function, _dims = "max_unpool2d", 2


class _LPPool(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        return getattr(F, self._function)(input, float(self.norm_type), self.kernel_size,
                                          self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    """Power-average pooling: ``(sum x^p)^(1/p)`` over windows of (N, C, L) input.

    >>> import chainrule as cr
    >>> cr.nn.LPPool1d(1, 2)(cr.ones(1, 1, 4)).tolist()
    [[[2.0, 2.0]]]
    """

    _function = "lp_pool1d"


class LPPool2d(_LPPool):
    """Power-average pooling over windows of (N, C, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.LPPool2d(1, 2)(cr.ones(1, 1, 2, 2)).tolist()
    [[[[4.0]]]]
    """

    _function = "lp_pool2d"


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d.

    >>> import chainrule as cr
    >>> out, idx = cr.nn.MaxPool3d(2, return_indices=True)(cr.arange(8.).reshape(1, 2, 2, 2))
    >>> cr.nn.MaxUnpool3d(2)(out, idx).flatten().tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0]
    """

    _function, _dims = "max_unpool3d", 3


class LPPool3d(_LPPool):
    """Power-average pooling over windows of (N, C, D, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.LPPool3d(1, 2)(cr.ones(1, 1, 2, 2, 2)).flatten().tolist()
    [8.0]
    """

    _function = "lp_pool3d"


class _FractionalMaxPoolNd(Module):
    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        n, name = self._dims, type(self).__name__
        as_tuple = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * n)
        self.kernel_size = as_tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = as_tuple(output_size) if output_size is not None else None
        self.output_ratio = as_tuple(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             "pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return getattr(F, self._function)(input, self.kernel_size, self.output_size,
                                          self.output_ratio, self.return_indices,
                                          _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, H, W) input (Note [fractional max pooling] in
    nn/_pool_extra.py).

    >>> import chainrule as cr
    >>> cr.nn.FractionalMaxPool2d(3, output_ratio=0.5)(cr.randn(1, 2, 10, 8)).shape
    chainrule.Size([1, 2, 5, 4])
    """

    _function, _dims = "fractional_max_pool2d", 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, T, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.FractionalMaxPool3d(2, output_size=(2, 3, 3))(cr.randn(1, 4, 5, 5)).shape
    chainrule.Size([1, 2, 3, 3])
    """

    _function, _dims = "fractional_max_pool3d", 3
