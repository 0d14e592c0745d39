"""DeviceArray: an n-dimensional array in device memory that speaks NumPy's protocols.

Note [device array protocols]
    Core's derivative table computes with NumPy: forwards and VJP formulas call ufuncs
    (``np.exp(x)``, ``a * b``), NumPy functions (``np.sum``, ``np.where``,
    ``np.take_along_axis``), ndarray methods (``x.reshape``, ``x.astype``) and
    indexing. A DeviceArray implements ``__array_ufunc__`` (_ufuncs.py) and
    ``__array_function__`` (_functions.py) so those same calls run kernels on the
    device: one derivative table for both devices. Results stay on the device; a host
    ndarray in the same operation is the reference's mixed-device error, except 0-d
    ones (a Python scalar's constant) and integer/boolean index arrays, which are
    copied over as the reference copies CPU indices. Implicit conversion to NumPy
    (``np.asarray(device_array)``) raises, like CuPy: ``get()`` copies to the host.

Memory: ``_mem`` is the allocation (a block of the runtime's caching allocator, given
back when the last array viewing it dies); ``_ptr`` the address of element [0, ...];
``_est`` the strides in elements (``strides`` gives NumPy's bytes).
"""
import ctypes
import math

import numpy as np

import chainrule as cr
from chainrule._array_operators import install_operators

from . import _kernels as K

_byref = ctypes.byref


def current_stream_handle():
    """The handle of the current stream (None: the default stream)."""
    return _streams.current_handle()


class Memory:
    """One device allocation; freed (returned to the caching allocator) with the last
    array that uses it."""

    __slots__ = ("ptr", "nbytes", "device", "__weakref__")

    def __init__(self, nbytes, device, stream=None):
        """``nbytes`` on ``device``, in the pool of ``stream`` (a handle; None: the
        default stream)."""
        ptr = ctypes.c_void_p()
        rc = K.lib().cr_alloc(device, nbytes or 1, stream, _byref(ptr))
        if rc:
            K.check(rc)
        self.ptr, self.nbytes, self.device = ptr.value, nbytes, device

    def __del__(self):
        ptr, self.ptr = self.ptr, None
        if ptr and K._LIB:
            K._LIB[0].cr_free(ptr)


class _Flags:
    """The ``flags`` of a DeviceArray (what core reads of an ndarray's)."""

    __slots__ = ("_a",)

    def __init__(self, a):
        self._a = a

    @property
    def c_contiguous(self):
        return self._a._est == contiguous_strides(self._a.shape) or self._a.size <= 1

    @property
    def f_contiguous(self):
        a = self._a
        return a._est == contiguous_strides(a.shape[::-1])[::-1] or a.size <= 1

    contiguous = c_contiguous

    @property
    def owndata(self):
        return self._a._owner

    @property
    def writeable(self):
        return self._a._writeable

    @writeable.setter
    def writeable(self, value):
        self._a._writeable = bool(value)

    aligned = True

    def __getitem__(self, name):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "OWNDATA": "owndata", "WRITEABLE": "writeable"}.get(name, name))


_CONTIGUOUS = {}


def contiguous_strides(shape):
    """C-order strides (in elements) of ``shape``; cached per shape (a tuple)."""
    strides = _CONTIGUOUS.get(shape)
    if strides is None:
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= max(n, 1)
        strides = tuple(reversed(strides))
        if type(shape) is tuple and len(_CONTIGUOUS) < 4096:
            _CONTIGUOUS[shape] = strides
    return strides


