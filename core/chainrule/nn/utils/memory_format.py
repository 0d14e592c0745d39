"""``nn.utils.convert_conv{2,3}d_weight_memory_format``: chainrule keeps every tensor in
row-major order, so the conversion changes no values or layout; it validates ``memory_format`` against the weight's rank as the
reference's ``resize_`` does, and returns the module."""
from ... import _layout
from ..modules import conv as _conv

_RANK = {"channels_last": 4, "channels_last_3d": 5}


def _check_format(weight, memory_format):
    if not isinstance(memory_format, _layout.memory_format):
        raise TypeError("clone(): argument 'memory_format' must be torch.memory_format, "
                        f"not {type(memory_format).__name__}")
    if memory_format is _layout.preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    name = str(memory_format).rsplit(".", 1)[-1]
    rank = _RANK.get(name)
    if rank is not None and weight.dim() != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        _check_format(module.weight, memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Put the weights of ``module``'s ``Conv2d``/``ConvTranspose2d`` layers (itself
    and nested) in ``memory_format``; returns ``module``.

    >>> import chainrule as cr
    >>> model = cr.nn.Sequential(cr.nn.Conv2d(3, 4, 3), cr.nn.ReLU())
    >>> model = cr.nn.utils.convert_conv2d_weight_memory_format(model, cr.channels_last)
    >>> model[0].weight.is_contiguous(memory_format=cr.channels_last)
    True
    """
    return _convert(module, memory_format, (_conv.Conv2d, _conv.ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Put the weights of ``module``'s ``Conv3d``/``ConvTranspose3d`` layers (itself
    and nested) in ``memory_format``; returns ``module``.

    >>> import chainrule as cr
    >>> conv = cr.nn.utils.convert_conv3d_weight_memory_format(cr.nn.Conv3d(1, 2, 2),
    ...                                                        cr.channels_last_3d)
    >>> conv.weight.shape
    chainrule.Size([2, 1, 2, 2, 2])
    """
    return _convert(module, memory_format, (_conv.Conv3d, _conv.ConvTranspose3d))
