"""The ``cuda`` backend core's device registry calls (Note [device backend] in
chainrule/_backends.py): device indices, host <-> device copies, pinned memory and
random numbers on the device."""
import ctypes
import weakref

import numpy as np

import chainrule as cr

from . import _kernels as K
from . import runtime
from ._array import DeviceArray


class CudaBackend:
    array_type = DeviceArray

    def is_available(self):
        return runtime.is_available()

    def unavailable_reason(self):
        return runtime.unavailable_reason()

    def device_count(self):
        return runtime.device_count()

    def current_device(self):
        return runtime.current_device()

    def synchronize(self, device=None):
        runtime.synchronize(device)

    def canonical(self, device):
        reason = self.unavailable_reason()
        if reason is not None:
            raise RuntimeError(reason)
        index = self.current_device() if device.index is None else device.index
        if not 0 <= index < self.device_count():
            raise RuntimeError("CUDA error: invalid device ordinal")
        return cr.device("cuda", index)

    def to_device_array(self, arr, device, non_blocking=False):
        if type(arr) is DeviceArray:
            out = DeviceArray.empty(arr.shape, arr.dtype, device.index)
            if arr.size:
                K.copy(out, arr)
            return out
        return DeviceArray.from_host(np.asarray(arr), device.index)

    def random(self, kind, shape, dtype, device, arg0, arg1, generator=None):
        """Random numbers made on the device by the Philox kernels (Note [random
        streams] in csrc/kernels/random.cc): ``kind`` uniform(low, high),
        normal(mean, std), bernoulli(p) or randint(low, high); the device's generator
        (seeded by ``chainrule.manual_seed``), or ``generator`` (a chainrule.Generator
        of this device), gives the seed and advances its offset per call."""
        out = DeviceArray.empty(shape, dtype, device.index)
        if generator is None:
            state = runtime.default_generator(device.index)
            seed, offset = state.seed, state.next_offset(1)
        else:
            seed, offset = generator.next_philox()
        if out.size:
            K.random(kind, out, seed, offset, arg0, arg1)
        return out

    def pin_memory(self, arr):
        """A copy of ``arr`` in page-locked host memory (freed with the array)."""
        ptr = ctypes.c_void_p()
        K.check(K.lib().cr_host_alloc_pinned(ctypes.byref(ptr), ctypes.c_size_t(max(arr.nbytes, 1))))
        buffer = (ctypes.c_char * max(arr.nbytes, 1)).from_address(ptr.value)
        out = np.frombuffer(buffer, arr.dtype, arr.size).reshape(arr.shape)
        weakref.finalize(buffer, K.lib().cr_host_free_pinned, ptr)
        np.copyto(out, arr)
        return out

    def record_stream(self, arr, stream):
        """Tensor.record_stream: ``arr``'s allocation is not reused before the work
        queued on ``stream`` when it is freed has finished (cr_record_stream)."""
        if not isinstance(stream, runtime.Stream):
            raise TypeError(f"record_stream(): argument 'stream' (position 1) must be "
                            f"Stream, not {type(stream).__name__}")
        K.check(K.lib().cr_record_stream(ctypes.c_void_p(arr._mem.ptr),
                                         ctypes.c_void_p(stream.cuda_stream or None)))

    def is_pinned(self, arr):
        base = arr
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        library = K.lib()
        if not hasattr(library, "cr_host_is_pinned") or arr.size == 0:
            return False
        pinned = ctypes.c_int()
        K.check(library.cr_host_is_pinned(ctypes.c_void_p(arr.ctypes.data), ctypes.byref(pinned)))
        return bool(pinned.value)
