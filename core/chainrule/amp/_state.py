"""The autocast state (thread local, like the reference's) and the functions that read
and set it: ``is_autocast_enabled``, ``get_autocast_dtype``, ``set_autocast_enabled``,
the weight cache, the nesting counter and the deprecated per-device spellings.

Enabling autocast for any device registers the autocast dispatcher (Note [autocast
dispatch]); disabling it everywhere removes it, so with autocast off apply_op pays its
one check and nothing more.
"""
import threading
import warnings

from .. import _dtypes

# Every device type the reference's device strings accept (its error message lists them)
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                 "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")
# ... and those with an autocast dtype (the reference's defaults).
DEFAULT_DTYPES = {"cpu": _dtypes.bfloat16, "cuda": _dtypes.float16, "ipu": _dtypes.float16,
                  "xpu": _dtypes.float16, "hip": _dtypes.float16, "maia": _dtypes.bfloat16,
                  "xla": _dtypes.bfloat16, "mps": _dtypes.float16, "hpu": _dtypes.bfloat16,
                  "mtia": _dtypes.float16, "privateuseone": _dtypes.float16}
# The device types whose tensors chainrule autocasts (Note [autocast dispatch]).
AUTOCAST_DEVICE_TYPES = ("cpu", "cuda")


class _State(threading.local):
    def __init__(self):
        self.enabled = dict.fromkeys(DEFAULT_DTYPES, False)
        self.dtype = dict(DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}          # id(weight) -> (weight, its cast): Note [autocast weight cache]
        self.excluded = 0        # > 0 while a listed op runs: Note [autocast dispatch]


STATE = _State()
_ENABLED_COUNT = [0]             # (thread, device type) pairs with autocast on
_LOCK = threading.Lock()
_HOOKS = {}                      # "on"/"off": filled by _policy (registers the dispatcher)


