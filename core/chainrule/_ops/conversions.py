"""Tensor.to, .cpu(), .cuda() and the dtype shorthands (float(), double(), ...).
Casts and device transfers are recorded (ToCopyBackward0) so gradients flow back in
the source dtype, to the source device."""
import numpy as np

from .. import _dtypes
from .._backends import BACKENDS, canonical_device, move_array, require_backend
from .._tensor import CPU, Tensor, device as _device
from ._common import formula_helper, method
from ._namespaces import array_fn
from .elementwise import CLONE, TO, to_dtype
from ._registry import apply_op

array_fn("to_device")(move_array)


@formula_helper
def to_device(x, device):
    """The TENSOR_NS twin of ARRAY_NS.to_device: a differentiable transfer."""
    return x.to(device)


def transfer(t, device, non_blocking=False):
    """``t`` copied onto ``device`` (a canonical chainrule.device), recorded as
    ToCopyBackward0 so its gradient goes back to ``t``'s device."""
    return apply_op(TO, (t,), {"dtype": None, "device": device, "source": t.device})


def _is_device_arg(arg):
    return isinstance(arg, (str, _device)) or (isinstance(arg, int) and not isinstance(arg, bool))


def _as_device(arg):
    return _device("cuda", arg) if isinstance(arg, int) else arg


_TO_FORMS = {"other": ("non_blocking", "copy"), "device": ("dtype", "non_blocking", "copy"),
             "dtype": ("non_blocking", "copy")}


def _parse_to_args(args, kwargs):
    """(dtype, device, non_blocking, copy) from the reference's three forms:
    ``to(dtype, non_blocking, copy)``, ``to(device, dtype, non_blocking, copy)`` and
    ``to(other, non_blocking, copy)`` (each with keywords, and memory_format)."""
    values = dict(kwargs)
    values.pop("memory_format", None)
    args = list(args)
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        values.setdefault("dtype", other.dtype)
        values.setdefault("device", other.device)
        form = "other"
    elif args and (args[0] is None or _is_device_arg(args[0])):
        values["device"] = args.pop(0)
        form = "device"
    elif args:
        values["dtype"] = args.pop(0)
        form = "dtype"
    else:
        form = "device"
    names = _TO_FORMS[form]
    if len(args) > len(names):
        raise TypeError(f"to() takes at most {len(names) + 1} positional arguments")
    for name, value in zip(names, args):
        if name in values:
            raise TypeError(f"to() got multiple values for argument '{name}'")
        values[name] = value
    unknown = set(values) - {"dtype", "device", "non_blocking", "copy"}
    if unknown:
        raise TypeError(f"to() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    dev = values.get("device")
    return (values.get("dtype"), None if dev is None else _as_device(dev),
            bool(values.get("non_blocking", False)), bool(values.get("copy", False)))


@method("to")
def to(self, *args, **kwargs):
    """Cast to a dtype and/or move to a device: ``to(dtype, non_blocking=False,
    copy=False)``, ``to(device=None, dtype=None, non_blocking=False, copy=False)``,
    ``to(other, non_blocking=False, copy=False)``; returns self when nothing changes
    (unless ``copy=True``). Both the cast and the move are differentiable.

    >>> import chainrule as cr
    >>> cr.ones(2).to(cr.float64).dtype
    chainrule.float64
    >>> cr.ones(2).to("cpu", cr.float64, copy=True).dtype
    chainrule.float64
    """
    dtype, dev, non_blocking, copy = _parse_to_args(args, kwargs)
    out = self
    if dtype is not None:
        out = to_dtype(out, _dtypes.to_dtype(dtype))
    if dev is not None:
        target = canonical_device(dev)
        if out.device != target:
            return transfer(out, target, non_blocking)
    if copy and out is self:
        out = apply_op(CLONE, (self,), {})
    return out


@method("cpu")
def cpu(self, memory_format=None):
    """This tensor in CPU memory (itself when it is there; differentiable).

    >>> import chainrule as cr
    >>> x = cr.ones(2); x.cpu() is x
    True
    """
    return self if type(self._data) is np.ndarray else transfer(self, CPU)


@method("cuda")
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """This tensor on a CUDA device (the current one by default; needs the
    chainrule-cuda layer; differentiable).

    >>> import chainrule as cr
    >>> try:
    ...     y = cr.ones(2).cuda()
    ... except RuntimeError as e:     # core alone: the layer is not installed
    ...     y = None
    """
    target = canonical_device(_as_device(device) if device is not None else "cuda")
    if target.type != "cuda":
        raise RuntimeError(f"Invalid device, must be cuda device")
    return self if self.device == target else transfer(self, target, non_blocking)


@method("pin_memory")
def pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked (pinned) host memory, which the GPU
    copies from asynchronously (needs the chainrule-cuda layer).

    >>> import chainrule as cr
    >>> cr.ones(2).is_pinned()
    False
    """
    if type(self._data) is not np.ndarray:
        raise RuntimeError(f"cannot pin '{self.device.type}' memory: only dense CPU "
                           "tensors can be pinned")
    backend = BACKENDS.get("cuda") or require_backend("cuda")
    if backend.is_pinned(self._data):
        return self
    out = apply_op(CLONE, (self,), {})        # recorded like the reference's copy
    out._data = backend.pin_memory(self._data)
    return out


@method("is_pinned")
def is_pinned(self, device=None):
    """Whether this tensor lives in pinned host memory (``pin_memory()``)."""
    if type(self._data) is not np.ndarray:
        return False
    backend = BACKENDS.get("cuda")
    return bool(backend is not None and backend.is_pinned(self._data))


@method("record_stream")
def record_stream(self, stream):
    """Mark this device tensor as used by ``stream``: when it is freed, its memory is
    not handed out again until the work queued on ``stream`` by then has finished (the
    caching allocator otherwise knows only the stream it was allocated on).

    >>> import chainrule as cr
    >>> try:
    ...     cr.ones(2).record_stream(None)
    ... except NotImplementedError as e:      # CPU tensors have no streams
    ...     print(str(e).split(" with")[0])
    Could not run 'aten::record_stream'
    """
    if type(self._data) is np.ndarray:
        raise NotImplementedError("Could not run 'aten::record_stream' with arguments from "
                                  "the 'CPU' backend.")
    require_backend(self.device.type).record_stream(self._data, stream)


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
