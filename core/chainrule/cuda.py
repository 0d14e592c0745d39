"""``chainrule.cuda``: the reference's ``torch.cuda`` API. The device itself comes with
the chainrule-cuda wheel: every function here forwards to ``chainrule_cuda.runtime``
when it is installed. Without it the queries answer "no GPU" (``is_available()`` False,
``device_count()`` 0, memory figures 0, seeding a no-op), :func:`unavailable_reason`
says to install the wheel, and whatever needs a device raises a RuntimeError saying so.
Core never imports the layer at import time (Note [layers] in DESIGN.md).

>>> import chainrule as cr
>>> cr.cuda.is_available() or cr.cuda.unavailable_reason() is not None
True
"""
NOT_INSTALLED = ("chainrule-cuda is not installed: install the chainrule-cuda wheel "
                 "(import chainrule_cuda) to use CUDA devices")
_LAYER = []


class OutOfMemoryError(RuntimeError):
    """Raised when the CUDA caching allocator cannot get memory, after freeing its cache
    once ("CUDA out of memory. Tried to allocate ...", with the figures).

    >>> import chainrule as cr
    >>> issubclass(cr.cuda.OutOfMemoryError, RuntimeError)
    True
    """


def _runtime():
    """``chainrule_cuda.runtime``, or None without the layer (looked up once)."""
    if not _LAYER:
        try:
            from chainrule_cuda import runtime
        except ImportError:
            runtime = None
        _LAYER.append(runtime)
    return _LAYER[0]


def _required():
    runtime = _runtime()
    if runtime is None:
        raise RuntimeError(NOT_INSTALLED)
    return runtime


# The classes are the layer's.
_CLASSES = ("Stream", "ExternalStream", "Event", "device", "device_of", "StreamContext")


def __getattr__(name):
    if name in _CLASSES:
        return getattr(_required(), name)
    raise AttributeError(f"module 'chainrule.cuda' has no attribute '{name}'")


def is_available():
    """True when chainrule-cuda is installed and a GPU can be used (or its host build,
    ``CHAINRULE_CUDA_EMULATE=1``).

    >>> import chainrule as cr
    >>> isinstance(cr.cuda.is_available(), bool)
    True
    """
    runtime = _runtime()
    return bool(runtime and runtime.is_available())


def unavailable_reason():
    """Why CUDA cannot be used ("install chainrule-cuda", "no NVIDIA driver ...",
    "no CUDA device ..."), or None when it can.

    >>> import chainrule as cr
    >>> (cr.cuda.unavailable_reason() is None) == cr.cuda.is_available()
    True
    """
    runtime = _runtime()
    return NOT_INSTALLED if runtime is None else runtime.unavailable_reason()


def is_initialized():
    """True once CUDA is usable in this process.

    >>> import chainrule as cr
    >>> cr.cuda.is_initialized() == cr.cuda.is_available()
    True
    """
    return is_available()


def init():
    """Initializes CUDA; RuntimeError naming why it cannot be used.

    >>> import chainrule as cr
    >>> cr.cuda.init() if cr.cuda.is_available() else None
    """
    _required().init()


def device_count():
    """The number of usable GPUs (0 without the layer or a GPU).

    >>> import chainrule as cr
    >>> cr.cuda.device_count() >= 0
    True
    """
    runtime = _runtime()
    return runtime.device_count() if runtime else 0


def current_device():
    """The index of this thread's current device.

    >>> import chainrule as cr
    >>> cr.cuda.current_device() if cr.cuda.is_available() else 0
    0
    """
    return _required().current_device()


def set_device(device):
    """Makes ``device`` (an index, ``"cuda:N"`` or a device) this thread's current device.

    >>> import chainrule as cr
    >>> cr.cuda.set_device(0) if cr.cuda.is_available() else None
    """
    _required().set_device(device)


def synchronize(device=None):
    """Waits for all work queued on a device (default: the current one).

    >>> import chainrule as cr
    >>> cr.cuda.synchronize() if cr.cuda.is_available() else None
    """
    _required().synchronize(device)


def get_device_name(device=None):
    """The name of a device.

    >>> import chainrule as cr
    >>> isinstance(cr.cuda.get_device_name(), str) if cr.cuda.is_available() else True
    True
    """
    return _required().get_device_name(device)


def get_device_capability(device=None):
    """A device's compute capability, ``(major, minor)``.

    >>> import chainrule as cr
    >>> len(cr.cuda.get_device_capability()) if cr.cuda.is_available() else 2
    2
    """
    return _required().get_device_capability(device)


def get_device_properties(device=None):
    """A device's ``name``, ``major``, ``minor`` and ``total_memory``.

    >>> import chainrule as cr
    >>> cr.cuda.get_device_properties().total_memory > 0 if cr.cuda.is_available() else True
    True
    """
    return _required().get_device_properties(device)


def is_bf16_supported(including_emulation=True):
    """True when the current GPU computes in bfloat16 natively (False without one).

    >>> import chainrule as cr
    >>> isinstance(cr.cuda.is_bf16_supported(), bool)
    True
    """
    runtime = _runtime()
    return bool(runtime and runtime.is_bf16_supported(including_emulation))


def current_stream(device=None):
    """This thread's current stream on a device (its default stream at first).

    >>> import chainrule as cr
    >>> cr.cuda.current_stream() == cr.cuda.default_stream() if cr.cuda.is_available() else True
    True
    """
    return _required().current_stream(device)


def default_stream(device=None):
    """A device's default stream.

    >>> import chainrule as cr
    >>> cr.cuda.default_stream().cuda_stream if cr.cuda.is_available() else 0
    0
    """
    return _required().default_stream(device)


