"""The stream DeviceArray work is queued on: the runtime's current stream (its
``stream(...)`` context), the default stream (NULL) without one."""
import ctypes

from . import _kernels as K


def current_handle():
    try:
        from . import runtime
    except ImportError:
        return None
    getter = getattr(runtime, "current_stream_handle", None)
    return getter() if getter is not None else None


def synchronize_current():
    """Wait for the current stream (a device-to-host copy's result is read next)."""
    K.check(K.lib().cr_stream_synchronize(ctypes.c_void_p(current_handle() or 0)))
