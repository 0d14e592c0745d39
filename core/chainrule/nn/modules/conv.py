"""Convolutions: Conv1d/2d/3d, ConvTranspose1d/2d/3d (torch's weight
layouts, default initialisation and ``padding_mode``)."""
import math

from ... import _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


def _ntuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _ConvNd(Module):
    _n = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", output_padding=0,
                 device=None, dtype=None):
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError("padding_mode must be one of ['zeros', 'reflect', 'replicate', "
                             f"'circular'], but got padding_mode='{padding_mode}'")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride, self.dilation = _ntuple(stride, n), _ntuple(dilation, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.output_padding = _ntuple(output_padding, n)
        self.groups, self.padding_mode = groups, padding_mode
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(_factories.empty(*shape, dtype=dtype))
        if bias:
            self.bias = Parameter(_factories.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """torch's default: kaiming_uniform_(a=sqrt(5)) weight, uniform fan-in bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _padded(self, input):
        """The input padded by ``padding_mode`` (non-zero modes pad here, not in conv)."""
        pad = []
        for i in reversed(range(self._n)):
            if self.padding == "same":           # the odd extra after, like the reference
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                pad += [total // 2, total - total // 2]
            elif self.padding != "valid":
                pad += [self.padding[i]] * 2
            else:
                pad += [0, 0]
        return F.pad(input, pad, mode=self.padding_mode)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
            f"stride={self.stride}"
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv(self, input):
        if self.padding_mode != "zeros":
            return self._functional()(self._padded(input), self.weight, self.bias, self.stride,
                                      0, self.dilation, self.groups)
        return self._functional()(input, self.weight, self.bias, self.stride, self.padding,
                                  self.dilation, self.groups)

    def forward(self, input):
        return self._conv(input)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) or (C, L) input.

    >>> import chainrule as cr
    >>> conv = cr.nn.Conv1d(2, 4, 3, padding=1)
    >>> conv, conv(cr.ones(1, 2, 5)).shape
    (Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=(1,)), chainrule.Size([1, 4, 5]))
    """

    _n = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype=dtype)

    def _functional(self):
        return F.conv1d


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) or (C, H, W) input.

    >>> import chainrule as cr
    >>> conv = cr.nn.Conv2d(1, 8, 3, padding=1)
    >>> conv, conv(cr.ones(2, 1, 8, 8)).shape
    (Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)), chainrule.Size([2, 8, 8, 8]))
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype=dtype)

    def _functional(self):
        return F.conv2d


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W) input.

    >>> import chainrule as cr
    >>> cr.nn.Conv3d(1, 2, 3, padding=1)(cr.ones(1, 1, 4, 4, 4)).shape
    chainrule.Size([1, 2, 4, 4, 4])
    """

    _n = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype=dtype)

    def _functional(self):
        return F.conv3d


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, dtype=dtype)

    def forward(self, input, output_size=None):
        output_padding = self.output_padding
        if output_size is not None:
            output_padding = self._output_padding(input, output_size)
        return self._functional()(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output ``output_size`` (spatial dims)."""
        size = list(output_size)[-self._n:]
        extra = []
        for d in range(self._n):
            in_size = input.shape[input.dim() - self._n + d]
            smallest = ((in_size - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            if not smallest <= size[d] < smallest + self.stride[d]:
                raise ValueError(f"requested an output size of {size}, but valid sizes range "
                                 f"from {smallest} to {smallest + self.stride[d] - 1} (for an "
                                 f"input of {list(input.shape[2:])})")
            extra.append(size[d] - smallest)
        return tuple(extra)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the gradient of Conv1d w.r.t. its input).

    >>> import chainrule as cr
    >>> cr.nn.ConvTranspose1d(2, 3, 3, stride=2).weight.shape
    chainrule.Size([2, 3, 3])
    """

    _n = 1

    def _functional(self):
        return F.conv_transpose1d


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution (the gradient of Conv2d w.r.t. its input).

    >>> import chainrule as cr
    >>> cr.nn.ConvTranspose2d(4, 2, 3, stride=2)
    ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2))
    """

    def _functional(self):
        return F.conv_transpose2d


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution (the gradient of Conv3d w.r.t. its input).

    >>> import chainrule as cr
    >>> up = cr.nn.ConvTranspose3d(4, 2, 2, stride=2)
    >>> up, up(cr.ones(1, 4, 2, 3, 3)).shape
    (ConvTranspose3d(4, 2, kernel_size=(2, 2, 2), stride=(2, 2, 2)), chainrule.Size([1, 2, 4, 6, 6]))
    """

    _n = 3

    def _functional(self):
        return F.conv_transpose3d
