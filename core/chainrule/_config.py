"""Process-wide settings and dtype facts with the reference's names: ``finfo`` and
``iinfo``, thread counts, determinism switches, float32 matmul precision, warnings,
and ``compile`` (chainrule runs eagerly: compiling returns the function itself)."""
import functools
import os
import warnings

import numpy as np

from . import _dtypes


class finfo:
    """Limits of a floating dtype (the default dtype if none is given); a complex
    dtype gives those of its real part.

    >>> import chainrule as cr
    >>> cr.finfo(cr.float32).eps, cr.finfo(cr.bfloat16).bits
    (1.1920928955078125e-07, 16)
    """

    def __init__(self, type=None):
        d = _dtypes.get_default_dtype() if type is None else _dtypes.to_dtype(type)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        real = d.to_real() if d.is_complex else d
        info = _numpy_finfo(real.np)
        self.bits, self.dtype = int(info.bits), str(real).split(".")[-1]
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)   # the reference's 10**-digits

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k):g}" for k in
                           ("resolution", "min", "max", "eps", "smallest_normal", "tiny"))
        return f"finfo({fields}, dtype={self.dtype})"


def _numpy_finfo(np_dtype):
    if np_dtype.kind == "V" or np_dtype.name == "bfloat16":
        import ml_dtypes
        return ml_dtypes.finfo(np_dtype)
    return np.finfo(np_dtype)


class iinfo:
    """Limits of an integer dtype.

    >>> import chainrule as cr
    >>> cr.iinfo(cr.uint8).max, cr.iinfo(cr.int32).bits
    (255, 32)
    """

    def __init__(self, type):
        d = _dtypes.to_dtype(type)
        if d == _dtypes.bool_:
            raise TypeError(f"{d!r} is not supported by torch.iinfo".replace("chainrule.", "torch."))
        if d.is_floating_point or d.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(d.np)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = str(d).split(".")[-1]

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# --- threads ------------------------------------------------------------------------
_THREADS = {"intra": None, "interop": None}


def get_num_threads():
    """Threads used inside one operation (NumPy's BLAS).

    >>> import chainrule as cr
    >>> cr.get_num_threads() >= 1
    True
    """
    return _THREADS["intra"] or _blas_threads() or os.cpu_count() or 1


def set_num_threads(num):
    """Limit the threads used inside one operation (NumPy's BLAS, through threadpoolctl
    where it is installed; otherwise the number is only recorded).

    >>> import chainrule as cr
    >>> n = cr.get_num_threads(); cr.set_num_threads(1); cr.get_num_threads()
    1
    >>> cr.set_num_threads(n)
    """
    if not isinstance(num, int) or isinstance(num, bool) or num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _THREADS["intra"] = num
    limiter = _threadpool_limits()
    if limiter is not None:
        limiter(limits=num, user_api="blas")


def _threadpool_limits():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits


def _blas_threads():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    counts = [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]
    return max(counts) if counts else None


def get_num_interop_threads():
    """Threads for running independent operations in parallel (chainrule's engines run
    one operation at a time per backward call; the number is recorded for parity).

    >>> import chainrule as cr
    >>> cr.get_num_interop_threads() >= 1
    True
    """
    return _THREADS["interop"] or os.cpu_count() or 1


def set_num_interop_threads(num):
    """Record the inter-op thread count (see ``get_num_interop_threads``).

    >>> import chainrule as cr
    >>> cr.set_num_interop_threads(cr.get_num_interop_threads())
    """
    if not isinstance(num, int) or isinstance(num, bool) or num <= 0:
        raise RuntimeError("Number of interop threads must be positive")
    _THREADS["interop"] = num


# --- determinism --------------------------------------------------------------------
_DETERMINISM = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms. chainrule's CPU operations are deterministic
    already (NumPy, one thread per reduction order), so this records the switch for
    ``are_deterministic_algorithms_enabled`` and the debug mode.

    >>> import chainrule as cr
    >>> cr.use_deterministic_algorithms(True); cr.are_deterministic_algorithms_enabled()
    True
    >>> cr.use_deterministic_algorithms(False)
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, but got "
                        f"{type(mode).__name__}")
    _DETERMINISM.update(enabled=mode, warn_only=bool(warn_only) and mode)


