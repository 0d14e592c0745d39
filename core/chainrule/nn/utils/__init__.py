"""``nn.utils``: gradient clipping, parameter/vector conversion, stateless calls and
variable-length sequences (``rnn``)."""
from . import parametrizations, parametrize, prune, rnn, stateless  # noqa: F401
from .hooked_norms import (remove_spectral_norm, remove_weight_norm, spectral_norm,  # noqa: F401
                           weight_norm)
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,  # noqa: F401
                        clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401


def skip_init(module_cls, *args, **kwargs):
    """An instance of ``module_cls`` whose parameters and buffers are allocated but not
    initialised (made on the meta device, then given empty memory on ``device``).

    >>> import chainrule as cr
    >>> layer = cr.nn.utils.skip_init(cr.nn.Linear, 3, 2)
    >>> layer.weight.shape, layer.weight.device
    (chainrule.Size([2, 3]), device(type='cpu'))
    """
    import inspect
    from ..modules.module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
from . import fusion  # noqa: F401,E402
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,  # noqa: F401,E402
                     fuse_linear_bn_weights)
from .memory_format import (convert_conv2d_weight_memory_format,  # noqa: F401,E402
                            convert_conv3d_weight_memory_format)
