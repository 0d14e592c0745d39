"""Device-backend registry: upper layers (chainrule-cuda) register here; core never
imports them. Without a registered backend, asking for the device names the wheel.

Note [device backend]
    A backend (registered with ``register_backend(device_type, backend)``) is an object
    with
        is_available(), device_count(), synchronize(device)
        canonical(device)             the device with its index filled in ("cuda" ->
                                      "cuda:<current>"); raises for a bad index
        to_device_array(arr, device, non_blocking)   an ndarray or a device array copied
                                      onto ``device`` (the same array when it is there)
        array_type                    its device-array class (Note [device arrays])
        pin_memory(arr), is_pinned(arr)   page-locked host copies of ndarrays
        record_stream(arr, stream)    Tensor.record_stream: the allocation of a device
                                      array is not reused before ``stream``'s work ends
        random(kind, shape, dtype, device, arg0, arg1, generator)   counter-based samples
                                      on ``device``: kind uniform/normal/bernoulli/randint
                                      (Note [random numbers on a device] in _random.py)
    and registers its array type in ``_tensor.DEVICE_ARRAY_TYPES``.
"""
from ._meta import META, MetaBackend
from ._tensor import CPU, DEVICE_ARRAY_TYPES, device as _device, device_of

BACKENDS = {}


def register_backend(device_type, backend):
    """Register a backend object (Note [device backend]) for ``device_type``.

    >>> from chainrule import _backends
    >>> sorted(set(_backends.BACKENDS) - {"cuda"})     # core's own: meta (Note [meta arrays])
    ['meta']
    """
    BACKENDS[device_type] = backend
    array_type = getattr(backend, "array_type", None)
    if array_type is not None:
        DEVICE_ARRAY_TYPES.add(array_type)


def find_backend(device_type):
    """The registered backend, importing the chainrule-cuda layer (which registers
    itself) on first need; None when it is not installed."""
    if device_type not in BACKENDS:
        try:
            __import__("chainrule_cuda")
        except ImportError:
            return None
    return BACKENDS.get(device_type)


def require_backend(device_type):
    backend = find_backend(device_type)
    if backend is None:
        raise RuntimeError(f"{device_type} support is not installed: install the "
                           f"chainrule-{device_type} wheel (import chainrule_{device_type})")
    return backend


def canonical_device(device):
    """``device`` as a chainrule.device with its index (CPU has none), checking that
    its backend is installed."""
    d = _device(device) if not isinstance(device, _device) else device
    if d.type == "cpu":
        return CPU
    if d.type == "meta":
        return META
    return require_backend(d.type).canonical(d)


def move_array(arr, device, non_blocking=False):
    """``arr`` (an ndarray or a device array) on ``device``: the array itself when it is
    there already, else a copy (Note [device arrays])."""
    target = canonical_device(device)
    if device_of(arr) == target:
        return arr
    if target.type == "cpu":
        return arr.get()
    return BACKENDS[target.type].to_device_array(arr, target, non_blocking)


def to_device(tensor, device, non_blocking=False):
    """``tensor`` moved to ``device`` (differentiable: records ToCopyBackward0); itself
    when it is there already."""
    target = canonical_device(device)
    if tensor.device == target:
        return tensor
    from ._ops.conversions import transfer
    return transfer(tensor, target, non_blocking)


register_backend("meta", MetaBackend())
