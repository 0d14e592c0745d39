"""The deprecated per-device spellings ``chainrule.cpu.amp`` and ``chainrule.cuda.amp``
(``autocast``, ``GradScaler``; CUDA's also ``custom_fwd``, ``custom_bwd``): each works as
the ``chainrule.amp`` one for its device, after a FutureWarning, like the reference's."""
import warnings

from . import autocast_mode, grad_scaler


def warn_deprecated(old, new):
    warnings.warn(f"`torch.{old}` is deprecated. Please use `torch.{new}` instead.",
                  FutureWarning, stacklevel=3)


def autocast_class(device_type, default_dtype):
    """The ``autocast`` of ``chainrule.<device_type>.amp``."""

    class autocast(autocast_mode.autocast):
        __doc__ = (f"Deprecated: ``chainrule.amp.autocast('{device_type}', ...)`` "
                   "(a FutureWarning says so).")

        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            warn_deprecated(f"{device_type}.amp.autocast(args...)",
                            f"amp.autocast('{device_type}', args...)")
            super().__init__(device_type, enabled=enabled, dtype=dtype,
                             cache_enabled=cache_enabled)

    autocast.__module__ = f"chainrule.{device_type}.amp"
    return autocast


def grad_scaler_class(device_type):
    """The ``GradScaler`` of ``chainrule.<device_type>.amp``."""

    class GradScaler(grad_scaler.GradScaler):
        __doc__ = (f"Deprecated: ``chainrule.amp.GradScaler('{device_type}', ...)`` "
                   "(a FutureWarning says so).")

        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            warn_deprecated(f"{device_type}.amp.GradScaler(args...)",
                            f"amp.GradScaler('{device_type}', args...)")
            super().__init__(device_type, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    GradScaler.__module__ = f"chainrule.{device_type}.amp"
    return GradScaler
