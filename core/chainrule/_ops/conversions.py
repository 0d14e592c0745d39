"""Tensor.to and the dtype shorthands (float(), double(), ...). Casts are recorded
(ToCopyBackward0) so gradients flow back in the source dtype."""
from .. import _dtypes
from .._tensor import Tensor, device as _device
from ._common import method
from .elementwise import CLONE, to_dtype
from ._registry import apply_op


def _parse_to_args(args, kwargs):
    dtype, dev = kwargs.pop("dtype", None), kwargs.pop("device", None)
    for arg in args:
        if isinstance(arg, Tensor):
            dtype, dev = arg.dtype, arg.device
        elif isinstance(arg, (str, _device)):
            dev = arg
        elif arg is not None:
            dtype = arg
    return dtype, dev, kwargs.pop("copy", False)


@method("to")
def to(self, *args, **kwargs):
    """Cast to a dtype and/or move to a device: ``to(dtype)``, ``to(device)``,
    ``to(device, dtype)``, ``to(other)``; returns self when nothing changes.

    >>> import chainrule as cr
    >>> cr.ones(2).to(cr.float64).dtype
    chainrule.float64
    """
    dtype, dev, copy = _parse_to_args(args, dict(kwargs))
    out = self
    if dtype is not None:
        out = to_dtype(out, _dtypes.to_dtype(dtype))
    if dev is not None and _device(dev).type != "cpu":
        from .._backends import to_device
        return to_device(out, dev)
    if copy and out is self:
        out = apply_op(CLONE, (self,), {})
    return out


@method("type")
def type_(self, dtype=None, non_blocking=False):
    """Without arguments, the type name (``'chainrule.FloatTensor'``); with a dtype, a cast.

    >>> import chainrule as cr
    >>> cr.ones(1).type()
    'chainrule.FloatTensor'
    """
    if dtype is None:
        return "chainrule." + _dtypes.scalar_type_name(self._data.dtype) + "Tensor"
    return to_dtype(self, _dtypes.to_dtype(dtype))


def _shorthand(name, dtype):
    def cast(self, memory_format=None):
        return to_dtype(self, dtype)
    cast.__name__ = name
    cast.__doc__ = f"Cast to {dtype!r} (recorded for autograd)."
    setattr(Tensor, name, cast)


for _name, _dt in [("float", _dtypes.float32), ("double", _dtypes.float64),
                   ("half", _dtypes.float16), ("bfloat16", _dtypes.bfloat16),
                   ("int", _dtypes.int32), ("long", _dtypes.int64), ("short", _dtypes.int16),
                   ("char", _dtypes.int8), ("byte", _dtypes.uint8), ("bool", _dtypes.bool_),
                   ("cfloat", _dtypes.complex64), ("cdouble", _dtypes.complex128)]:
    _shorthand(_name, _dt)
