"""chainrule.cuda's runtime API through chainrule_cuda.runtime: availability, devices,
streams, events, memcpy, pinned memory, seeds (torch.cuda's names and behaviour)."""
import ctypes
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import chainrule as cr
from chainrule_cuda import _lib, runtime

from runtime_support import hold, host_build_only, needs_device


def test_core_forwards_to_the_layer():
    assert cr.cuda.is_available() == runtime.is_available()
    assert cr.cuda.device_count() == runtime.device_count()
    assert cr.cuda.Stream is runtime.Stream and cr.cuda.Event is runtime.Event
    with pytest.raises(AttributeError, match="no attribute 'Streams'"):
        cr.cuda.Streams


def _python(code, **env):
    environ = {k: v for k, v in os.environ.items() if k != _lib.EMULATE_ENV}
    environ.update(env)
    out = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


@host_build_only
def test_without_a_usable_gpu_the_queries_say_why():
    # This machine has no GPU: the GPU library (when built) says "no NVIDIA driver";
    # without it, the loader says the library is missing.
    out = _python("import chainrule as cr\n"
                  "print(cr.cuda.is_available(), cr.cuda.device_count(), "
                  "cr.cuda.memory_allocated())\n"
                  "print(cr.cuda.unavailable_reason())\n"
                  "try:\n    cr.cuda.current_device()\n"
                  "except RuntimeError as e:\n    print(e)\n")
    first, reason, error = out.splitlines()
    assert first == "False 0 0"
    gpu_library = os.path.join(os.path.dirname(_lib.__file__), _lib.GPU_LIBRARY)
    expected = "no NVIDIA driver" if os.path.exists(gpu_library) else "no GPU library"
    assert reason.startswith(expected) or expected in reason, reason
    assert error == "CUDA is not available: " + reason


def test_core_alone_says_install_chainrule_cuda():
    code = ("import sys; sys.modules['chainrule_cuda'] = None\n"
            "import chainrule as cr\n"
            "print(cr.cuda.is_available(), cr.cuda.device_count(), cr.cuda.memory_stats())\n"
            "print(cr.cuda.unavailable_reason())\n"
            "try:\n    cr.cuda.Stream()\n"
            "except RuntimeError as e:\n    print(e)\n")
    first, reason, error = _python(code).splitlines()
    assert first == "False 0 {}"
    assert "install the chainrule-cuda wheel" in reason and error == reason


@needs_device
class TestDevices:
    def test_count_name_capability(self):
        assert runtime.device_count() >= 1
        assert cr.cuda.get_device_name(0)
        assert cr.cuda.get_device_capability() >= (7, 0)
        free, total = cr.cuda.mem_get_info()
        assert 0 < free <= total == cr.cuda.get_device_properties(0).total_memory

    def test_set_device_and_the_device_context(self):
        assert cr.cuda.current_device() == 0
        with cr.cuda.device("cuda:0") as d:
            assert d.idx == 0 and cr.cuda.current_device() == 0
        with cr.cuda.device(cr.device("cuda")):
            assert cr.cuda.current_device() == 0
        cr.cuda.set_device(-1)  # the reference's no-op
        assert cr.cuda.current_device() == 0

    def test_an_invalid_device_is_an_error(self):
        with pytest.raises(RuntimeError, match="invalid device ordinal"):
            cr.cuda.set_device(runtime.device_count())
        with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
            cr.cuda.set_device("cpu")

    def test_synchronize(self):
        cr.cuda.synchronize()
        cr.cuda.synchronize(0)


