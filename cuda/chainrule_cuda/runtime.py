"""``chainrule.cuda``'s runtime API: devices, streams, events, memory statistics,
seeds — torch.cuda's names and signatures, over the C library (``_lib``).

Everything here works with the GPU library and with the host build
(``CHAINRULE_CUDA_EMULATE=1``); without either, the queries answer "no GPU"
(``is_available()`` False, ``device_count()`` 0, memory figures 0) and everything that
needs a device raises a RuntimeError naming why (:func:`unavailable_reason`).

>>> from chainrule_cuda import runtime
>>> runtime.device_count() >= 0
True
"""
import collections
import ctypes
import threading

from chainrule.cuda import OutOfMemoryError  # noqa: F401  (re-exported)

from . import _lib

__all__ = [
    "is_available", "unavailable_reason", "is_initialized", "init", "device_count",
    "current_device", "set_device", "device", "device_of", "synchronize",
    "get_device_name", "get_device_capability", "get_device_properties", "is_bf16_supported",
    "Stream", "ExternalStream", "Event",
    "current_stream", "default_stream", "set_stream", "stream", "StreamContext",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "reset_peak_memory_stats", "reset_max_memory_allocated", "empty_cache", "memory_stats",
    "mem_get_info", "reset_accumulated_memory_stats", "set_per_process_memory_fraction",
    "get_per_process_memory_fraction", "memory_summary", "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
    "OutOfMemoryError",
]


def _c(name, *args):
    _lib.call(name, *args)


def _get_int(name, *args):
    out = ctypes.c_int()
    _c(name, *args, ctypes.byref(out))
    return out.value


# ---- availability and devices -------------------------------------------------------

def is_available():
    """True when a GPU (or the host build, ``CHAINRULE_CUDA_EMULATE=1``) can be used.

    >>> import chainrule as cr
    >>> cr.cuda.is_available() == (cr.cuda.unavailable_reason() is None)
    True
    """
    return _lib.unavailable_reason() is None and device_count() > 0


def unavailable_reason():
    """Why CUDA cannot be used ("no NVIDIA driver ...", "no CUDA device ..."), or None.

    >>> from chainrule_cuda import runtime
    >>> r = runtime.unavailable_reason()
    >>> r is None or isinstance(r, str)
    True
    """
    return _lib.unavailable_reason()


def is_initialized():
    """True once the library is loaded and usable.

    >>> from chainrule_cuda import runtime
    >>> runtime.is_initialized() == runtime.is_available()
    True
    """
    return is_available()


def init():
    """Loads the library; RuntimeError naming why when no GPU can be used.

    >>> from chainrule_cuda import runtime
    >>> runtime.init() if runtime.is_available() else None
    """
    _lib.library()


def device_count():
    """The number of usable GPUs (0 without one).

    >>> from chainrule_cuda import runtime
    >>> runtime.device_count() >= (1 if runtime.is_available() else 0)
    True
    """
    if _lib.unavailable_reason() is not None:
        return 0
    return _get_int("cr_device_count")


def _device_index(device, optional=True):
    """The index of ``device`` (int, "cuda", "cuda:N", chainrule.device, None -> current)."""
    if device is None:
        if not optional:
            raise ValueError("Expected a cuda device, but got: None")
        return current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    import chainrule
    d = chainrule.device(device) if isinstance(device, str) else device
    if getattr(d, "type", None) != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current_device() if d.index is None else d.index


def current_device():
    """The index of the current device of this thread.

    >>> import chainrule as cr
    >>> cr.cuda.current_device() if cr.cuda.is_available() else 0
    0
    """
    return _get_int("cr_get_device")


def set_device(device):
    """Makes ``device`` the current device of this thread (a negative index: no-op).

    >>> import chainrule as cr
    >>> cr.cuda.set_device(0) if cr.cuda.is_available() else None
    """
    index = _device_index(device)
    if index >= 0:
        _c("cr_set_device", index)


