"""``Tensor.new_*``: factories whose dtype and device default to the tensor's own
(``x.new_zeros(2, 3)`` is ``zeros(2, 3, dtype=x.dtype, device=x.device)``), and
``empty_strided``. The results are new leaves: no history of ``self`` is kept."""
import numbers

import numpy as np

from . import _dtypes
from ._factories import _as_array, _finish, _size_args, keyword_sizes, warn_copy_construct
from ._tensor import Tensor


def _defaults(self, dtype, device):
    return (self.dtype if dtype is None else _dtypes.to_dtype(dtype),
            self.device if device is None else device)


def _size_tuple(size, method):
    """A size given as one sequence (new_full and new_empty_strided take no varargs)."""
    if isinstance(size, (numbers.Integral, np.integer)) or not hasattr(size, "__iter__"):
        raise TypeError(f"{method}(): argument 'size' (position 1) must be tuple of ints, "
                        f"not {type(size).__name__}")
    return _size_args((tuple(size),))


def _new_filled(fill, method):
    def new(self, *sizes, size=None, dtype=None, device=None, requires_grad=False,
            layout=None, pin_memory=False):
        size = keyword_sizes(sizes, size)
        if len(size) == 1 and not hasattr(size[0], "__iter__") and \
                not isinstance(size[0], (numbers.Integral, np.integer)):
            raise TypeError(f"{method}(): argument 'size' (position 1) must be tuple of "
                            f"ints, not {type(size[0]).__name__}")
        d, dev = _defaults(self, dtype, device)
        return _finish(fill(_size_args(size), d.np), requires_grad, dev)
    new.__name__ = method
    return new


new_zeros = _new_filled(np.zeros, "new_zeros")
new_ones = _new_filled(np.ones, "new_ones")
new_empty = _new_filled(np.empty, "new_empty")
new_zeros.__doc__ = """Zeros of ``size`` with this tensor's dtype and device.

    >>> import chainrule as cr
    >>> cr.ones(1, dtype=cr.float64).new_zeros(2, 3).dtype
    chainrule.float64
    """
new_ones.__doc__ = """Ones of ``size`` with this tensor's dtype and device.

    >>> import chainrule as cr
    >>> cr.tensor([1, 2]).new_ones((2,)).tolist()
    [1, 1]
    """
new_empty.__doc__ = """An uninitialised tensor of ``size`` with this tensor's dtype and device.

    >>> import chainrule as cr
    >>> cr.ones(1).new_empty(4).shape
    chainrule.Size([4])
    """


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    """``fill_value`` in every entry of ``size``, with this tensor's dtype and device
    (the value is cast to it, not used to infer it).

    >>> import chainrule as cr
    >>> cr.tensor([1, 2]).new_full((2,), 2.5).tolist()
    [2, 2]
    """
    d, dev = _defaults(self, dtype, device)
    shape = _size_tuple(size, "new_full")
    return _finish(np.full(shape, np.asarray(fill_value).astype(d.np)), requires_grad, dev)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
    """A copy of ``data`` with this tensor's dtype and device (unless given).

    >>> import chainrule as cr
    >>> cr.ones(1, dtype=cr.float64).new_tensor([1, 2]).dtype
    chainrule.float64
    """
    if isinstance(data, Tensor):
        warn_copy_construct("detach().clone()", "tensor.new_tensor(sourceTensor)")
    d, dev = _defaults(self, dtype, device)
    return _finish(_as_array(data, d), requires_grad, dev)


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      layout=None, pin_memory=False):
    """An uninitialised tensor of ``size`` and ``stride`` (in elements), with this
    tensor's dtype and device.

    >>> import chainrule as cr
    >>> cr.ones(1).new_empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    d, dev = _defaults(self, dtype, device)
    return empty_strided(_size_tuple(size, "new_empty_strided"), stride, dtype=d, device=dev,
                         requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False):
    """An uninitialised tensor of ``size`` whose strides (in elements) are ``stride``.

    >>> import chainrule as cr
    >>> cr.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    shape, strides = _size_args((tuple(size),)), tuple(int(s) for s in stride)
    if len(shape) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(strides)})")
    d = _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    buffer = np.empty(extent, d.np)
    arr = np.lib.stride_tricks.as_strided(buffer, shape, [s * d.np.itemsize for s in strides])
    return _finish(arr, requires_grad, device)


METHODS = {"new_zeros": new_zeros, "new_ones": new_ones, "new_empty": new_empty,
           "new_full": new_full, "new_tensor": new_tensor,
           "new_empty_strided": new_empty_strided}
for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)
