"""The kernel entry points of the C ABI (cuda/csrc/cr_cuda.h), called on DeviceArrays.

Each function takes DeviceArrays whose dtypes the caller has already resolved (the
kernels take one common input dtype; _ufuncs.py does NumPy's type resolution) and
queues one kernel on the current stream. Op codes come from ``cr_op_names`` by name,
so the numbering lives only in the C++ sources.
"""
import ctypes
import functools
import struct

import ml_dtypes
import numpy as np

MAX_DIMS = 16

# enum cr_dtype, in code order
DTYPES = [np.dtype(np.bool_), np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16),
          np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float16),
          np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64),
          np.dtype(np.complex64), np.dtype(np.complex128)]
DTYPE_CODES = {d: i for i, d in enumerate(DTYPES)}


class CrTensor(ctypes.Structure):
    """struct cr_tensor: a strided view of device memory (strides in elements)."""
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_DIMS), ("strides", ctypes.c_int64 * MAX_DIMS)]


_LIB = []


def lib():
    """The loaded library (chainrule_cuda._lib picks the GPU or the host build)."""
    if not _LIB:
        _LIB.append(_configure(_load()))
    return _LIB[0]


def _load():
    from . import _lib
    return _lib.library()


_P, _D = ctypes.c_void_p, ctypes.c_double
_ARGTYPES = {  # the entry points that take doubles, 64-bit integers or sizes
    "cr_fill": [_P, _D, _D, _P],
    "cr_unary": [ctypes.c_int, _P, _P, _D, _P],
    "cr_reduce": [ctypes.c_int, _P, _P, ctypes.c_uint64, _D, _P],
    "cr_matmul": [_P, _P, _P, _D, _D, _P],
    "cr_masked_fill": [_P, _P, _D, _D, _P],
    "cr_random": [ctypes.c_int, _P, ctypes.c_uint64, ctypes.c_uint64, _D, _D, _P],
    "cr_alloc": [ctypes.c_int, ctypes.c_size_t, _P, _P],
    "cr_free": [_P],
    "cr_memcpy": [_P, _P, ctypes.c_size_t, ctypes.c_int, _P],
    "cr_stream_synchronize": [_P],
}


def _configure(library):
    """Declares the entry points this module calls that the loader left undeclared."""
    library.cr_op_names.restype = ctypes.c_char_p
    library.cr_op_names.argtypes = [ctypes.c_char_p]
    for name, types in _ARGTYPES.items():
        fn = getattr(library, name, None)
        if fn is not None and fn.argtypes is None:
            fn.argtypes = types
    return library


def check(rc):
    """Raises the error of a nonzero status (the loader's errors: OutOfMemoryError for
    the allocator's out-of-memory, RuntimeError with cr_last_error() otherwise)."""
    if rc:
        from . import _lib
        _lib.check(rc)


# Note [cached descriptors]
#     A DeviceArray's pointer, dtype, shape and strides never change after it is made,
#     so its cr_tensor is built once, as the bytes of the C struct (ctypes passes a
#     bytes object to a ``void*`` parameter as a pointer to its buffer; the kernels
#     take their cr_tensor arguments read-only), and kept in the array's ``_desc``.
#     Everything after the data pointer is shared by the arrays of one dtype, shape and
#     strides (``_tail``): a fresh result's descriptor is its pointer's 8 bytes joined
#     to a cached tail. This is most of what a small op costs on the host side.
_TAIL = struct.Struct(f"<ii{MAX_DIMS}q{MAX_DIMS}q")
_TAILS = {}


def _tail(code, shape, est):
    key = (code, shape, est)
    tail = _TAILS.get(key)
    if tail is None:
        ndim = len(shape)
        if ndim > MAX_DIMS:
            raise RuntimeError(f"chainrule-cuda supports at most {MAX_DIMS} dimensions, "
                               f"got {ndim}")
        pad = (0,) * (MAX_DIMS - ndim)
        tail = _TAIL.pack(code, ndim, *shape, *pad, *est, *pad)
        if len(_TAILS) < 8192:
            _TAILS[key] = tail
    return tail