class device:
    """Context manager that changes the current device (None or -1: no change).

    >>> import chainrule as cr
    >>> if cr.cuda.is_available():
    ...     with cr.cuda.device(0):
    ...         assert cr.cuda.current_device() == 0
    """

    def __init__(self, device):
        self.idx = _device_index(device, optional=True) if device is not None else -1
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager: the device of a CUDA tensor is current inside it (a CPU tensor:
    no change).

    >>> import chainrule as cr
    >>> with cr.cuda.device_of(cr.zeros(2)) as d:
    ...     d.idx
    -1
    """

    def __init__(self, obj):
        dev = getattr(obj, "device", None)
        super().__init__(dev.index if getattr(dev, "type", None) == "cuda" else None)


def synchronize(device=None):
    """Waits for all work queued on ``device`` (default: the current device).

    >>> import chainrule as cr
    >>> cr.cuda.synchronize() if cr.cuda.is_available() else None
    """
    with globals()["device"](_device_index(device)):
        _c("cr_device_synchronize")


def get_device_name(device=None):
    """The name of a device.

    >>> import chainrule as cr
    >>> isinstance(cr.cuda.get_device_name(), str) if cr.cuda.is_available() else True
    True
    """
    buf = ctypes.create_string_buffer(256)
    _c("cr_device_name", _device_index(device), buf, len(buf))
    return buf.value.decode()


def get_device_capability(device=None):
    """(major, minor) compute capability of a device.

    >>> import chainrule as cr
    >>> len(cr.cuda.get_device_capability()) if cr.cuda.is_available() else 2
    2
    """
    major, minor = ctypes.c_int(), ctypes.c_int()
    _c("cr_device_capability", _device_index(device), ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def is_bf16_supported(including_emulation=True):
    """True when the current device computes in bfloat16 natively (compute capability
    8.0 or later; the host build emulates sm_90).

    >>> import chainrule as cr
    >>> isinstance(cr.cuda.is_bf16_supported(), bool)
    True
    """
    return is_available() and get_device_capability() >= (8, 0)


_DeviceProperties = collections.namedtuple(
    "_CudaDeviceProperties", ["name", "major", "minor", "total_memory"])


def get_device_properties(device=None):
    """Name, compute capability and total memory of a device.

    >>> import chainrule as cr
    >>> cr.cuda.get_device_properties().total_memory > 0 if cr.cuda.is_available() else True
    True
    """
    index = _device_index(device)
    major, minor = get_device_capability(index)
    return _DeviceProperties(get_device_name(index), major, minor, mem_get_info(index)[1])


# ---- streams and events --------------------------------------------------------------

class Stream:
    """A queue of device work (``cudaStream_t``); work on one stream runs in order.

    ``Stream(device=None, priority=0)``; the default stream is :func:`default_stream`.

    >>> import chainrule as cr
    >>> if cr.cuda.is_available():
    ...     s = cr.cuda.Stream()
    ...     with cr.cuda.stream(s):
    ...         assert cr.cuda.current_stream() == s
    ...     assert s.query()
    """

    def __init__(self, device=None, priority=0, **kwargs):
        self._owned = False
        self.device_index = _device_index(device)
        self.priority = priority
        handle = ctypes.c_void_p()
        with globals()["device"](self.device_index):
            _c("cr_stream_create", ctypes.byref(handle), int(priority))
        self._handle, self._owned = handle.value or 0, True

    @classmethod
    def _wrap(cls, handle, device_index):
        self = cls.__new__(cls)
        self._handle, self._owned = handle, False
        self.device_index, self.priority = device_index, 0
        return self

    @property
    def device(self):
        import chainrule
        return chainrule.device("cuda", self.device_index)

    @property
    def cuda_stream(self):
        """The ``cudaStream_t`` as an integer (0: the default stream)."""
        return self._handle

    def wait_event(self, event):
        """Makes later work on this stream wait for ``event`` (unrecorded: no wait)."""
        if event._handle is not None:
            _c("cr_stream_wait_event", self._handle or None, event._handle)

    def wait_stream(self, stream):
        """Makes later work on this stream wait for the work queued on ``stream``."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Records ``event`` (a new one when None) on this stream and returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self):
        """True when all work queued on this stream has finished."""
        return bool(_get_int("cr_stream_query", self._handle or None))

    def synchronize(self):
        """Waits for the work queued on this stream."""
        _c("cr_stream_synchronize", self._handle or None)

    def __eq__(self, other):
        return (isinstance(other, Stream) and self._handle == other._handle
                and self.device_index == other.device_index)

    def __hash__(self):
        return hash((self._handle, self.device_index))

    def __repr__(self):
        return (f"<chainrule.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={self._handle:#x}>")

    def __del__(self):
        if getattr(self, "_owned", False) and _lib is not None:
            try:
                _lib.library().cr_stream_destroy(self._handle)
            except Exception:  # interpreter shutdown: nothing left to free into
                pass