@needs_device
class TestStreams:
    def test_default_and_current_stream(self):
        s = cr.cuda.default_stream()
        assert s.cuda_stream == 0 and cr.cuda.current_stream() == s
        assert s.device == cr.device("cuda:0")

    def test_stream_context_sets_and_restores_the_current_stream(self):
        s = cr.cuda.Stream()
        assert s != cr.cuda.default_stream() and s.cuda_stream != 0
        with cr.cuda.stream(s) as entered:
            assert entered is s and cr.cuda.current_stream() == s
        assert cr.cuda.current_stream() == cr.cuda.default_stream()
        assert "cuda_stream=0x" in repr(s)

    def test_current_stream_is_per_thread(self):
        s, seen = cr.cuda.Stream(), []
        with cr.cuda.stream(s):
            t = threading.Thread(target=lambda: seen.append(cr.cuda.current_stream()))
            t.start(), t.join()
        assert seen == [cr.cuda.default_stream()]

    def test_an_external_stream_is_used_not_owned(self):
        s = cr.cuda.Stream()
        external = cr.cuda.ExternalStream(s.cuda_stream)
        assert external == s and isinstance(external, cr.cuda.Stream)
        with cr.cuda.stream(external):
            cr.cuda.Event().record()
        del external
        assert s.query()  # still valid: the wrapper did not destroy it

    def test_query_and_synchronize(self):
        s = cr.cuda.Stream(priority=-1)
        assert s.query()
        s.synchronize()

    @host_build_only
    def test_work_on_a_held_stream_is_not_done_until_synchronized(self):
        s = cr.cuda.Stream()
        hold(s)
        event = s.record_event()
        assert not s.query() and not event.query()
        s.synchronize()
        assert s.query() and event.query()

    @host_build_only
    def test_wait_stream_and_device_synchronize(self):
        a, b = cr.cuda.Stream(), cr.cuda.Stream()
        hold(a)
        b.wait_stream(a)
        event = a.record_event()
        cr.cuda.synchronize()
        assert event.query()


@needs_device
class TestEvents:
    def test_elapsed_time(self):
        start, end = cr.cuda.Event(enable_timing=True), cr.cuda.Event(enable_timing=True)
        start.record()
        end.record()
        end.synchronize()
        assert start.query() and end.query()
        assert start.elapsed_time(end) >= 0.0

    def test_elapsed_time_needs_timing_events(self):
        start, end = cr.cuda.Event(), cr.cuda.Event()
        start.record(), end.record()
        end.synchronize()
        with pytest.raises(RuntimeError, match="invalid resource handle"):
            start.elapsed_time(end)

    def test_an_unrecorded_event_is_done_and_has_no_handle_yet(self):
        e = cr.cuda.Event()
        assert e.query() and e.cuda_event == 0 and e.device is None
        e.wait(), e.synchronize(), cr.cuda.Stream().wait_event(e)
        with pytest.raises(ValueError, match="Both events must be recorded"):
            e.elapsed_time(cr.cuda.Event())
        e.record()
        assert e.cuda_event != 0 and e.device == cr.device("cuda:0")

    def test_event_wait_and_record_on_a_stream(self):
        s = cr.cuda.Stream()
        e = cr.cuda.Event()
        e.record(s)
        e.wait()
        e.synchronize()
        assert e.cuda_event != 0


