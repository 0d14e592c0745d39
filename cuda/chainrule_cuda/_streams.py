"""The stream DeviceArray work is queued on: the runtime's current stream (its
``stream(...)`` context), the default stream (NULL) without one."""
import ctypes

from . import _kernels as K
from . import runtime


def current_handle():
    """The handle of this thread's current stream (None: the default stream; without
    a stream context in this thread that is known without asking for the device)."""
    if not runtime._TLS.__dict__.get("streams"):   # (no AttributeError raised per call)
        return None
    return runtime.current_stream()._handle or None


def synchronize_current():
    """Wait for the current stream (a device-to-host copy's result is read next)."""
    K.check(K.lib().cr_stream_synchronize(ctypes.c_void_p(current_handle() or 0)))