class ExternalStream(Stream):
    """A stream made elsewhere (e.g. ``torch.cuda.current_stream().cuda_stream``),
    wrapped by its ``cudaStream_t`` address; chainrule never destroys it.

    >>> import chainrule as cr
    >>> if cr.cuda.is_available():
    ...     s = cr.cuda.Stream()
    ...     assert cr.cuda.ExternalStream(s.cuda_stream) == s
    """

    def __init__(self, stream_ptr, device=None, **kwargs):
        self._owned = False
        self._handle, self.device_index, self.priority = int(stream_ptr), _device_index(device), 0


class Event:
    """A marker in a stream's work: record it, wait for it, time between two.

    Like the reference's, the CUDA event is made at the first ``record``, on the
    recording stream's device; before that, ``query`` is True and ``wait`` and
    ``synchronize`` do nothing.

    >>> import chainrule as cr
    >>> if cr.cuda.is_available():
    ...     start, end = cr.cuda.Event(enable_timing=True), cr.cuda.Event(enable_timing=True)
    ...     start.record(); end.record(); end.synchronize()
    ...     assert start.elapsed_time(end) >= 0.0
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        if interprocess:
            raise NotImplementedError("interprocess events are not supported")
        self.enable_timing, self.blocking = enable_timing, blocking
        self._handle, self.device_index = None, None

    @property
    def cuda_event(self):
        """The ``cudaEvent_t`` as an integer (0 before the first record)."""
        return self._handle or 0

    @property
    def device(self):
        """The device of the stream it was first recorded on (None before)."""
        import chainrule
        return None if self.device_index is None else chainrule.device("cuda", self.device_index)

    def record(self, stream=None):
        """Records the event on ``stream`` (default: the current stream)."""
        stream = current_stream() if stream is None else stream
        if self._handle is None:
            handle = ctypes.c_void_p()
            with globals()["device"](stream.device_index):
                _c("cr_event_create", ctypes.byref(handle), int(bool(self.enable_timing)))
            self._handle, self.device_index = handle.value, stream.device_index
        elif stream.device_index != self.device_index:
            raise ValueError(f"Event device {self.device_index} does not match recording "
                             f"stream's device {stream.device_index}.")
        _c("cr_event_record", self._handle, stream._handle or None)

    def wait(self, stream=None):
        """Makes later work on ``stream`` (default: the current stream) wait for it."""
        if self._handle is not None:
            (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        """True when the work before the event has finished."""
        return self._handle is None or bool(_get_int("cr_event_query", self._handle))

    def synchronize(self):
        """Waits for the work before the event."""
        if self._handle is not None:
            _c("cr_event_synchronize", self._handle)

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, with
        ``enable_timing=True``)."""
        if self._handle is None or end_event._handle is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        ms = ctypes.c_float()
        _c("cr_event_elapsed_ms", self._handle, end_event._handle, ctypes.byref(ms))
        return ms.value

    def __repr__(self):
        return f"<chainrule.cuda.Event {self.cuda_event:#x}>"

    def __del__(self):
        if getattr(self, "_handle", None) and _lib is not None:
            try:
                _lib.library().cr_event_destroy(self._handle)
            except Exception:  # interpreter shutdown
                pass