def check_device_type(device_type):
    """``device_type`` as the reference's device strings name it, else its error."""
    if not isinstance(device_type, str):
        raise TypeError(f"argument 'device_type' must be str, not {type(device_type).__name__}")
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start "
                           f"of device string: {device_type}")
    return device_type


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` in this thread (``"cuda"`` when omitted).

    >>> import chainrule as cr
    >>> with cr.autocast("cpu"):
    ...     cr.is_autocast_enabled("cpu")
    True
    >>> cr.is_autocast_enabled("cpu")
    False
    """
    return STATE.enabled.get(check_device_type("cuda" if device_type is None else device_type),
                             False)


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for ``device_type`` in this thread (what ``autocast``
    does on entry and exit); ``set_autocast_enabled(True)`` alone means ``"cuda"``.

    >>> import chainrule as cr
    >>> cr.set_autocast_enabled("cpu", True)
    >>> cr.mm(cr.ones(2, 2), cr.ones(2, 2)).dtype
    chainrule.bfloat16
    >>> cr.set_autocast_enabled("cpu", False)
    """
    if enabled is None:
        device_type, enabled = "cuda", device_type
    check_device_type(device_type)
    if device_type not in STATE.enabled:
        raise RuntimeError("unknown device type for autocast in "
                           "get_autocast_dispatch_key_from_device_type")
    enabled = bool(enabled)
    if STATE.enabled[device_type] != enabled:
        STATE.enabled[device_type] = enabled
        _count_enabled(1 if enabled else -1)


def _count_enabled(step):
    with _LOCK:
        before = _ENABLED_COUNT[0]
        _ENABLED_COUNT[0] = before + step
        if before == 0 and step > 0:
            _HOOKS["on"]()
        elif before + step == 0:
            _HOOKS["off"]()


def get_autocast_dtype(device_type):
    """The dtype that lower-precision ops run in under autocast on ``device_type``
    (bfloat16 on the CPU, float16 on CUDA, unless set).

    >>> import chainrule as cr
    >>> cr.get_autocast_dtype("cpu"), cr.get_autocast_dtype("cuda")
    (chainrule.bfloat16, chainrule.float16)
    """
    check_device_type(device_type)
    if device_type not in STATE.dtype:
        raise RuntimeError("unsupported scalarType")
    return STATE.dtype[device_type]


def set_autocast_dtype(device_type, dtype):
    """Set the autocast dtype of ``device_type`` for this thread.

    >>> import chainrule as cr
    >>> cr.set_autocast_dtype("cpu", cr.float16)
    >>> cr.get_autocast_dtype("cpu")
    chainrule.float16
    >>> cr.set_autocast_dtype("cpu", cr.bfloat16)
    """
    check_device_type(device_type)
    if not isinstance(dtype, _dtypes.dtype):
        raise TypeError("set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"chainrule.dtype, not {type(dtype).__name__}")
    if device_type not in STATE.dtype:
        raise RuntimeError("unsupported scalarType")
    STATE.dtype[device_type] = dtype


def is_autocast_cache_enabled():
    """Whether autocast keeps the casts of weights within a region (True by default).

    >>> import chainrule as cr
    >>> cr.is_autocast_cache_enabled()
    True
    """
    return STATE.cache_enabled


def set_autocast_cache_enabled(enabled):
    """Turn the autocast weight cache on or off for this thread.

    >>> import chainrule as cr
    >>> cr.set_autocast_cache_enabled(False); cr.is_autocast_cache_enabled()
    False
    >>> cr.set_autocast_cache_enabled(True)
    """
    STATE.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Drop the cast weights autocast keeps (done when the outermost region exits).

    >>> import chainrule as cr
    >>> cr.clear_autocast_cache()
    """
    STATE.cache.clear()


def autocast_increment_nesting():
    """Count one more autocast region entered in this thread; returns the count.

    >>> import chainrule as cr
    >>> cr.autocast_increment_nesting(), cr.autocast_decrement_nesting()
    (1, 0)
    """
    STATE.nesting += 1
    return STATE.nesting


def autocast_decrement_nesting():
    """Count one autocast region left; returns the count (0: the outermost one left).

    >>> import chainrule as cr
    >>> cr.autocast_increment_nesting(); cr.autocast_decrement_nesting()
    1
    0
    """
    STATE.nesting -= 1
    return STATE.nesting


def _deprecated(old, new, fn):
    def spelled_the_old_way(*args):
        warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.",
                      DeprecationWarning, stacklevel=2)
        return fn(*args)
    spelled_the_old_way.__name__ = spelled_the_old_way.__qualname__ = old
    spelled_the_old_way.__doc__ = (f"Deprecated spelling of ``{new}`` (a DeprecationWarning "
                                   "says so), like the reference's.")
    return spelled_the_old_way


def _per_device(device_type):
    word = {"cuda": "gpu"}.get(device_type, device_type)
    return {
        f"is_autocast_{word}_enabled": _deprecated(
            f"is_autocast_{word}_enabled", f"is_autocast_enabled('{device_type}')",
            lambda: is_autocast_enabled(device_type)),
        f"set_autocast_{word}_enabled": _deprecated(
            f"set_autocast_{word}_enabled", f"set_autocast_enabled('{device_type}', enabled)",
            lambda enabled: set_autocast_enabled(device_type, enabled)),
        f"get_autocast_{word}_dtype": _deprecated(
            f"get_autocast_{word}_dtype", f"get_autocast_dtype('{device_type}')",
            lambda: get_autocast_dtype(device_type)),
        f"set_autocast_{word}_dtype": _deprecated(
            f"set_autocast_{word}_dtype", f"set_autocast_dtype('{device_type}', dtype)",
            lambda dtype: set_autocast_dtype(device_type, dtype)),
    }


# The reference's per-device spellings: cpu and gpu (cuda); ipu and xla (whose autocast
# chainrule does not run: they report and keep the state like the others).
DEPRECATED = {name: fn for device in ("cpu", "cuda", "ipu", "xla")
              for name, fn in _per_device(device).items() if "gpu_enabled" not in name}