def set_stream(stream):
    """Makes ``stream`` the current stream of its device in this thread.

    >>> import chainrule as cr
    >>> cr.cuda.set_stream(cr.cuda.default_stream()) if cr.cuda.is_available() else None
    """
    _required().set_stream(stream)


def stream(stream):
    """Context manager: work inside runs on ``stream`` (None: no change).

    >>> import chainrule as cr
    >>> if cr.cuda.is_available():
    ...     with cr.cuda.stream(cr.cuda.Stream()) as s:
    ...         assert cr.cuda.current_stream() == s
    """
    return _required().stream(stream)


def memory_allocated(device=None):
    """Bytes of device memory held by tensors (0 without a GPU).

    >>> import chainrule as cr
    >>> cr.cuda.memory_allocated() >= 0
    True
    """
    runtime = _runtime()
    return runtime.memory_allocated(device) if runtime else 0


def max_memory_allocated(device=None):
    """The peak of :func:`memory_allocated` since the start or the last reset.

    >>> import chainrule as cr
    >>> cr.cuda.max_memory_allocated() >= cr.cuda.memory_allocated()
    True
    """
    runtime = _runtime()
    return runtime.max_memory_allocated(device) if runtime else 0


def memory_reserved(device=None):
    """Bytes of device memory the caching allocator holds, in use or cached.

    >>> import chainrule as cr
    >>> cr.cuda.memory_reserved() >= cr.cuda.memory_allocated()
    True
    """
    runtime = _runtime()
    return runtime.memory_reserved(device) if runtime else 0


def max_memory_reserved(device=None):
    """The peak of :func:`memory_reserved` since the start or the last reset.

    >>> import chainrule as cr
    >>> cr.cuda.max_memory_reserved() >= cr.cuda.memory_reserved()
    True
    """
    runtime = _runtime()
    return runtime.max_memory_reserved(device) if runtime else 0


def reset_peak_memory_stats(device=None):
    """Sets the peak memory statistics to their current values.

    >>> import chainrule as cr
    >>> cr.cuda.reset_peak_memory_stats()
    """
    runtime = _runtime()
    if runtime:
        runtime.reset_peak_memory_stats(device)


def reset_max_memory_allocated(device=None):
    """Resets the peak of :func:`memory_allocated`.

    >>> import chainrule as cr
    >>> cr.cuda.reset_max_memory_allocated()
    """
    reset_peak_memory_stats(device)


def empty_cache():
    """Gives the allocator's cached, unused device memory back to the device.

    >>> import chainrule as cr
    >>> cr.cuda.empty_cache()
    """
    runtime = _runtime()
    if runtime:
        runtime.empty_cache()


def memory_stats(device=None):
    """The caching allocator's statistics by the reference's names (empty without a GPU).

    >>> import chainrule as cr
    >>> cr.cuda.memory_stats().get("allocated_bytes.all.current", 0) == cr.cuda.memory_allocated()
    True
    """
    runtime = _runtime()
    return runtime.memory_stats(device) if runtime else {}


def reset_accumulated_memory_stats(device=None):
    """Zeroes the allocator's cumulative counters (no-op without a GPU).

    >>> import chainrule as cr
    >>> cr.cuda.reset_accumulated_memory_stats()
    """
    runtime = _runtime()
    if runtime:
        runtime.reset_accumulated_memory_stats(device)


def set_per_process_memory_fraction(fraction, device=None):
    """Caps what the caching allocator may reserve at ``fraction`` of a device's memory.

    >>> import chainrule as cr
    >>> cr.cuda.set_per_process_memory_fraction(1.0) if cr.cuda.is_available() else None
    """
    _required().set_per_process_memory_fraction(fraction, device)


def get_per_process_memory_fraction(device=None):
    """The cap :func:`set_per_process_memory_fraction` set (1.0 by default).

    >>> import chainrule as cr
    >>> cr.cuda.get_per_process_memory_fraction() if cr.cuda.is_available() else 1.0
    1.0
    """
    return _required().get_per_process_memory_fraction(device)


def memory_summary(device=None, abbreviated=False):
    """The caching allocator's statistics as a readable table.

    >>> import chainrule as cr
    >>> "Allocated memory" in cr.cuda.memory_summary() if cr.cuda.is_available() else True
    True
    """
    return _required().memory_summary(device, abbreviated)


def mem_get_info(device=None):
    """``(free, total)`` bytes of a device's memory.

    >>> import chainrule as cr
    >>> free, total = cr.cuda.mem_get_info() if cr.cuda.is_available() else (0, 0)
    >>> free <= total
    True
    """
    return _required().mem_get_info(device)


def manual_seed(seed):
    """Seeds the current device's random numbers (no-op without a GPU).

    >>> import chainrule as cr
    >>> cr.cuda.manual_seed(0)
    """
    runtime = _runtime()
    if runtime:
        runtime.manual_seed(seed)


def manual_seed_all(seed):
    """Seeds every device's random numbers (no-op without a GPU).

    >>> import chainrule as cr
    >>> cr.cuda.manual_seed_all(0)
    """
    runtime = _runtime()
    if runtime:
        runtime.manual_seed_all(seed)


def seed():
    """Seeds the current device with a random number (no-op without a GPU).

    >>> import chainrule as cr
    >>> cr.cuda.seed()
    """
    runtime = _runtime()
    if runtime:
        runtime.seed()


def seed_all():
    """Seeds every device with one random number (no-op without a GPU).

    >>> import chainrule as cr
    >>> cr.cuda.seed_all()
    """
    runtime = _runtime()
    if runtime:
        runtime.seed_all()


def initial_seed():
    """The current device's seed.

    >>> import chainrule as cr
    >>> cr.cuda.manual_seed(3)
    >>> cr.cuda.initial_seed() if cr.cuda.is_available() else 3
    3
    """
    return _required().initial_seed()