def describe(a):
    """A DeviceArray as a cr_tensor (Note [cached descriptors])."""
    desc = a._desc
    if desc is None:
        desc = a._desc = a._ptr.to_bytes(8, "little") + _tail(DTYPE_CODES[a.dtype], a.shape,
                                                               a._est)
    return desc


@functools.cache
def op_code(family, name):
    names = lib().cr_op_names(family.encode()).decode().split(",")
    try:
        return names.index(name)
    except ValueError:
        raise NotImplementedError(f"no '{name}' kernel in the '{family}' family of this "
                                  "chainrule-cuda build") from None


def stream():
    return _streams.current_handle()


def fill(out, value):
    value = complex(value)
    check(lib().cr_fill(describe(out), ctypes.c_double(value.real), ctypes.c_double(value.imag),
                        stream()))


def copy(out, src):
    """out[...] = src (broadcast by stride 0, converting the dtype)."""
    check(lib().cr_copy(describe(out), describe(src), stream()))


def unary(name, out, a, arg=0.0):
    check(lib().cr_unary(op_code("unary", name), describe(out), describe(a),
                         ctypes.c_double(arg), stream()))


def binary(name, out, a, b):
    check(lib().cr_binary(op_code("binary", name), describe(out), describe(a), describe(b),
                          stream()))


def ternary(name, out, a, b, c):
    check(lib().cr_ternary(op_code("ternary", name), describe(out), describe(a), describe(b),
                           describe(c), stream()))


def reduce(name, out, a, axes, arg=0.0):
    mask = 0
    for axis in axes:
        mask |= 1 << axis
    check(lib().cr_reduce(op_code("reduce", name), describe(out), describe(a),
                          ctypes.c_uint64(mask), ctypes.c_double(arg), stream()))


def arg_reduce(name, values, indices, a, axis):
    check(lib().cr_arg_reduce(op_code("arg_reduce", name), describe(values), describe(indices),
                              describe(a), axis, stream()))


def scan(name, out, a, axis):
    check(lib().cr_scan(op_code("scan", name), describe(out), describe(a), axis, stream()))


def scan_with_indices(name, values, indices, a, axis):
    check(lib().cr_scan_with_indices(op_code("scan", name), describe(values), describe(indices),
                                     describe(a), axis, stream()))


def softmax(name, out, a, axis):
    check(lib().cr_softmax(op_code("softmax", name), describe(out), describe(a), axis, stream()))


def matmul(out, a, b, alpha=1.0, beta=0.0):
    check(lib().cr_matmul(describe(out), describe(a), describe(b), ctypes.c_double(alpha),
                          ctypes.c_double(beta), stream()))


def gather(out, a, axis, index):
    check(lib().cr_gather(describe(out), describe(a), axis, describe(index), stream()))


def scatter_add(out, axis, index, src):
    check(lib().cr_scatter_add(describe(out), axis, describe(index), describe(src), stream()))


def index_select(out, a, axis, index):
    check(lib().cr_index_select(describe(out), describe(a), axis, describe(index), stream()))


def index_add(out, axis, index, src):
    check(lib().cr_index_add(describe(out), axis, describe(index), describe(src), stream()))


def masked_fill(out, mask, value):
    value = complex(value)
    check(lib().cr_masked_fill(describe(out), describe(mask), ctypes.c_double(value.real),
                               ctypes.c_double(value.imag), stream()))


def random(name, out, seed, offset, arg0, arg1):
    check(lib().cr_random(op_code("rng", name), describe(out), ctypes.c_uint64(seed),
                          ctypes.c_uint64(offset), ctypes.c_double(arg0), ctypes.c_double(arg1),
                          stream()))


# -- sort and nonzero (cuda-ops) ---------------------------------------------------------
def sort(values, indices, a, axis):
    """Stable ascending sort of ``a`` along ``axis`` into ``values`` and/or int64
    ``indices`` (either may be None); NaN last, like NumPy."""
    check(lib().cr_sort(None if values is None else describe(values),
                        None if indices is None else describe(indices), describe(a), axis, 0,
                        stream()))


def nonzero(out, a):
    """out (n, a.ndim) int64: the coordinates of ``a``'s n nonzero elements, C order."""
    check(lib().cr_nonzero(describe(out), describe(a), stream()))


from . import _streams  # noqa: E402  (it imports this module)
