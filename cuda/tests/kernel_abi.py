"""ctypes access to the kernel entry points of the host build, for the kernel tests.

Arrays are NumPy arrays standing in for device memory (in the host build device
memory is host memory), passed as `cr_tensor` views with their own strides, so a
test can hand the kernels any layout NumPy can make (transposed, negative strides,
broadcast by stride 0, size 0, 0-d).
"""
import ctypes
import os

import ml_dtypes
import numpy as np

MAX_DIMS = 16

# enum cr_dtype, in code order.
DTYPES = [np.dtype(np.bool_), np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16),
          np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float16),
          np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64),
          np.dtype(np.complex64), np.dtype(np.complex128)]
CODE = {dt: i for i, dt in enumerate(DTYPES)}


class CrTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("shape", ctypes.c_int64 * MAX_DIMS),
                ("strides", ctypes.c_int64 * MAX_DIMS)]


def view(a):
    """A cr_tensor over ndarray `a` (strides converted from bytes to elements)."""
    t = CrTensor()
    t.data = a.ctypes.data if a.size else None
    t.dtype = CODE[a.dtype]
    t.ndim = a.ndim
    for d in range(a.ndim):
        t.shape[d] = a.shape[d]
        t.strides[d] = a.strides[d] // a.itemsize
    return ctypes.byref(t)


def _load():
    try:
        from chainrule_cuda import _lib
        return _lib.load_host()
    except ImportError:
        return ctypes.CDLL(os.environ["CHAINRULE_CUDA_HOST_LIB"])


lib = _load()
lib.cr_last_error.restype = ctypes.c_char_p
lib.cr_op_names.restype = ctypes.c_char_p
lib.cr_op_names.argtypes = [ctypes.c_char_p]
_P = ctypes.c_void_p
_D = ctypes.c_double
_ARGTYPES = {  # the entry points that take doubles or 64-bit integers
    "cr_fill": [_P, _D, _D, _P],
    "cr_unary": [ctypes.c_int, _P, _P, _D, _P],
    "cr_reduce": [ctypes.c_int, _P, _P, ctypes.c_uint64, _D, _P],
    "cr_matmul": [_P, _P, _P, _D, _D, _P],
    "cr_masked_fill": [_P, _P, _D, _D, _P],
    "cr_random": [ctypes.c_int, _P, ctypes.c_uint64, ctypes.c_uint64, _D, _D, _P],
}
for _name, _types in _ARGTYPES.items():
    if hasattr(lib, _name):
        getattr(lib, _name).argtypes = _types


class KernelError(RuntimeError):
    pass


def call(name, *args):
    """Calls cr_<name>(..., stream=NULL); raises KernelError with cr_last_error()."""
    rc = getattr(lib, "cr_" + name)(*args, None)
    if rc:
        raise KernelError(lib.cr_last_error().decode())


def op_codes(family):
    return {n: i for i, n in enumerate(lib.cr_op_names(family.encode()).decode().split(","))}