@needs_device
class TestMemory:
    def test_memcpy_host_to_device_and_back(self):
        src = np.arange(1000, dtype=np.float32)
        dst = np.zeros_like(src)
        ptr = ctypes.c_void_p()
        _lib.call("cr_alloc", 0, src.nbytes, None, ctypes.byref(ptr))
        _lib.call("cr_memcpy", ptr, src.ctypes.data, src.nbytes, 0, None)
        _lib.call("cr_memcpy", dst.ctypes.data, ptr, src.nbytes, 1, None)
        _lib.call("cr_free", ptr)
        np.testing.assert_array_equal(dst, src)

    def test_memcpy_kind_is_checked(self):
        with pytest.raises(RuntimeError, match="kind must be 0..3, got 7"):
            _lib.call("cr_memcpy", None, None, 0, 7, None)

    def test_pinned_host_memory(self):
        ptr = ctypes.c_void_p()
        _lib.call("cr_host_alloc_pinned", ctypes.byref(ptr), 4096)
        pinned = ctypes.c_int()
        _lib.call("cr_host_is_pinned", ctypes.c_void_p(ptr.value + 100), ctypes.byref(pinned))
        assert pinned.value == 1
        buf = np.zeros(4)
        _lib.call("cr_host_is_pinned", buf.ctypes.data, ctypes.byref(pinned))
        assert pinned.value == 0
        _lib.call("cr_host_free_pinned", ptr)

    def _pinned(self, nbytes):
        ptr = ctypes.c_void_p()
        _lib.call("cr_host_alloc_pinned", ctypes.byref(ptr), nbytes)
        return ptr.value

    def _is_pinned(self, ptr):
        pinned = ctypes.c_int()
        _lib.call("cr_host_is_pinned", ptr, ctypes.byref(pinned))
        return bool(pinned.value)

    def test_freed_pinned_blocks_are_cached_and_reused(self):
        p = self._pinned(4096)
        _lib.call("cr_host_free_pinned", p)
        assert self._is_pinned(p)  # cached, still page-locked
        assert self._pinned(3000) == p  # the same power-of-two class
        _lib.call("cr_host_free_pinned", p)
        _lib.call("cr_host_empty_cache")
        assert not self._is_pinned(p)
        with pytest.raises(RuntimeError, match="not a live block of pinned memory"):
            _lib.call("cr_host_free_pinned", p)

    @host_build_only
    def test_a_pinned_block_is_not_reused_while_a_copy_may_read_it(self):
        s = cr.cuda.Stream()
        device = ctypes.c_void_p()
        _lib.call("cr_alloc", 0, 4096, s.cuda_stream, ctypes.byref(device))
        p = self._pinned(4096)
        hold(s)
        _lib.call("cr_memcpy", device, p, 4096, 0, s.cuda_stream)  # queued, not done
        _lib.call("cr_host_free_pinned", p)
        q = self._pinned(4096)
        assert q != p
        hold(s, False)
        assert self._pinned(4096) == p
        for block in (p, q):
            _lib.call("cr_host_free_pinned", block)
        _lib.call("cr_free", device)

    def test_python_statistics_agree_with_memory_stats(self):
        ptr = ctypes.c_void_p()
        before = cr.cuda.memory_allocated()
        _lib.call("cr_alloc", 0, 100, None, ctypes.byref(ptr))
        assert cr.cuda.memory_allocated() == before + 512
        stats = cr.cuda.memory_stats()
        assert stats["allocated_bytes.all.current"] == cr.cuda.memory_allocated()
        assert stats["reserved_bytes.all.current"] == cr.cuda.memory_reserved()
        assert list(stats) == sorted(stats)
        _lib.call("cr_free", ptr)
        cr.cuda.empty_cache()


@needs_device
def test_seeds():
    cr.cuda.manual_seed(5)
    assert cr.cuda.initial_seed() == 5
    gen = runtime.default_generator()
    assert (gen.next_offset(10), gen.next_offset(4), gen.offset) == (0, 10, 14)
    cr.cuda.manual_seed_all(6)
    assert (cr.cuda.initial_seed(), gen.offset) == (6, 0)


@needs_device
def test_chainrule_manual_seed_seeds_every_device():
    cr.manual_seed(11)
    assert cr.cuda.initial_seed() == 11 and runtime.default_generator().offset == 0
    s = cr.seed()
    assert cr.cuda.initial_seed() == s



@host_build_only
def test_two_emulated_devices_keep_their_own_current_stream_and_memory():
    out = _python(
        "import ctypes, chainrule as cr\n"
        "from chainrule_cuda import _lib\n"
        "print(cr.cuda.device_count())\n"
        "with cr.cuda.device(1):\n"
        "    s = cr.cuda.Stream()\n"
        "    p = ctypes.c_void_p()\n"
        "    _lib.call('cr_alloc', 1, 4096, s.cuda_stream, ctypes.byref(p))\n"
        "    print(cr.cuda.current_device(), s.device)\n"
        "with cr.cuda.stream(s):\n"
        "    print(cr.cuda.current_device(), cr.cuda.current_stream(1) == s,\n"
        "          cr.cuda.current_stream(0) == cr.cuda.default_stream(0))\n"
        "print(cr.cuda.current_device(), cr.cuda.memory_allocated(0), cr.cuda.memory_allocated('cuda:1'))\n"
        "_lib.call('cr_free', p)\n",
        CHAINRULE_CUDA_EMULATE="1", CHAINRULE_CUDA_EMULATE_DEVICES="2")
    assert out.splitlines() == ["2", "1 cuda:1", "1 True True", "0 0 4096"]


