"""DataParallel and data_parallel (see the package docstring)."""
from ... import cuda as _cuda
from ..._tensor import device as _device
from ..modules.module import Module


def _device_index(device):
    return device if isinstance(device, int) else (_device(device).index or 0)


def _to(value, device):
    """``value`` (a tensor, or a tuple/list/dict of them) moved to ``device``."""
    if hasattr(value, "to") and hasattr(value, "shape"):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(_to(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    return value


def _check_on(module, device):
    for t in list(module.parameters()) + list(module.buffers()):
        if t.device != device:
            raise RuntimeError(f"module must have its parameters and buffers on device "
                               f"{device} (device_ids[0]) but found one of them on device: "
                               f"{t.device}")


class DataParallel(Module):
    """Runs ``module`` on the batch. Without an accelerator (torch's CPU case) it is
    a plain wrapper with ``device_ids == []``; with one, the module moves to
    ``device_ids[0]`` and inputs are moved there (one device: nothing to split).

    >>> import chainrule as cr
    >>> net = cr.nn.DataParallel(cr.nn.Linear(2, 3))
    >>> net(cr.ones(4, 2)).shape, list(net.state_dict())
    (chainrule.Size([4, 3]), ['module.weight', 'module.bias'])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not _cuda.is_available():
            self.module, self.device_ids = module, []
            return
        if device_ids is None:
            device_ids = list(range(_cuda.device_count()))
        self.dim, self.module = dim, module
        self.device_ids = [_device_index(d) for d in device_ids]
        self.output_device = _device_index(device_ids[0] if output_device is None
                                           else output_device)
        self.src_device_obj = _device("cuda", self.device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on(self.module, self.src_device_obj)
        out = self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))
        return _to(out, _device("cuda", self.output_device))


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """``module(*inputs, **module_kwargs)`` on ``device_ids[0]`` (torch's functional
    DataParallel). Like torch's, it needs an accelerator: without one it raises.

    >>> import chainrule as cr
    >>> try:
    ...     cr.nn.parallel.data_parallel(cr.nn.Linear(2, 3), cr.ones(1, 2))
    ... except RuntimeError as e:
    ...     print(e)
    device type could not be determined
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not _cuda.is_available():
        raise RuntimeError("device type could not be determined")
    device_ids = list(range(_cuda.device_count())) if device_ids is None else device_ids
    source = _device("cuda", _device_index(device_ids[0]))
    output = source if output_device is None else \
        _device("cuda", _device_index(output_device))
    _check_on(module, source)
    out = module(*_to(inputs, source), **_to(module_kwargs or {}, source))
    return _to(out, output)
