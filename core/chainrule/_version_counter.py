"""Version counters.

Note [version counters]
    Every tensor has a version counter shared with all of its views; each in-place op
    bumps it. Counters are created lazily (most tensors are never modified, viewed or
    saved), so ``Tensor._vc`` is None until one is needed.
"""


class VersionCounter:
    __slots__ = ("v",)

    def __init__(self):
        self.v = 0


def counter_of(tensor):
    vc = tensor._vc
    if vc is None:
        vc = tensor._vc = VersionCounter()
    return vc


def bump(tensor):
    vc = tensor._vc
    if vc is None:
        vc = tensor._vc = VersionCounter()
    vc.v += 1
