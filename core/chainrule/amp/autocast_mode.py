"""``autocast`` (context manager and decorator), ``custom_fwd`` / ``custom_bwd`` for
custom Functions, and ``is_autocast_available``: the reference's ``torch.amp.autocast_mode``.
What autocast does to each op: Note [autocast dispatch] in ``_policy.py``."""
import functools
import warnings

from .. import _dtypes
from .._tensor import Tensor
from . import _state

_SUPPORTED_DTYPES = (_dtypes.bfloat16, _dtypes.float16)


def is_autocast_available(device_type):
    """Whether chainrule can autocast ``device_type`` (``"cpu"``, and ``"cuda"``).

    >>> import chainrule as cr
    >>> cr.amp.is_autocast_available("cpu"), cr.amp.is_autocast_available("meta")
    (True, False)
    """
    if not isinstance(device_type, str):
        raise TypeError("_is_autocast_available(): argument 'device_type' (position 1) must "
                        f"be str, not {type(device_type).__name__}")
    return _state.check_device_type(device_type) in _state.AUTOCAST_DEVICE_TYPES


class autocast:
    """A region (``with``) or a function (decorator) whose ops run in mixed precision:
    matmul, linear, convolutions, ... in ``dtype`` (bfloat16 on the CPU by default),
    losses, ``prod`` and most of linalg in float32, ``cat``/``stack`` in the widest input
    dtype; the other ops in their inputs' dtype. Regions nest; ``enabled=False`` turns
    autocast off inside one. Gradients come back in each input's dtype.

    >>> import chainrule as cr
    >>> w = cr.ones(3, 2, requires_grad=True)
    >>> with cr.autocast("cpu"):
    ...     y = cr.ones(4, 3) @ w
    ...     loss = cr.nn.functional.mse_loss(y, cr.zeros(4, 2))
    >>> y.dtype, loss.dtype
    (chainrule.bfloat16, chainrule.float32)
    >>> loss.backward(); w.grad.dtype
    chainrule.float32
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = _state.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = (_state.is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        self._enabled = bool(enabled) and _usable(device_type, self.fast_dtype)

    def __enter__(self):
        self.prev_cache_enabled = _state.is_autocast_cache_enabled()
        self.prev = _state.is_autocast_enabled(self.device)
        self.prev_fastdtype = _state.get_autocast_dtype(self.device)
        _state.set_autocast_enabled(self.device, self._enabled)
        _state.set_autocast_dtype(self.device, self.fast_dtype)
        _state.autocast_increment_nesting()
        _state.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if _state.autocast_decrement_nesting() == 0:
            _state.clear_autocast_cache()
        _state.set_autocast_enabled(self.device, self.prev)
        _state.set_autocast_dtype(self.device, self.prev_fastdtype)
        _state.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


def _usable(device_type, dtype):
    """False (with the reference's warning) where autocast must switch itself off."""
    if device_type == "cuda":
        from .. import cuda
        if not cuda.is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          stacklevel=3)
            return False
        return True
    if dtype not in _SUPPORTED_DTYPES:
        name = device_type.upper()
        warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling "
                      f"autocast.\n{name} Autocast only supports dtypes of "
                      f"{', '.join(map(str, _SUPPORTED_DTYPES))} currently.", stacklevel=3)
        return False
    return True


def _cast(value, device_type, dtype):
    """``value`` with its floating tensors of ``device_type`` (not float64) cast to
    ``dtype``, also inside lists, tuples and dicts (what ``custom_fwd(cast_inputs=)`` does).

    >>> import chainrule as cr
    >>> from chainrule.amp.autocast_mode import _cast
    >>> [t.dtype for t in _cast([cr.ones(1), cr.ones(1, dtype=cr.float64)], "cpu", cr.bfloat16)]
    [chainrule.bfloat16, chainrule.float64]
    """
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not _dtypes.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def _check_device_type_arg(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's ``forward``: with ``cast_inputs`` and autocast on,
    its floating tensor arguments are cast to ``cast_inputs`` and it runs with autocast
    off; without, it runs under the current autocast state (which ``custom_bwd`` then
    restores for ``backward``).

    >>> import chainrule as cr
    >>> class Square(cr.autograd.Function):
    ...     @staticmethod
    ...     @cr.amp.custom_fwd(device_type="cpu", cast_inputs=cr.float32)
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x @ x
    ...     @staticmethod
    ...     @cr.amp.custom_bwd(device_type="cpu")
    ...     def backward(ctx, g):
    ...         x, = ctx.saved_tensors
    ...         return g @ x.T + x.T @ g
    >>> with cr.autocast("cpu"):
    ...     y = Square.apply(cr.ones(2, 2, dtype=cr.bfloat16))
    >>> y.dtype
    chainrule.float32
    """
    _check_device_type_arg(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = _state.get_autocast_dtype(device_type)
        enabled = _state.is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = enabled and cast_inputs is None
        if cast_inputs is None or not enabled:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's ``backward``: it runs with the autocast state
    its ``forward`` (decorated with ``custom_fwd``) ran with. Example: ``custom_fwd``.

    >>> import chainrule as cr
    >>> callable(cr.amp.custom_bwd(lambda ctx, g: g, device_type="cpu"))
    True
    """
    _check_device_type_arg(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
