"""``chainrule.cuda.amp``: the deprecated spellings of ``chainrule.amp.autocast("cuda")``,
``chainrule.amp.GradScaler("cuda")``, ``custom_fwd`` and ``custom_bwd`` with
``device_type="cuda"`` (each warns with a FutureWarning). Without a GPU, autocast and
the scaler switch themselves off, with the reference's warnings.

>>> import warnings, chainrule as cr
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     scaler = cr.cuda.amp.GradScaler()
>>> caught[0].category.__name__
'FutureWarning'
>>> scaler.is_enabled() == cr.cuda.is_available()
True
"""
from .. import _dtypes
from . import autocast_mode
from ._device_amp import autocast_class, grad_scaler_class, warn_deprecated

autocast = autocast_class("cuda", _dtypes.float16)
GradScaler = grad_scaler_class("cuda")


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated: ``chainrule.amp.custom_fwd(..., device_type="cuda")``.

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     callable(cr.cuda.amp.custom_fwd(lambda ctx, x: x))
    True
    """
    warn_deprecated("cuda.amp.custom_fwd(args...)",
                    "amp.custom_fwd(args..., device_type='cuda')")
    return autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Deprecated: ``chainrule.amp.custom_bwd(..., device_type="cuda")``.

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     callable(cr.cuda.amp.custom_bwd(lambda ctx, g: g))
    True
    """
    warn_deprecated("cuda.amp.custom_bwd(args...)",
                    "amp.custom_bwd(args..., device_type='cuda')")
    return autocast_mode.custom_bwd(bwd, device_type="cuda")
