"""``chainrule.amp``: automatic mixed precision, as ``torch.amp``: ``autocast`` regions
run matmuls and convolutions in bfloat16 (CPU) or float16 (CUDA) and the ops that need
range in float32; ``GradScaler`` scales the loss so small gradients survive, and skips
the steps whose gradients overflowed. Note [autocast dispatch] in ``_policy.py``.

>>> import chainrule as cr
>>> with cr.amp.autocast("cpu"):
...     print(cr.nn.Linear(3, 2)(cr.ones(1, 3)).dtype)
chainrule.bfloat16
"""
from . import _policy  # noqa: F401  (registers the dispatcher hooks)
from . import autocast_mode, grad_scaler  # noqa: F401
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler", "is_autocast_available"]

# The autocast functions the reference has at top level (torch.is_autocast_enabled, ...).
TOP_LEVEL = ("is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
             "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
             "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting")


def _install(namespace):
    """Publish autocast in ``chainrule`` (its namespace, once every function is there):
    ``chainrule.autocast`` and the state functions, the listed composites wrapped
    (Note [autocast dispatch]), and ``chainrule.cuda.amp``."""
    import sys
    from . import _composites, _cuda_amp, _state
    namespace["autocast"] = autocast
    namespace.update({name: getattr(_state, name) for name in TOP_LEVEL})
    namespace.update(_state.DEPRECATED)
    _composites.install()
    namespace["cuda"].amp = _cuda_amp
    sys.modules[namespace["cuda"].__name__ + ".amp"] = _cuda_amp
