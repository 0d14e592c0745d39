"""What ``Tensor.untyped_storage()`` and ``Tensor.storage()`` can honestly be over NumPy
memory: a window on the bytes of the memory a tensor's root (Note [views of a detached
tensor] in _ops/_registry.py) spans, from its first to its last byte. Views of one tensor
see the same storage (same ``data_ptr``, writes through either show in both); the
storage cannot be resized or moved to another device.
"""
import ctypes

import numpy as np
from numpy.lib.array_utils import byte_bounds

from . import _dtypes


def _root_bytes(root_data):
    """The bytes ``root_data`` spans, as a writable uint8 array sharing its memory."""
    if type(root_data) is not np.ndarray:
        raise NotImplementedError("storages are only modelled for CPU (NumPy) memory")
    low, high = byte_bounds(root_data)
    if high == low:
        return np.zeros(0, np.uint8)
    return np.frombuffer((ctypes.c_uint8 * (high - low)).from_address(low), np.uint8)


class _Items:
    """Element access to a storage's ``_items`` (its bytes, or its elements)."""

    device = property(lambda self: _cpu())

    def element_size(self):
        return self._items.itemsize

    def __getitem__(self, index):
        return self._items[index].item()

    def __setitem__(self, index, value):
        self._items[index] = value

    def tolist(self):
        return self._items.tolist()


class UntypedStorage(_Items):
    """The bytes under a tensor (``x.untyped_storage()``).

    >>> import chainrule as cr
    >>> x = cr.arange(6.0)
    >>> s = x[2:].untyped_storage()
    >>> s.nbytes(), s.data_ptr() == x.data_ptr()
    (24, True)
    """

    def __init__(self, root_data):
        self._owner = root_data                 # keeps the memory alive
        self._items = _root_bytes(root_data)

    def nbytes(self):
        return int(self._items.size)

    size = __len__ = nbytes

    def data_ptr(self):
        return self._items.__array_interface__["data"][0] if self._items.size else 0

    def __repr__(self):
        return _listing(self.tolist(), f"chainrule.storage.UntypedStorage(device=cpu) of size "
                                       f"{self.nbytes()}")


class TypedStorage(_Items):
    """The elements under a tensor in its dtype (``x.storage()``, which the reference
    deprecates in favour of :class:`UntypedStorage`).

    >>> import chainrule as cr, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore"); s = cr.arange(3.0)[1:].storage()
    >>> s.size(), s.dtype, s.tolist()
    (3, chainrule.float32, [0.0, 1.0, 2.0])
    """

    def __init__(self, root_data):
        self._untyped = UntypedStorage(root_data)
        self._items = self._untyped._items.view(root_data.dtype)
        self.dtype = _dtypes.from_numpy_dtype(root_data.dtype)

    def size(self):
        return int(self._items.size)

    __len__ = size

    def nbytes(self):
        return self._untyped.nbytes()

    def data_ptr(self):
        return self._untyped.data_ptr()

    def untyped(self):
        return self._untyped

    def __repr__(self):
        return _listing(self.tolist(), f"chainrule.storage.TypedStorage(dtype={self.dtype}, "
                                       f"device=cpu) of size {self.size()}")


def _listing(values, title):
    return "\n".join([f" {v}" for v in values] + [f"[{title}]"])


def _cpu():
    from ._tensor import device
    return device("cpu")
