"""The ``meta`` device: tensors with a shape, a dtype and strides but no data, for
building models too big for memory and checking shapes without computing.

Note [meta arrays]
    A meta tensor's ``_data`` is a MetaArray: a device array (Note [device arrays] in
    _tensor.py) that holds no memory. Its ``__array_ufunc__`` / ``__array_function__``
    work out what the NumPy call would return (shape, dtype, strides) without
    computing or allocating anything of the operands' size, so the derivative table's
    forwards and VJP formulas run on it unchanged (autograd records and runs backward,
    giving meta gradients). How each call is inferred:
      - ufuncs: the shape from broadcasting, the dtype from the same ufunc run on 0-d
        zeros of the operands' dtypes;
      - reductions and scans: the shape by rule (axis, keepdims), the dtype from the
        function run on a copy of the operand with each dimension shrunk to one;
      - views (transpose, basic indexing, reshape without a copy, ...): the function
        run on a *stride proxy*, a uint8 array whose byte strides are the meta array's
        element strides over a one-byte buffer (views never read it), which gives the
        exact strides and storage offset;
      - copies that only move elements (concatenate, take, advanced indexing, ...):
        the function run on *void proxies*, arrays of a zero-byte dtype (no memory);
      - matmul, dot and einsum by rule; anything else runs on zero-stride templates
        when its operands are small (SMALL elements), else raises NotImplementedError.
    Data-dependent shapes (nonzero, boolean masks, unique) raise the reference's
    NotImplementedError; reading values (item, tolist, copies to another device)
    raises its errors; writing into a meta array does nothing.
"""
import math

import numpy as np

from ._array_operators import install_operators
from ._tensor import DEFAULT_DEVICE, DEVICE_ARRAY_TYPES, device as _device

META = _device("meta")
NO_DATA = "Cannot copy out of meta tensor; no data!"
NO_ITEM = "Tensor.item() cannot be called on meta tensors"
DATA_DEPENDENT = ("The register_meta function for torch.nonzero() raises unimplemented by "
                  "default, as a correct data-independent implementation does not exist.")
SMALL = 1 << 16                 # operands up to this many elements may run on templates
VOID = np.dtype([])             # a zero-byte dtype: void proxies hold no memory
_BUFFER = np.zeros(1, np.uint8)
_BASE = _BUFFER.__array_interface__["data"][0]


