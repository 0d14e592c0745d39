"""``nn.parallel``: DataParallel and data_parallel on one device.

chainrule runs a module on one device, so these keep torch's behaviour where it has
no more than one: ``DataParallel`` wraps the module (``.module``, ``module.``-prefixed
state dict keys) and calls it; ``data_parallel`` needs an accelerator, as torch's."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401

__all__ = ["DataParallel", "data_parallel"]