# Note [current stream]: per thread and per device, like the reference's; the stream
# objects live on the Python side (the C library takes the stream with each call).
_TLS = threading.local()
_DEFAULT_STREAMS = {}


def default_stream(device=None):
    """The default (NULL) stream of a device.

    >>> import chainrule as cr
    >>> cr.cuda.default_stream().cuda_stream if cr.cuda.is_available() else 0
    0
    """
    index = _device_index(device)
    if index not in _DEFAULT_STREAMS:
        _DEFAULT_STREAMS[index] = Stream._wrap(0, index)
    return _DEFAULT_STREAMS[index]


def _current_streams():
    if not hasattr(_TLS, "streams"):
        _TLS.streams = {}
    return _TLS.streams


def current_stream(device=None):
    """The current stream of a device in this thread (the default stream at first).

    >>> import chainrule as cr
    >>> cr.cuda.current_stream() == cr.cuda.default_stream() if cr.cuda.is_available() else True
    True
    """
    index = _device_index(device)
    return _current_streams().get(index) or default_stream(index)


def set_stream(stream):
    """Makes ``stream`` the current stream of its device in this thread.

    >>> import chainrule as cr
    >>> cr.cuda.set_stream(cr.cuda.default_stream()) if cr.cuda.is_available() else None
    """
    if stream is not None:
        streams = _current_streams()
        previous = streams.get(stream.device_index)
        streams[stream.device_index] = stream
        if (previous is not None and previous._handle) or stream._handle:
            from ._autograd import stream_changed    # Note [backward streams]
            stream_changed(previous, stream)


def _exchange_streams(streams):
    """Makes ``streams`` ({device index: Stream}) this thread's current streams and
    returns the previous ones: a backward node runs on its forward's stream (Note
    [backward streams] in _autograd.py). Not counted by the backward-streams
    bookkeeping: the pass restores what it changed."""
    previous = _current_streams()
    _TLS.streams = streams
    return previous


class StreamContext:
    """Context manager: ``stream`` is the current stream (and its device the current
    device) inside it; None: no change.

    >>> import chainrule as cr
    >>> with cr.cuda.StreamContext(None):
    ...     pass
    """

    def __init__(self, stream):
        self.stream = stream
        self._prev_stream = None
        self._device = None

    def __enter__(self):
        if self.stream is None:
            return self.stream
        self._device = device(self.stream.device_index)
        self._device.__enter__()
        self._prev_stream = current_stream(self.stream.device_index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self._prev_stream)
            self._device.__exit__(*exc)
        return False


def stream(stream):
    """``with chainrule.cuda.stream(s):`` work inside runs on ``s`` (None: no change).

    >>> import chainrule as cr
    >>> with cr.cuda.stream(None):
    ...     pass
    """
    return StreamContext(stream)


# ---- memory ----------------------------------------------------------------------------

def _stats6(device):
    if _lib.unavailable_reason() is not None:
        return [0] * 6
    out = (ctypes.c_int64 * 6)()
    _c("cr_memory_stats", _device_index(device), out)
    return list(out)


def memory_allocated(device=None):
    """Bytes of device memory held by tensors (the caching allocator's live blocks).

    >>> import chainrule as cr
    >>> cr.cuda.memory_allocated() >= 0
    True
    """
    return _stats6(device)[0]


def max_memory_allocated(device=None):
    """The peak of :func:`memory_allocated` since the start or the last reset.

    >>> import chainrule as cr
    >>> cr.cuda.max_memory_allocated() >= cr.cuda.memory_allocated()
    True
    """
    return _stats6(device)[1]