def are_deterministic_algorithms_enabled():
    """Whether ``use_deterministic_algorithms(True)`` is in effect.

    >>> import chainrule as cr
    >>> cr.are_deterministic_algorithms_enabled()
    False
    """
    return _DETERMINISM["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    """Whether determinism was asked for with ``warn_only=True``.

    >>> import chainrule as cr
    >>> cr.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _DETERMINISM["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """The same switch as ``use_deterministic_algorithms``, as 0/1/2 or
    "default"/"warn"/"error".

    >>> import chainrule as cr
    >>> cr.set_deterministic_debug_mode("warn"); cr.get_deterministic_debug_mode()
    1
    >>> cr.set_deterministic_debug_mode(0)
    """
    level = _DEBUG_MODES.get(debug_mode, debug_mode)
    if level not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                           f"`error`, but got {debug_mode}")
    use_deterministic_algorithms(level > 0, warn_only=level == 1)


def get_deterministic_debug_mode():
    """0 (off), 1 (warn only) or 2 (on): see ``set_deterministic_debug_mode``.

    >>> import chainrule as cr
    >>> cr.get_deterministic_debug_mode()
    0
    """
    if not _DETERMINISM["enabled"]:
        return 0
    return 1 if _DETERMINISM["warn_only"] else 2


# --- matmul precision, warnings, typename -------------------------------------------
_MATMUL = {"precision": "highest"}


def set_float32_matmul_precision(precision):
    """Record the allowed float32 matmul precision ("highest", "high", "medium").
    NumPy's float32 matmul is always full precision, which every setting allows.

    >>> import chainrule as cr
    >>> cr.set_float32_matmul_precision("high"); cr.get_float32_matmul_precision()
    'high'
    >>> cr.set_float32_matmul_precision("highest")
    """
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _MATMUL["precision"] = precision


def get_float32_matmul_precision():
    """See ``set_float32_matmul_precision``.

    >>> import chainrule as cr
    >>> cr.get_float32_matmul_precision()
    'highest'
    """
    return _MATMUL["precision"]


_WARN_ALWAYS = [False]


def set_warn_always(b):
    """Warn every time, not once per process, for warnings chainrule gives once.

    >>> import chainrule as cr
    >>> cr.set_warn_always(False); cr.is_warn_always_enabled()
    False
    """
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled():
    """See ``set_warn_always``.

    >>> import chainrule as cr
    >>> cr.is_warn_always_enabled()
    False
    """
    return _WARN_ALWAYS[0]


def typename(obj):
    """The type name of ``obj``: a tensor's legacy type ("chainrule.FloatTensor"),
    otherwise its Python type's name.

    >>> import chainrule as cr
    >>> cr.typename(cr.ones(2, dtype=cr.float64)), cr.typename(3)
    ('chainrule.DoubleTensor', 'int')
    """
    from ._tensor import Tensor
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "") or ""
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"


def is_storage(obj):
    """False: chainrule tensors own NumPy arrays, not storage objects.

    >>> import chainrule as cr
    >>> cr.is_storage(cr.ones(1))
    False
    """
    return False


# --- compile ------------------------------------------------------------------------
def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, **kwargs):
    """The reference's compiler entry point. chainrule executes eagerly and has no
    graph compiler, so the compiled function is ``model`` itself (same results, eager
    speed); used as a decorator with arguments, it returns that decorator.

    >>> import chainrule as cr
    >>> f = cr.compile(lambda x: x.sin() + 1, mode="max-autotune")
    >>> f(cr.zeros(1)).tolist()
    [1.0]
    >>> @cr.compile(fullgraph=True)
    ... def g(x):
    ...     return x * 2
    >>> g(cr.ones(1)).tolist()
    [2.0]
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, disable=disable)
    if not callable(model):
        raise RuntimeError(f"compile: model must be callable, got {type(model).__name__}")
    return model


__all__ = ["finfo", "iinfo", "get_num_threads", "set_num_threads", "get_num_interop_threads",
           "set_num_interop_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "set_warn_always", "is_warn_always_enabled",
           "typename", "is_storage", "compile"]