def contiguous_strides(shape):
    """Row-major strides in elements."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _layout_strides(shape, like):
    """Strides of a new array of ``shape`` laid out like ``like``'s strides (NumPy's
    order 'K': the axes in the order of decreasing stride), dense."""
    order = sorted(range(len(shape)), key=lambda i: -abs(like[i]))
    strides, step = [0] * len(shape), 1
    for i in reversed(order):
        strides[i] = step
        step *= max(shape[i], 1)
    return tuple(strides)


class _Interface:
    """An object NumPy turns into an array from its ``__array_interface__``."""

    def __init__(self, spec):
        self.__array_interface__ = spec


class MetaArray:
    """An array with a shape, dtype and strides and no data (Note [meta arrays]).

    >>> import numpy as np
    >>> from chainrule._meta import MetaArray
    >>> a = MetaArray.empty((2, 3), np.float32)
    >>> (np.exp(a) + 1).shape, a.T.strides
    ((2, 3), (4, 12))
    """

    __slots__ = ("shape", "dtype", "_est", "_offset", "_writeable", "_truth", "__weakref__")
    __array_priority__ = 2000

    @classmethod
    def empty(cls, shape, dtype, est=None, offset=0):
        a = object.__new__(cls)
        a.shape = tuple(int(n) for n in shape)
        a.dtype = np.dtype(dtype)
        a._est = contiguous_strides(a.shape) if est is None else tuple(est)
        a._offset, a._writeable, a._truth = offset, True, None
        return a

    @classmethod
    def like(cls, arr, dtype=None):
        """A meta array with ``arr``'s shape and layout (order 'K')."""
        shape = tuple(arr.shape)
        est = _layout_strides(shape, arr.strides) if len(shape) > 1 else None
        return cls.empty(shape, arr.dtype if dtype is None else dtype, est)

    # -- metadata ----------------------------------------------------------------------
    device = META
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    strides = property(lambda self: tuple(s * self.dtype.itemsize for s in self._est))
    data_ptr = property(lambda self: self._offset * self.dtype.itemsize)
    base = None
    T = property(lambda self: self.transpose())
    mT = property(lambda self: self.swapaxes(-1, -2))

    @property
    def flags(self):
        return _Flags(self)

    def setflags(self, write=None, align=None, uic=None):
        if write is not None:
            self._writeable = bool(write)

    @property
    def real(self):
        return self._component(0) if self.dtype.kind == "c" else self

    @real.setter
    def real(self, value):
        pass                                   # writes into a meta array do nothing

    @property
    def imag(self):
        if self.dtype.kind != "c":
            return MetaArray.like(self)
        return self._component(1)

    @imag.setter
    def imag(self, value):
        if self.dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")

    def _component(self, which):
        part = np.dtype(np.float32 if self.dtype == np.complex64 else np.float64)
        return MetaArray.empty(self.shape, part, tuple(2 * s for s in self._est),
                               2 * self._offset + which)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    __hash__ = object.__hash__

    # -- values: there are none ----------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(NO_DATA)

    def get(self):
        raise NotImplementedError(NO_DATA)

    tolist = get

    def item(self, *args):
        raise RuntimeError(NO_ITEM)

    __float__ = __int__ = __complex__ = __index__ = item

    def __bool__(self):
        """Note [meta truth]
            Forwards and formulas branch on values (``if np.any(x == 0):`` a slower
            formula; ``if not np.all(x > 0): raise``). A meta array has none, so the
            0-d results of ``np.any`` / ``np.all`` answer as if no element were special
            (any: False, all: True), and 0-d order comparisons (``idx.max() >= n``)
            as if no bound were crossed (False): the general path runs and no value
            check fails, as the reference's meta kernels check no values. Anything
            else raises."""
        if self._truth is None:
            raise RuntimeError(NO_ITEM)
        return self._truth

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def fill(self, value):
        pass

    def sort(self, axis=-1, kind=None, order=None):
        pass

    # -- layout --------------------------------------------------------------------------
    def proxy(self, itemsize=1):
        """The stride proxy (Note [meta arrays]): never read, only re-strided; with
        ``itemsize`` 1 its byte strides and offset are the meta array's in elements."""
        return np.asarray(_Interface({"shape": self.shape, "typestr": f"|V{itemsize}",
                                      "version": 3, "data": (_BASE + self._offset * itemsize,
                                                             False),
                                      "strides": tuple(s * itemsize for s in self._est)}))

    def from_proxy(self, p, dtype=None):
        return MetaArray.empty(p.shape, self.dtype if dtype is None else dtype, p.strides,
                               p.__array_interface__["data"][0] - _BASE)

    def as_strided(self, shape, strides):
        item = self.dtype.itemsize
        return MetaArray.empty(shape, self.dtype, tuple(s // item for s in strides),
                               self._offset)

    def copy(self, order="C"):
        return MetaArray.empty(self.shape, self.dtype)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return MetaArray.like(self, dtype) if order == "K" else MetaArray.empty(self.shape, dtype)

    def view(self, dtype=None, type=None):
        if dtype is None or np.dtype(dtype).itemsize == self.dtype.itemsize:
            return MetaArray.empty(self.shape, self.dtype if dtype is None else dtype,
                                   self._est, self._offset)
        dtype = np.dtype(dtype)
        old, new = self.dtype.itemsize, dtype.itemsize
        viewed = self.proxy(old).view(np.dtype((np.void, new)))
        return MetaArray.empty(viewed.shape, dtype, tuple(s // new for s in viewed.strides),
                               (viewed.__array_interface__["data"][0] - _BASE) // new)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        p = self.proxy()
        try:
            return self.from_proxy(np.reshape(p, shape, copy=False))
        except ValueError:
            pass
        return MetaArray.empty(np.reshape(np.empty(self.shape, VOID), shape).shape, self.dtype)

    def ravel(self, order="C"):
        return self.reshape(-1)

    def flatten(self, order="C"):
        return MetaArray.empty((self.size,), self.dtype)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return self.from_proxy(self.proxy().transpose(*(axes or ())))

    def swapaxes(self, a, b):
        return self.from_proxy(self.proxy().swapaxes(a, b))

    def squeeze(self, axis=None):
        return self.from_proxy(self.proxy().squeeze(axis))

    def broadcast_to(self, shape):
        return self.from_proxy(np.broadcast_to(self.proxy(), shape))

    def conj(self):
        return np.conjugate(self)

    conjugate = conj

    def __getattr__(self, name):
        """The methods with NumPy function twins (``a.sum(...)`` is ``np.sum(a, ...)``)."""
        fn = METHODS.get(name)
        if fn is None:
            raise AttributeError(f"'MetaArray' object has no attribute '{name}'")
        return lambda *args, **kwargs: fn(self, *args, **kwargs)

    # -- the protocols ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from . import _meta_rules
        return _meta_rules.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from . import _meta_rules
        return _meta_rules.array_function(func, args, kwargs)

    def __getitem__(self, key):
        from . import _meta_rules
        return _meta_rules.getitem(self, key)

    def __setitem__(self, key, value):
        from . import _meta_rules
        _meta_rules.check_operands((self, value))


class _Flags:
    """The ``flags`` of a MetaArray (what core reads of an ndarray's)."""

    __slots__ = ("_a",)
    aligned = True
    owndata = True

    def __init__(self, a):
        self._a = a

    @property
    def c_contiguous(self):
        a = self._a
        return a.size <= 1 or all(s == c for s, c, n in
                                  zip(a._est, contiguous_strides(a.shape), a.shape) if n != 1)

    @property
    def f_contiguous(self):
        a = self._a
        f = contiguous_strides(a.shape[::-1])[::-1]
        return a.size <= 1 or all(s == c for s, c, n in zip(a._est, f, a.shape) if n != 1)

    contiguous = c_contiguous

    @property
    def writeable(self):
        return self._a._writeable

    @writeable.setter
    def writeable(self, value):
        self._a._writeable = bool(value)

    def __getitem__(self, name):
        return getattr(self, name.lower())


install_operators(MetaArray)
MetaArray.__neg__ = lambda self: np.negative(self)
MetaArray.__pos__ = lambda self: self.copy()
MetaArray.__abs__ = lambda self: np.absolute(self)
MetaArray.__invert__ = lambda self: np.invert(self)

METHODS = {name: getattr(np, name) for name in (
    "sum", "mean", "prod", "max", "min", "std", "var", "any", "all", "argmax", "argmin",
    "cumsum", "cumprod", "clip", "nonzero", "repeat", "take", "diagonal", "trace", "dot",
    "argsort", "searchsorted", "round", "ptp", "compress", "put", "partition",
    "argpartition")}


class MetaBackend:
    """The ``meta`` backend (Note [device backend] in _backends.py), built into core."""

    array_type = MetaArray

    def is_available(self):
        return True

    def device_count(self):
        return 1

    def synchronize(self, device=None):
        pass

    def canonical(self, device):
        return device

    def to_device_array(self, arr, device, non_blocking=False):
        return MetaArray.like(arr)

    def random(self, kind, shape, dtype, device, arg0, arg1):
        return MetaArray.empty(shape, dtype)


def is_meta_target(device):
    """Whether a factory's ``device=`` (or, when None, the default device) is meta."""
    if device is None:
        device = DEFAULT_DEVICE.device
        if device is None:
            return False
    return (device.type if isinstance(device, _device) else _device(device).type) == "meta"


DEVICE_ARRAY_TYPES.add(MetaArray)
