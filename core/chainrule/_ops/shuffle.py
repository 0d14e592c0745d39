"""Derivative table: pixel_shuffle, pixel_unshuffle and channel_shuffle, each one node
like the reference's (PixelShuffleBackward0, PixelUnshuffleBackward0,
ChannelShuffleBackward0).

Note [shuffles are permutations]
    Each op only moves elements (a reshape, a permute, a reshape), so its VJP is the
    inverse move and its JVP the move itself: pixel_shuffle and pixel_unshuffle with the
    same factor undo each other; channel_shuffle with g groups is undone by
    channel_shuffle with C / g groups.
"""
from ._common import formula_helper
from ._namespaces import array_fn
from ._registry import apply_op, defop


def _pixel_shuffle_forward(x, factor):
    *batch, c, h, w = x.shape
    r, n = factor, len(x.shape) - 3
    y = x.reshape(*batch, c // (r * r), r, r, h, w)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*batch, c // (r * r), h * r, w * r)


def _pixel_unshuffle_forward(x, factor):
    *batch, c, h, w = x.shape
    r, n = factor, len(x.shape) - 3
    y = x.reshape(*batch, c, h // r, r, w // r, r)
    y = y.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return y.reshape(*batch, c * r * r, h // r, w // r)


def _channel_shuffle_forward(x, groups):
    n, c, rest = x.shape[0], x.shape[1], tuple(x.shape[2:])
    y = x.reshape(n, groups, c // groups, *rest).swapaxes(1, 2)
    return y.reshape(n, c, *rest)


PIXEL_SHUFFLE = defop("pixel_shuffle", _pixel_shuffle_forward, attrs=("factor",),
                      vjp=(lambda F, g, factor: F._pixel_unshuffle(g, factor),),
                      jvp=lambda F, t, factor: F._pixel_shuffle(t[0], factor))
PIXEL_UNSHUFFLE = defop("pixel_unshuffle", _pixel_unshuffle_forward, attrs=("factor",),
                        vjp=(lambda F, g, factor: F._pixel_shuffle(g, factor),),
                        jvp=lambda F, t, factor: F._pixel_unshuffle(t[0], factor))
CHANNEL_SHUFFLE = defop(
    "channel_shuffle", _channel_shuffle_forward, attrs=("groups",),
    vjp=(lambda F, g, groups: F._channel_shuffle(g, g.shape[1] // groups),),
    jvp=lambda F, t, groups: F._channel_shuffle(t[0], groups))
OP_NAMES = ("pixel_shuffle", "pixel_unshuffle")           # (channel_shuffle: N leads)

array_fn("_pixel_shuffle")(_pixel_shuffle_forward)
array_fn("_pixel_unshuffle")(_pixel_unshuffle_forward)
array_fn("_channel_shuffle")(_channel_shuffle_forward)


@formula_helper
def _pixel_shuffle(x, factor):
    return apply_op(PIXEL_SHUFFLE, (x,), {"factor": factor})


@formula_helper
def _pixel_unshuffle(x, factor):
    return apply_op(PIXEL_UNSHUFFLE, (x,), {"factor": factor})


@formula_helper
def _channel_shuffle(x, groups):
    return apply_op(CHANNEL_SHUFFLE, (x,), {"groups": groups})
