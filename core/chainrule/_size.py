"""chainrule.Size: the type of ``tensor.shape`` (a tuple, printed like the reference)."""


class Size(tuple):
    """A tuple of dimension lengths.

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).shape
    chainrule.Size([2, 3])
    """

    def __repr__(self):
        return f"chainrule.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n
