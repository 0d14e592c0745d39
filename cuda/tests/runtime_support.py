"""Shared helpers of the CUDA layer's tests (a module of its own, not conftest.py: the
GPU script runs cuda/tests beside core/tests' conftest).

CI runs them on the host build (``CHAINRULE_CUDA_EMULATE=1``, set by cuda/BUILD.bazel);
``cuda/gpu/run_gpu_tests.sh`` runs them on a GPU. Tests that need a device skip with the
reason when none is usable; tests of the host build's testing hooks skip on the GPU.
"""
import ctypes

import pytest

from chainrule_cuda import _lib, runtime

MiB = 1 << 20

needs_device = pytest.mark.skipif(
    not runtime.is_available(), reason=f"no usable CUDA device: {runtime.unavailable_reason()}")


def _emulated():
    return runtime.is_available() and _lib.is_emulated()


host_build_only = pytest.mark.skipif(
    not _emulated(), reason="needs the host build's testing hooks (CHAINRULE_CUDA_EMULATE=1)")


class Allocator:
    """The caching allocator through the C ABI: pointers as ints, stats as a dict."""

    def alloc(self, nbytes, stream=None, device=0):
        ptr = ctypes.c_void_p()
        _lib.call("cr_alloc", device, nbytes, stream and stream.cuda_stream, ctypes.byref(ptr))
        return ptr.value

    def free(self, ptr):
        _lib.call("cr_free", ptr)

    def record_stream(self, ptr, stream):
        _lib.call("cr_record_stream", ptr, stream.cuda_stream or None)

    def stats(self, device=0):
        return runtime.memory_stats(device)


def hold(stream, on=True):
    """Host build: work queued on ``stream`` stays unfinished until released."""
    _lib.call("cr_testing_hold_stream", stream.cuda_stream or None, int(on))


@pytest.fixture
def fake_device():
    """The allocator of device 0 on a fake device memory: ``fake_device(capacity)``
    returns an :class:`Allocator`; the real memory comes back afterwards."""
    def make(capacity):
        runtime.empty_cache()
        _lib.call("cr_testing_set_fake_capacity", 0, capacity)
        return Allocator()
    yield make
    _lib.call("cr_testing_set_fake_capacity", 0, -1)



KERNEL, RECORD, WAIT, MEMCPY = range(4)     # kinds of the stream log (cr_cuda.h)


class StreamLog:
    """The host build's log of where device work went (Note [stream log] in
    csrc/runtime/stream_log.h): ``entries`` are (kind, stream, event) with the stream
    as a cuda_stream integer (0: the default stream) and the event a cuda_event one."""

    def __enter__(self):
        _lib.call("cr_testing_stream_log", 1)
        self.entries = []
        return self

    def __exit__(self, *exc):
        count = ctypes.c_int()
        _lib.call("cr_testing_stream_log_read", None, 0, ctypes.byref(count))
        rows = (ctypes.c_int64 * (4 * count.value))()
        _lib.call("cr_testing_stream_log_read", rows, count.value, ctypes.byref(count))
        _lib.call("cr_testing_stream_log", 0)
        self.entries = [(rows[4 * i], rows[4 * i + 2], rows[4 * i + 3])
                        for i in range(count.value)]
        return False

    def streams(self, kind):
        """The streams of the entries of one kind, in order."""
        return [s for k, s, _ in self.entries if k == kind]

    def waits(self):
        """(waiting stream, stream the event was recorded on) of every wait, in order,
        with the index of the wait in the log."""
        recorded_on, out = {}, []
        for i, (kind, stream, event) in enumerate(self.entries):
            if kind == RECORD:
                recorded_on[event] = stream
            elif kind == WAIT:
                out.append((i, stream, recorded_on.get(event)))
        return out