def memory_reserved(device=None):
    """Bytes of device memory the caching allocator holds (live and cached).

    >>> import chainrule as cr
    >>> cr.cuda.memory_reserved() >= cr.cuda.memory_allocated()
    True
    """
    return _stats6(device)[2]


def max_memory_reserved(device=None):
    """The peak of :func:`memory_reserved` since the start or the last reset.

    >>> import chainrule as cr
    >>> cr.cuda.max_memory_reserved() >= cr.cuda.memory_reserved()
    True
    """
    return _stats6(device)[3]


def reset_peak_memory_stats(device=None):
    """Sets every peak statistic to its current value.

    >>> import chainrule as cr
    >>> cr.cuda.reset_peak_memory_stats()
    """
    if _lib.unavailable_reason() is None:
        _c("cr_reset_peak_memory_stats", _device_index(device))


def reset_max_memory_allocated(device=None):
    """Resets the peak of :func:`memory_allocated` (all peaks, like the reference).

    >>> import chainrule as cr
    >>> cr.cuda.reset_max_memory_allocated()
    """
    reset_peak_memory_stats(device)


def empty_cache():
    """Gives the cached, unused device memory back to the device.

    >>> import chainrule as cr
    >>> cr.cuda.empty_cache()
    """
    if _lib.unavailable_reason() is None:
        _c("cr_empty_cache")


def memory_stats(device=None):
    """The caching allocator's statistics, named as the reference names them
    ("allocated_bytes.all.current", "reserved_bytes.large_pool.peak", "num_ooms", ...).

    >>> import chainrule as cr
    >>> stats = cr.cuda.memory_stats()
    >>> stats.get("allocated_bytes.all.current", 0) == cr.cuda.memory_allocated()
    True
    """
    if _lib.unavailable_reason() is not None:
        return collections.OrderedDict()
    names = _lib.library().cr_memory_stat_names().decode().split(",")
    out = (ctypes.c_int64 * len(names))()
    _c("cr_memory_stats_all", _device_index(device), out, len(names))
    return collections.OrderedDict(sorted(zip(names, out)))


def reset_accumulated_memory_stats(device=None):
    """Zeroes the cumulative counters (".allocated", ".freed", retries, OOMs).

    >>> import chainrule as cr
    >>> cr.cuda.reset_accumulated_memory_stats()
    """
    if _lib.unavailable_reason() is None:
        _c("cr_reset_accumulated_memory_stats", _device_index(device))


def set_per_process_memory_fraction(fraction, device=None):
    """Caps what the caching allocator may reserve on a device at ``fraction`` of its
    total memory; beyond it an allocation is "CUDA out of memory".

    >>> import chainrule as cr
    >>> if cr.cuda.is_available():
    ...     cr.cuda.set_per_process_memory_fraction(1.0)
    """
    index = _device_index(device)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _c("cr_set_memory_fraction", index, fraction)


def get_per_process_memory_fraction(device=None):
    """The cap :func:`set_per_process_memory_fraction` set (1.0 by default).

    >>> import chainrule as cr
    >>> cr.cuda.get_per_process_memory_fraction() if cr.cuda.is_available() else 1.0
    1.0
    """
    out = ctypes.c_double()
    _c("cr_get_memory_fraction", _device_index(device), ctypes.byref(out))
    return out.value


_SUMMARY_ROWS = [
    ("Allocated memory", "allocated_bytes", True), ("Active memory", "active_bytes", True),
    ("GPU reserved memory", "reserved_bytes", True), ("Allocations", "allocation", False),
    ("GPU reserved segments", "segment", False),
]


