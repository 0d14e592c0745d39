"""``chainrule.cuda``: availability queries; the device itself comes with the
chainrule-cuda wheel (registered through the device-backend registry)."""
from ._backends import find_backend


class OutOfMemoryError(RuntimeError):
    """Raised when the CUDA caching allocator cannot get memory, after freeing its cache
    once ("CUDA out of memory. Tried to allocate ...", with the figures).

    >>> import chainrule as cr
    >>> issubclass(cr.cuda.OutOfMemoryError, RuntimeError)
    True
    """


def _backend():
    return find_backend("cuda")


def is_available():
    """True when the chainrule-cuda layer is installed and sees a GPU.

    >>> import chainrule as cr
    >>> isinstance(cr.cuda.is_available(), bool)
    True
    """
    backend = _backend()
    return bool(backend and backend.is_available())


def device_count():
    """The number of visible GPUs (0 without the chainrule-cuda layer)."""
    backend = _backend()
    return backend.device_count() if backend else 0


def synchronize(device=None):
    """Wait for all work queued on the GPU (no-op without the CUDA layer)."""
    backend = _backend()
    if backend:
        backend.synchronize(device)
