"""The ctypes loader of chainrule-cuda's C library (Note [one C ABI, two builds] in
``csrc/cr_cuda.h``).

Note [which library]
    ``libchainrule_cuda.so`` (nvcc) when a GPU is usable; ``libchainrule_cuda_host.so``
    (the host compiler: device memory is host memory, kernels run on the CPU) when
    ``CHAINRULE_CUDA_EMULATE=1`` — that is how CI runs the whole layer without a GPU.
    Without either, :func:`unavailable_reason` says why, and :func:`library` raises a
    RuntimeError with that reason. The library is loaded once per process.

    >>> from chainrule_cuda import _lib
    >>> _lib.unavailable_reason() is None or isinstance(_lib.unavailable_reason(), str)
    True
"""
import ctypes
import os
import threading

EMULATE_ENV = "CHAINRULE_CUDA_EMULATE"
GPU_LIBRARY = "libchainrule_cuda.so"
HOST_LIBRARY = "libchainrule_cuda_host.so"
_HERE = os.path.dirname(os.path.abspath(__file__))

# cr_status codes (cr_cuda.h)
SUCCESS, INVALID_VALUE, OUT_OF_MEMORY, CUDA_ERROR, UNAVAILABLE, NOT_SUPPORTED = range(6)

CR_MAX_DIMS = 16