@needs_device
def test_the_allocator_is_thread_safe():
    def churn(errors):
        try:
            for n in range(200):
                ptr = ctypes.c_void_p()
                _lib.call("cr_alloc", 0, 512 * (1 + n % 7), None, ctypes.byref(ptr))
                _lib.call("cr_free", ptr)
        except Exception as e:  # reported below
            errors.append(e)
    before, errors = cr.cuda.memory_allocated(), []
    threads = [threading.Thread(target=churn, args=(errors,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and cr.cuda.memory_allocated() == before


@needs_device
def test_bf16_support_follows_the_capability():
    assert cr.cuda.is_bf16_supported() == (cr.cuda.get_device_capability() >= (8, 0))


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


gpu_only = pytest.mark.skipif(
    not runtime.is_available() or _lib.is_emulated(),
    reason="needs a GPU (cuda/gpu/run_gpu_tests.sh)" if runtime.is_available()
    else f"no usable CUDA device: {runtime.unavailable_reason()}")


@gpu_only
def test_the_device_as_pytorch_sees_it():
    torch = _torch_cuda()
    if torch is None:
        pytest.skip("PyTorch with CUDA is not installed")
    assert cr.cuda.device_count() == torch.cuda.device_count()
    assert cr.cuda.get_device_name(0) == torch.cuda.get_device_name(0)
    assert cr.cuda.get_device_capability(0) == torch.cuda.get_device_capability(0)
    assert cr.cuda.mem_get_info(0)[1] == torch.cuda.mem_get_info(0)[1]


@gpu_only
def test_real_out_of_memory_names_the_device_figures():
    free, total = cr.cuda.mem_get_info()
    ptr = ctypes.c_void_p()
    with pytest.raises(cr.cuda.OutOfMemoryError,
                       match=r"^CUDA out of memory\. Tried to allocate [\d.]+ GiB \(GPU 0; "
                             r"[\d.]+ GiB total capacity; .* reserved in total by chainrule\)$"):
        _lib.call("cr_alloc", 0, total + (1 << 30), None, ctypes.byref(ptr))
    assert cr.cuda.memory_stats()["num_ooms"] >= 1


@gpu_only
def test_a_timed_copy_on_a_side_stream():
    n = 64 << 20
    src, dst = ctypes.c_void_p(), ctypes.c_void_p()
    s = cr.cuda.Stream()
    _lib.call("cr_alloc", 0, n, s.cuda_stream, ctypes.byref(src))
    _lib.call("cr_alloc", 0, n, s.cuda_stream, ctypes.byref(dst))
    start, end = cr.cuda.Event(enable_timing=True), cr.cuda.Event(enable_timing=True)
    start.record(s)
    _lib.call("cr_memcpy", dst, src, n, 2, s.cuda_stream)
    end.record(s)
    end.synchronize()
    assert s.query() and 0.0 < start.elapsed_time(end) < 1000.0
    _lib.call("cr_free", src), _lib.call("cr_free", dst)


@needs_device
def test_the_real_device_reuses_a_freed_block():
    cr.cuda.empty_cache()
    ptr = ctypes.c_void_p()
    _lib.call("cr_alloc", 0, 3 << 20, None, ctypes.byref(ptr))
    first, reserved = ptr.value, cr.cuda.memory_reserved()
    _lib.call("cr_free", ptr)
    _lib.call("cr_alloc", 0, 3 << 20, None, ctypes.byref(ptr))
    assert (ptr.value, cr.cuda.memory_reserved()) == (first, reserved)
    _lib.call("cr_free", ptr)
    cr.cuda.empty_cache()


@needs_device
def test_the_last_error_is_per_thread():
    with pytest.raises(RuntimeError, match="got 7"):
        _lib.call("cr_memcpy", None, None, 0, 7, None)
    seen = []

    def other():
        with pytest.raises(RuntimeError, match="got 9"):
            _lib.call("cr_memcpy", None, None, 0, 9, None)
        seen.append(_lib.last_error())
    t = threading.Thread(target=other)
    t.start(), t.join()
    assert seen == ["cr_memcpy: kind must be 0..3, got 9"]
    assert _lib.last_error() == "cr_memcpy: kind must be 0..3, got 7"
