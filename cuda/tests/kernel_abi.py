"""ctypes access to the kernel entry points, for the kernel tests.

Arrays are NumPy arrays passed as `cr_tensor` views with their own strides, so a test
can hand the kernels any layout NumPy can make (transposed, negative strides, broadcast
by stride 0, size 0, 0-d). In the host build device memory is host memory and the
views point at the arrays; with the GPU library (cuda/gpu/run_gpu_tests.sh,
CHAINRULE_CUDA_EMULATE=0) each view gets a device copy of the bytes its array spans,
and `call` copies them back after the kernel, so the same tests check the GPU's kernels.
"""
import ctypes
import os

import ml_dtypes
import numpy as np

os.environ.setdefault("CHAINRULE_CUDA_EMULATE", "1")
from chainrule_cuda import _lib  # noqa: E402  (reads CHAINRULE_CUDA_EMULATE)

lib = _lib.library()
EMULATED = bool(lib.cr_is_emulated())
_on_device = []  # (host address, device address, nbytes) of the views of this call

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
    if a.size and not EMULATED:
        t.data = _device_copy(a)
    t.dtype = CODE[a.dtype]
    t.ndim = a.ndim
    for d in range(a.ndim):
        t.shape[d] = a.shape[d]
        t.strides[d] = a.strides[d] // a.itemsize
    return ctypes.byref(t)


def _device_copy(a):
    """Device memory holding the bytes `a` spans; the address of a's element 0 there."""
    low, high = np.lib.array_utils.byte_bounds(a)
    ptr = ctypes.c_void_p()
    _lib.call("cr_alloc", 0, high - low, None, ctypes.byref(ptr))
    _lib.call("cr_memcpy", ptr, low, high - low, 0, None)
    _on_device.append((low, ptr.value, high - low))
    return ptr.value + (a.ctypes.data - low)


def _copy_back():
    _lib.call("cr_device_synchronize")
    for host, device, nbytes in _on_device:
        _lib.call("cr_memcpy", host, device, nbytes, 1, None)
        _lib.call("cr_free", device)
    _on_device.clear()


class KernelError(RuntimeError):
    pass


def call(name, *args):
    """Calls cr_<name>(..., stream=NULL); raises KernelError with cr_last_error()."""
    rc = getattr(lib, "cr_" + name)(*args, None)
    message = lib.cr_last_error().decode() if rc else ""
    if _on_device:
        _copy_back()
    if rc:
        raise KernelError(message)


def op_codes(family):
    return {n: i for i, n in enumerate(lib.cr_op_names(family.encode()).decode().split(","))}