def memory_summary(device=None, abbreviated=False):
    """The caching allocator's statistics as a table (current, peak, total allocated and
    freed; per pool unless ``abbreviated``).

    >>> import chainrule as cr
    >>> "Allocated memory" in cr.cuda.memory_summary() if cr.cuda.is_available() else True
    True
    """
    stats = memory_stats(device)
    width = 22
    lines = [f"chainrule CUDA memory summary, device {_device_index(device)}",
             f"CUDA OOMs: {stats.get('num_ooms', 0)}    "
             f"cudaMalloc retries: {stats.get('num_alloc_retries', 0)}",
             f"{'Metric':<{width}} {'Cur Usage':>12} {'Peak Usage':>12} {'Tot Alloc':>12} "
             f"{'Tot Freed':>12}"]
    for title, key, in_bytes in _SUMMARY_ROWS:
        for pool in ("all",) if abbreviated else ("all", "large_pool", "small_pool"):
            label = title if pool == "all" else f"  from {pool.replace('_', ' ')}"
            values = [stats.get(f"{key}.{pool}.{field}", 0)
                      for field in ("current", "peak", "allocated", "freed")]
            cells = [_format_size(v) if in_bytes else str(v) for v in values]
            lines.append(f"{label:<{width}} " + " ".join(f"{c:>12}" for c in cells))
    rule = "=" * len(lines[2])
    return "\n".join([rule, *lines[:2], rule, lines[2], "-" * len(rule), *lines[3:], rule])


def _format_size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024


def mem_get_info(device=None):
    """(free, total) bytes of a device's memory.

    >>> import chainrule as cr
    >>> free, total = cr.cuda.mem_get_info() if cr.cuda.is_available() else (0, 0)
    >>> free <= total
    True
    """
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    _c("cr_mem_get_info", _device_index(device), ctypes.byref(free), ctypes.byref(total))
    return free.value, total.value


# ---- random numbers --------------------------------------------------------------------

class _Generator:
    """A device's random-number state: a seed and a Philox offset (cr_random's counter),
    advanced by each draw so that no two draws reuse numbers."""

    def __init__(self, seed):
        self.seed, self.offset = seed, 0

    def manual_seed(self, seed):
        self.seed, self.offset = int(seed) & 0xFFFF_FFFF_FFFF_FFFF, 0

    def next_offset(self, count):
        """The offset for a draw of ``count`` numbers; advances the state past them."""
        offset, self.offset = self.offset, self.offset + count
        return offset


_GENERATORS = {}


def default_generator(device=None):
    """The random-number state of a device (seed and offset for the kernels).

    >>> import chainrule as cr
    >>> from chainrule_cuda import runtime
    >>> _ = cr.manual_seed(4)
    >>> runtime.default_generator(0).seed if runtime.is_available() else 4
    4
    """
    index = _device_index(device)
    if index not in _GENERATORS:
        # Lazy seeding: the seed core's manual_seed/seed gave before this device was used.
        from chainrule._random import default_generator as cpu_generator
        _GENERATORS[index] = _Generator(cpu_generator.initial_seed())
    return _GENERATORS[index]


def manual_seed(seed):
    """Seeds the current device's random numbers (no-op without a GPU, like the
    reference's lazy seeding).

    >>> import chainrule as cr
    >>> cr.cuda.manual_seed(0)
    """
    if is_available():
        default_generator().manual_seed(seed)


def manual_seed_all(seed):
    """Seeds the random numbers of every device.

    >>> import chainrule as cr
    >>> cr.cuda.manual_seed_all(0)
    """
    for index in range(device_count()):
        default_generator(index).manual_seed(seed)


def seed():
    """Seeds the current device with a random number.

    >>> import chainrule as cr
    >>> cr.cuda.seed()
    """
    import random
    manual_seed(random.getrandbits(63))


def seed_all():
    """Seeds every device with one random number.

    >>> import chainrule as cr
    >>> cr.cuda.seed_all()
    """
    import random
    manual_seed_all(random.getrandbits(63))


def initial_seed():
    """The current device's seed.

    >>> import chainrule as cr
    >>> cr.cuda.manual_seed(7) if cr.cuda.is_available() else None
    >>> cr.cuda.initial_seed() if cr.cuda.is_available() else 7
    7
    """
    return default_generator().seed
