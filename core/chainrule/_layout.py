"""The reference's ``layout`` and ``memory_format`` objects (``chainrule.strided``,
``chainrule.contiguous_format``, ...): accepted wherever an argument takes them.
chainrule tensors are always strided NumPy arrays; a memory format other than
contiguous or preserve is accepted and has no effect on layout (NumPy strides)."""


class _Named:
    """A constant known by its name (pickled as a reference to it)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"chainrule.{self.name}"

    def __reduce__(self):
        return self.name


class layout(_Named):
    """A tensor layout; chainrule tensors are ``strided``.

    >>> import chainrule as cr
    >>> cr.ones(2).layout
    chainrule.strided
    """
    __slots__ = ()


class memory_format(_Named):
    """How a tensor's elements are ordered in memory (``contiguous_format``, ...).

    >>> import chainrule as cr
    >>> cr.contiguous_format
    chainrule.contiguous_format
    """
    __slots__ = ()


strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged = (
    layout(n) for n in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                        "sparse_bsc", "jagged"))
contiguous_format, preserve_format, channels_last, channels_last_3d = (
    memory_format(n) for n in ("contiguous_format", "preserve_format", "channels_last",
                               "channels_last_3d"))

__all__ = ["layout", "memory_format", "strided", "sparse_coo", "sparse_csr", "sparse_csc",
           "sparse_bsr", "sparse_bsc", "jagged", "contiguous_format", "preserve_format",
           "channels_last", "channels_last_3d"]