class CrTensor(ctypes.Structure):
    """``cr_tensor``: a strided view of device memory (strides in elements)."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.c_int64 * CR_MAX_DIMS),
        ("strides", ctypes.c_int64 * CR_MAX_DIMS),
    ]


_int, _vp, _size, _i64 = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64
_dbl = ctypes.c_double
_P = ctypes.POINTER

# name -> (restype, argtypes): every function of the C ABI Python calls. Each helper adds
# its own functions here (one table, so the loader declares them all at load time).
PROTOTYPES = {
    # errors and availability
    "cr_last_error": (ctypes.c_char_p, []),
    "cr_is_emulated": (_int, []),
    "cr_unavailable_reason": (ctypes.c_char_p, []),
    "cr_device_count": (_int, [_P(_int)]),
    "cr_set_device": (_int, [_int]),
    "cr_get_device": (_int, [_P(_int)]),
    "cr_device_synchronize": (_int, []),
    "cr_device_name": (_int, [_int, ctypes.c_char_p, _size]),
    "cr_device_capability": (_int, [_int, _P(_int), _P(_int)]),
    "cr_mem_get_info": (_int, [_int, _P(_size), _P(_size)]),
    # streams and events
    "cr_stream_create": (_int, [_P(_vp), _int]),
    "cr_stream_destroy": (_int, [_vp]),
    "cr_stream_synchronize": (_int, [_vp]),
    "cr_stream_query": (_int, [_vp, _P(_int)]),
    "cr_stream_wait_event": (_int, [_vp, _vp]),
    "cr_event_create": (_int, [_P(_vp), _int]),
    "cr_event_destroy": (_int, [_vp]),
    "cr_event_record": (_int, [_vp, _vp]),
    "cr_event_synchronize": (_int, [_vp]),
    "cr_event_query": (_int, [_vp, _P(_int)]),
    "cr_event_elapsed_ms": (_int, [_vp, _vp, _P(ctypes.c_float)]),
    # memory
    "cr_alloc": (_int, [_int, _size, _vp, _P(_vp)]),
    "cr_free": (_int, [_vp]),
    "cr_record_stream": (_int, [_vp, _vp]),
    "cr_memory_stats": (_int, [_int, _P(_i64)]),
    "cr_memory_stat_names": (ctypes.c_char_p, []),
    "cr_memory_stats_all": (_int, [_int, _P(_i64), _int]),
    "cr_reset_peak_memory_stats": (_int, [_int]),
    "cr_empty_cache": (_int, []),
    "cr_memcpy": (_int, [_vp, _vp, _size, _int, _vp]),
    "cr_reset_accumulated_memory_stats": (_int, [_int]),
    "cr_set_memory_fraction": (_int, [_int, ctypes.c_double]),
    "cr_get_memory_fraction": (_int, [_int, _P(ctypes.c_double)]),
    "cr_host_alloc_pinned": (_int, [_P(_vp), _size]),
    "cr_host_free_pinned": (_int, [_vp]),
    "cr_host_is_pinned": (_int, [_vp, _P(_int)]),
    "cr_host_empty_cache": (_int, []),
    "cr_testing_set_fake_capacity": (_int, [_int, _i64]),
    "cr_testing_hold_stream": (_int, [_vp, _int]),
    "cr_testing_stream_log": (_int, [_int]),
    "cr_testing_stream_log_read": (_int, [_P(_i64), _int, _P(_int)]),
    # kernels (cr_tensor arguments are pointers to CrTensor)
    "cr_op_names": (ctypes.c_char_p, [ctypes.c_char_p]),
    "cr_fill": (_int, [_vp, _dbl, _dbl, _vp]),
    "cr_copy": (_int, [_vp, _vp, _vp]),
    "cr_unary": (_int, [_int, _vp, _vp, _dbl, _vp]),
    "cr_binary": (_int, [_int, _vp, _vp, _vp, _vp]),
    "cr_ternary": (_int, [_int, _vp, _vp, _vp, _vp, _vp]),
    "cr_reduce": (_int, [_int, _vp, _vp, ctypes.c_uint64, _dbl, _vp]),
    "cr_arg_reduce": (_int, [_int, _vp, _vp, _vp, _int, _vp]),
    "cr_scan": (_int, [_int, _vp, _vp, _int, _vp]),
    "cr_scan_with_indices": (_int, [_int, _vp, _vp, _vp, _int, _vp]),
    "cr_softmax": (_int, [_int, _vp, _vp, _int, _vp]),
    "cr_sort": (_int, [_vp, _vp, _vp, _int, _int, _vp]),
    "cr_nonzero": (_int, [_vp, _vp, _vp]),
    "cr_matmul": (_int, [_vp, _vp, _vp, _dbl, _dbl, _vp]),
    "cr_blas_library": (ctypes.c_char_p, []),
    "cr_gather": (_int, [_vp, _vp, _int, _vp, _vp]),
    "cr_scatter_add": (_int, [_vp, _int, _vp, _vp, _vp]),
    "cr_index_select": (_int, [_vp, _vp, _int, _vp, _vp]),
    "cr_index_add": (_int, [_vp, _int, _vp, _vp, _vp]),
    "cr_masked_fill": (_int, [_vp, _vp, _dbl, _dbl, _vp]),
    "cr_im2col": (_int, [_vp, _vp, _P(_i64), _P(_i64), _P(_i64), _P(_i64), _vp]),
    "cr_col2im": (_int, [_vp, _vp, _P(_i64), _P(_i64), _P(_i64), _P(_i64), _vp]),
    "cr_random": (_int, [_int, _vp, ctypes.c_uint64, ctypes.c_uint64, _dbl, _dbl, _vp]),
}

_LOCK = threading.Lock()
_STATE = {}  # "lib": the CDLL, or "reason": why none is usable


def emulation_requested():
    """True when ``CHAINRULE_CUDA_EMULATE=1`` asks for the host build."""
    return os.environ.get(EMULATE_ENV, "") == "1"


def _declare(lib):
    for name, (restype, argtypes) in PROTOTYPES.items():
        fn = getattr(lib, name, None)
        if fn is not None:  # a function another helper has not built yet stays undeclared
            fn.restype, fn.argtypes = restype, argtypes
    return lib


def _open(filename):
    path = os.path.join(_HERE, filename)
    if not os.path.exists(path):
        return None, path
    return _declare(ctypes.CDLL(path)), path


def _load():
    """(library, None) or (None, reason)."""
    if emulation_requested():
        lib, path = _open(HOST_LIBRARY)
        if lib is None:
            return None, (f"{EMULATE_ENV}=1 but the host build {path} is missing "
                          f"(build it: cuda/tools/build.sh host)")
        return lib, None
    lib, path = _open(GPU_LIBRARY)
    if lib is None:
        return None, (f"chainrule-cuda has no GPU library ({path} is missing: it was "
                      f"built without nvcc); {EMULATE_ENV}=1 runs the host build instead")
    reason = lib.cr_unavailable_reason()
    if reason:
        return None, reason.decode()
    return lib, None


def _state():
    if not _STATE:
        with _LOCK:
            if not _STATE:
                lib, reason = _load()
                _STATE.update(lib=lib, reason=reason)
    return _STATE


def unavailable_reason():
    """Why no GPU (nor the host build) can be used, or None when one can."""
    return _state()["reason"]


def library():
    """The loaded library; RuntimeError naming the reason when none is usable."""
    state = _state()
    if state["lib"] is None:
        raise RuntimeError(f"CUDA is not available: {state['reason']}")
    return state["lib"]


def is_emulated():
    """True when the host build (CHAINRULE_CUDA_EMULATE=1) is the loaded library."""
    return bool(library().cr_is_emulated())


def last_error():
    return library().cr_last_error().decode(errors="replace")


def check(status):
    """Raises the error of a nonzero cr_status: OutOfMemoryError for the allocator's
    out-of-memory, RuntimeError otherwise (the message is cr_last_error())."""
    if status == SUCCESS:
        return
    message = last_error()
    if status == OUT_OF_MEMORY:
        from chainrule.cuda import OutOfMemoryError
        raise OutOfMemoryError(message)
    raise RuntimeError(message)


def call(name, *args):
    """Calls ``name`` of the C ABI and raises its error."""
    check(getattr(library(), name)(*args))
