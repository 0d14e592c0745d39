"""Upsample (and its nearest / bilinear 2-D forms), Fold and Unfold: modules over
``F.interpolate``, ``F.fold`` and ``F.unfold``."""
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "Fold", "Unfold"]


class Upsample(Module):
    """Resize to ``size`` or by ``scale_factor`` with ``mode`` ('nearest', 'linear',
    'bilinear', 'bicubic', 'trilinear').

    >>> import chainrule as cr
    >>> up = cr.nn.Upsample(scale_factor=2)
    >>> up, up(cr.ones(1, 1, 2, 2)).shape
    (Upsample(scale_factor=2.0, mode='nearest'), chainrule.Size([1, 1, 4, 4]))
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-D upsampling.

    >>> import chainrule as cr
    >>> cr.nn.UpsamplingNearest2d(scale_factor=2)(cr.ones(1, 1, 1, 1)).shape
    chainrule.Size([1, 1, 2, 2])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-D upsampling with ``align_corners=True``.

    >>> import chainrule as cr
    >>> cr.nn.UpsamplingBilinear2d(size=3)(cr.tensor([[[[0.0, 1.0]]]])).flatten().tolist()
    [0.0, 0.5, 1.0, 0.0, 0.5, 1.0, 0.0, 0.5, 1.0]
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class Fold(Module):
    """Sum sliding-window columns (N, C*k*k, L) back into an image of
    ``output_size``: the inverse arrangement of Unfold.

    >>> import chainrule as cr
    >>> cr.nn.Fold((3, 3), 2)(cr.ones(1, 4, 4)).flatten().tolist()
    [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """The sliding windows of (N, C, H, W) input as columns (N, C*k*k, L).

    >>> import chainrule as cr
    >>> cr.nn.Unfold(2)(cr.ones(1, 1, 3, 3)).shape
    chainrule.Size([1, 4, 4])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
