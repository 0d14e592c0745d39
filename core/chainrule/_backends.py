"""Device-backend registry: upper layers (chainrule-cuda) register here; core never
imports them. Without a registered backend, asking for the device names the wheel."""

BACKENDS = {}


def register_backend(device_type, backend):
    """Register a backend object with ``to_device(tensor, device)`` and ``is_available()``."""
    BACKENDS[device_type] = backend


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


def to_device(tensor, device):
    from ._tensor import device as _device
    d = _device(device)
    if d.type == "cpu":
        return tensor
    return require_backend(d.type).to_device(tensor, d)
