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

os.environ.setdefault("CHAINRULE_CUDA_EMULATE", "1")
from chainrule_cuda import _lib  # noqa: E402  (reads CHAINRULE_CUDA_EMULATE)

lib = _lib.library()

# enum cr_dtype, in code order.
DTYPES = [np.dtype(np.bool_), np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16),
          np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float16),
          np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64),
          np.dtype(np.complex64), np.dtype(np.complex128)]
CODE = {dt: i for i, dt in enumerate(DTYPES)}


def view(a):
    """A cr_tensor over ndarray `a` (strides converted from bytes to elements)."""
    t = _lib.CrTensor()
    t.array = a  # the memory stays alive as long as the view
    t.data = a.ctypes.data if a.size else None
    t.dtype = CODE[a.dtype]
    t.ndim = a.ndim
    for d in range(a.ndim):
        t.shape[d] = a.shape[d]
        t.strides[d] = a.strides[d] // a.itemsize
    return ctypes.byref(t)


class KernelError(RuntimeError):
    pass


def call(name, *args):
    """Calls cr_<name>(..., stream=NULL); raises KernelError with cr_last_error()."""
    rc = getattr(lib, "cr_" + name)(*args, None)
    if rc:
        raise KernelError(lib.cr_last_error().decode())


def op_codes(family):
    return {n: i for i, n in enumerate(lib.cr_op_names(family.encode()).decode().split(","))}
