"""CosineSimilarity and PairwiseDistance as modules; PixelShuffle, PixelUnshuffle
and ChannelShuffle (rearrangements by reshape and permute)."""
from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance", "PixelShuffle", "PixelUnshuffle",
           "ChannelShuffle"]


class CosineSimilarity(Module):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``.

    >>> import chainrule as cr
    >>> cr.nn.CosineSimilarity(dim=0)(cr.tensor([1.0, 0.0]), cr.tensor([1.0, 0.0])).item()
    1.0
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dimension.

    >>> import chainrule as cr
    >>> round(cr.nn.PairwiseDistance()(cr.zeros(1, 2), cr.tensor([[3.0, 4.0]])).item(), 4)
    5.0
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


def _shuffle(input, r, up):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r) when ``up``, the inverse otherwise."""
    *batch, c, h, w = input.shape
    if up:
        if c % (r * r) != 0:
            raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                               f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                               f"is not divisible by {r * r}")
        x = input.reshape(*batch, c // (r * r), r, r, h, w)
        n = len(batch)
        x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
        return x.reshape(*batch, c // (r * r), h * r, w * r)
    if h % r != 0 or w % r != 0:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but input.size(-2)={h}, input.size(-1)={w}")
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    n = len(batch)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


class PixelShuffle(Module):
    """Rearrange (*, C*r*r, H, W) into (*, C, H*r, W*r).

    >>> import chainrule as cr
    >>> cr.nn.PixelShuffle(2)(cr.arange(8.).reshape(1, 4, 1, 2)).tolist()
    [[[[0.0, 2.0, 1.0, 3.0], [4.0, 6.0, 5.0, 7.0]]]]
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return _shuffle(input, self.upscale_factor, True)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """The inverse of PixelShuffle.

    >>> import chainrule as cr
    >>> x = cr.arange(16.).reshape(1, 1, 4, 4)
    >>> cr.equal(cr.nn.PixelShuffle(2)(cr.nn.PixelUnshuffle(2)(x)), x)
    True
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return _shuffle(input, self.downscale_factor, False)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of (N, C, ...) input across ``groups``.

    >>> import chainrule as cr
    >>> cr.nn.ChannelShuffle(2)(cr.arange(4.).reshape(1, 4, 1)).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        n, c, *rest = input.shape
        g = self.groups
        return input.reshape(n, g, c // g, *rest).transpose(1, 2).reshape(n, c, *rest)

    def extra_repr(self):
        return f"groups={self.groups}"