class DeviceArray:
    """An array in the memory of a CUDA device (Note [device array protocols]).

    >>> import chainrule as cr, numpy as np
    >>> if cr.cuda.is_available():
    ...     from chainrule_cuda import DeviceArray
    ...     a = DeviceArray.from_host(np.arange(3.0))
    ...     (a * 2).get().tolist()
    ... else:
    ...     [0.0, 2.0, 4.0]
    [0.0, 2.0, 4.0]
    """

    __slots__ = ("_mem", "_ptr", "shape", "_est", "dtype", "_index", "_owner", "_writeable",
                 "_desc", "__weakref__")
    __array_priority__ = 2000

    # -- construction ----------------------------------------------------------------
    @classmethod
    def _view(cls, mem, ptr, shape, est, dtype, index, owner=False):
        a = object.__new__(cls)
        a._mem, a._ptr, a.shape, a._est = mem, ptr, tuple(shape), tuple(est)
        a.dtype, a._index, a._owner, a._writeable = dtype, index, owner, True
        a._desc = None                  # Note [cached descriptors] in _kernels.py
        return a

    @classmethod
    def empty(cls, shape, dtype, device=0):
        shape = tuple(int(n) for n in shape)
        dtype = np.dtype(dtype)
        if dtype not in K.DTYPE_CODES:
            raise TypeError(f"chainrule-cuda does not support the dtype {dtype}")
        return new(shape, dtype, device, _streams.current_handle())

    @classmethod
    def from_host(cls, arr, device=0, dtype=None):
        """A device copy of a host array (any layout; NumPy scalars and lists too)."""
        host = np.asarray(arr, dtype)
        if not host.flags.c_contiguous:       # (np.ascontiguousarray makes 0-d arrays 1-d)
            host = host.copy()
        out = cls.empty(host.shape, host.dtype, device)
        if host.nbytes:
            K.check(K.lib().cr_memcpy(ctypes.c_void_p(out._ptr),
                                      ctypes.c_void_p(host.ctypes.data),
                                      ctypes.c_size_t(host.nbytes), 0, current_stream_handle()))
        return out

    def get(self):
        """A host (NumPy) copy; waits for the work queued on the array."""
        src = self if self.flags.c_contiguous else self.copy()
        host = np.empty(self.shape, self.dtype)
        if host.nbytes:
            K.check(K.lib().cr_memcpy(ctypes.c_void_p(host.ctypes.data),
                                      ctypes.c_void_p(src._ptr), ctypes.c_size_t(host.nbytes),
                                      1, current_stream_handle()))
            from . import _streams
            _streams.synchronize_current()
        return host

    # -- metadata ----------------------------------------------------------------------
    @property
    def device(self):
        return cr.device("cuda", self._index)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def strides(self):
        item = self.dtype.itemsize
        return tuple(s * item for s in self._est)

    @property
    def flags(self):
        return _Flags(self)

    def setflags(self, write=None, align=None, uic=None):
        if write is not None:
            self._writeable = bool(write)

    @property
    def base(self):
        return None if self._owner else self._mem

    @property
    def data_ptr(self):
        return self._ptr

    @property
    def T(self):
        return self.transpose()

    @property
    def mT(self):
        return self.swapaxes(-1, -2)

    @property
    def real(self):
        if self.dtype.kind != "c":
            return self
        return self._component(0)

    @property
    def imag(self):
        if self.dtype.kind != "c":
            out = zeros(self.shape, self.dtype, self._index)
            out._writeable = False
            return out
        return self._component(1)

    @real.setter
    def real(self, value):
        self.real[...] = value

    @imag.setter
    def imag(self, value):
        if self.dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        self.imag[...] = value

    def _component(self, which):
        part = np.dtype(np.float32 if self.dtype == np.complex64 else np.float64)
        return DeviceArray._view(self._mem, self._ptr + which * part.itemsize, self.shape,
                                 tuple(2 * s for s in self._est), part, self._index)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        return f"DeviceArray({self.get()!r}, device='{self.device}')"

    __hash__ = object.__hash__

    # -- host values -------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    def item(self, *args):
        if args:
            return self[args if len(args) > 1 else args[0]].item()
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.get().reshape(()).item()

    def tolist(self):
        return self.get().tolist()

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self.dtype.kind not in "iub" or self.size != 1:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # -- layout ------------------------------------------------------------------------
    def as_strided(self, shape, strides):
        """A view with NumPy byte ``strides`` over the same memory (as_strided)."""
        item = self.dtype.itemsize
        return DeviceArray._view(self._mem, self._ptr, shape, tuple(s // item for s in strides),
                                 self.dtype, self._index)

    def _restride(self, shape, est, offset=0):
        return DeviceArray._view(self._mem, self._ptr + offset * self.dtype.itemsize, shape, est,
                                 self.dtype, self._index)

    def copy(self, order="C"):
        out = DeviceArray.empty(self.shape, self.dtype, self._index)
        if self.size:
            K.copy(out, self)
        return out

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        out = DeviceArray.empty(self.shape, dtype, self._index)
        if self.size:
            K.copy(out, self)
        return out

    def view(self, dtype=None, type=None):
        if dtype is None or np.dtype(dtype) == self.dtype:
            return self._restride(self.shape, self._est)
        dtype = np.dtype(dtype)
        if dtype.itemsize == self.dtype.itemsize:
            return DeviceArray._view(self._mem, self._ptr, self.shape, self._est, dtype,
                                     self._index)
        return self._view_resized(dtype)

    def _view_resized(self, dtype):
        """A view as a dtype of another size: the last axis, contiguous, changes length
        (NumPy's rule), the other strides are rescaled."""
        old, new = self.dtype.itemsize, dtype.itemsize
        if not self.ndim or (self._est[-1] != 1 and self.shape[-1] != 1) or \
                (self.shape[-1] * old) % new or any((s * old) % new for s in self._est[:-1]):
            raise ValueError("To change to a dtype of a different size, the last axis must "
                             "be contiguous")
        shape = self.shape[:-1] + (self.shape[-1] * old // new,)
        est = tuple(s * old // new for s in self._est[:-1]) + (1,)
        return DeviceArray._view(self._mem, self._ptr, shape, est, dtype, self._index)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = _fill_shape(shape, self.size)
        est = _reshape_strides(self.shape, self._est, shape)
        if est is None:
            return self.copy().reshape(shape)
        return self._restride(shape, est)

    def ravel(self, order="C"):
        return self.reshape(-1)

    def flatten(self, order="C"):
        return self.copy().reshape(-1)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        axes = tuple(_axis(a, self.ndim) for a in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError("axes don't match array")
        return self._restride([self.shape[a] for a in axes], [self._est[a] for a in axes])

    def swapaxes(self, a, b):
        axes = list(range(self.ndim))
        a, b = _axis(a, self.ndim), _axis(b, self.ndim)
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    def squeeze(self, axis=None):
        if axis is None:
            axes = [i for i, n in enumerate(self.shape) if n == 1]
        else:
            axes = [_axis(a, self.ndim) for a in (axis if isinstance(axis, tuple) else (axis,))]
            if any(self.shape[a] != 1 for a in axes):
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 "equal to one")
        keep = [i for i in range(self.ndim) if i not in axes]
        return self._restride([self.shape[i] for i in keep], [self._est[i] for i in keep])

    def broadcast_to(self, shape):
        shape = tuple(shape)
        lead = len(shape) - self.ndim
        if lead < 0:
            raise ValueError(f"cannot broadcast a non-scalar to a scalar array")
        est = [0] * lead
        for n, have, s in zip(shape[lead:], self.shape, self._est):
            if have == n:
                est.append(s)
            elif have == 1:
                est.append(0)
            else:
                raise ValueError(f"operands could not be broadcast together with remapped "
                                 f"shapes [original->remapped]: {self.shape} and requested "
                                 f"shape {shape}")
        return self._restride(shape, est)

    def fill(self, value):
        if self.size:
            K.fill(self, value)

    def conj(self):
        return np.conjugate(self)

    conjugate = conj

    # The reduction and other methods with NumPy function twins (``a.sum(...)`` is
    # ``np.sum(a, ...)``): _functions.METHODS, bound at the end of this module (class
    # attributes, not a __getattr__: that hook would slow every attribute access).

    # -- the protocols -----------------------------------------------------------------
    # __array_ufunc__: _ufuncs.array_ufunc, bound at the end of this module.

    def __array_function__(self, func, types, args, kwargs):
        return _functions.array_function(func, types, args, kwargs, self)

    def __getitem__(self, key):
        return _indexing.getitem(self, key)

    def __setitem__(self, key, value):
        _indexing.setitem(self, key, value)


def _binary_operator(ufunc, reflected=False):
    """``a op b`` is ``ufunc(a, b)``; the common operands take Note [ufunc fast paths]
    without NumPy's dispatch."""
    if reflected:
        def op(self, other):
            result = _ufuncs.fast_binary(ufunc, other, self)
            return ufunc(other, self) if result is None else result
    else:
        def op(self, other):
            result = _ufuncs.fast_binary(ufunc, self, other)
            return ufunc(self, other) if result is None else result
    return op


install_operators(DeviceArray, _binary_operator)
DeviceArray.__neg__ = lambda self: _ufuncs.array_ufunc(self, np.negative, "__call__", self)
DeviceArray.__pos__ = lambda self: self.copy()
DeviceArray.__abs__ = lambda self: _ufuncs.array_ufunc(self, np.absolute, "__call__", self)
DeviceArray.__invert__ = lambda self: np.invert(self)


def _axis(a, ndim):
    a = int(a)
    if not -max(ndim, 1) <= a < max(ndim, 1):
        raise np.exceptions.AxisError(a, ndim)
    return a + ndim if a < 0 else a


def _fill_shape(shape, size):
    shape = [int(n) for n in shape]
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
        shape[shape.index(-1)] = size // known
    if math.prod(shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
    return tuple(shape)


def _reshape_strides(old_shape, old_est, new_shape):
    """Strides for viewing (old_shape, old_est) as new_shape without a copy, or None
    (NumPy's rule: each group of old dims that becomes a group of new dims must be
    contiguous within itself)."""
    if math.prod(new_shape) == 0:
        return contiguous_strides(new_shape)
    old = [(n, s) for n, s in zip(old_shape, old_est) if n != 1]
    new_est = [0] * len(new_shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new_shape) and oi < len(old):
        new_size, old_size = new_shape[ni], old[oi][0]
        while new_size != old_size:
            if new_size < old_size:
                new_size *= new_shape[nj]
                nj += 1
            else:
                old_size *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new_est[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new_est[k - 1] = new_est[k] * new_shape[k]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    return tuple(new_est)


def new(shape, dtype, index, stream):
    """A fresh C-contiguous array allocated for ``stream`` (the current stream's
    handle): DeviceArray.empty without the argument checks, for the hot paths
    (``shape`` a tuple of ints, ``dtype`` a supported np.dtype). Memory.__init__ and
    the descriptor (Note [cached descriptors]) are written out here: per-op cost."""
    nbytes = math.prod(shape) * dtype.itemsize
    ptr = ctypes.c_void_p()
    rc = (K._LIB[0] if K._LIB else K.lib()).cr_alloc(index, nbytes or 1, stream, _byref(ptr))
    if rc:
        K.check(rc)
    ptr = ptr.value
    mem = object.__new__(Memory)
    mem.ptr, mem.nbytes, mem.device = ptr, nbytes, index
    est = _CONTIGUOUS.get(shape)
    if est is None:
        est = contiguous_strides(shape)
    a = object.__new__(DeviceArray)
    a._mem, a._ptr, a.shape, a._est, a.dtype = mem, ptr, shape, est, dtype
    a._index, a._owner, a._writeable = index, True, True
    code = K.DTYPE_CODES[dtype]
    a._desc = ptr.to_bytes(8, "little") + (K._TAILS.get((code, shape, est)) or
                                           K._tail(code, shape, est))
    return a


def zeros(shape, dtype, device=0):
    out = DeviceArray.empty(shape, dtype, device)
    out.fill(0)
    return out


def full(shape, value, dtype, device=0):
    out = DeviceArray.empty(shape, dtype, device)
    out.fill(value)
    return out


# The protocol implementations (they import this module; bound here, not per call).
from . import _functions, _indexing, _streams, _ufuncs  # noqa: E402

DeviceArray.__array_ufunc__ = _ufuncs.array_ufunc


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    return method


for _name, _fn in _functions.METHODS.items():
    setattr(DeviceArray, _name, _method(_fn))
