"""chainrule: automatic differentiation with torch.autograd's API, on NumPy arrays.

>>> import chainrule as cr
>>> x = cr.tensor([1.0, 2.0], requires_grad=True)
>>> (x.exp() * x).sum().backward()
>>> [round(v, 4) for v in x.grad.tolist()]
[5.4366, 22.1672]
"""
import warnings as _warnings

# Note [silent floating-point errors]
#     The reference computes nan and inf silently (log(-1), 1/0, exp(1000)); NumPy warns
#     ("RuntimeWarning: invalid value encountered in log") from the frame that called
#     the ufunc. This filter silences exactly those warnings when the frame is
#     chainrule's or a layer's (chainrule_engine, chainrule_forward_ad, ...): a user's
#     own NumPy calls still warn, and no op pays anything unless a warning is raised.
def _silence_floating_point_warnings():
    _warnings.filterwarnings(
        "ignore", message=r"(invalid value|divide by zero|overflow|underflow) encountered",
        category=RuntimeWarning, module=r"chainrule(_[a-z_]+)?(\.|$)")


_silence_floating_point_warnings()

from ._dtypes import (bfloat16, bool_ as bool, cdouble, cfloat, complex64, complex128,  # noqa
                      double, dtype, float, float16, float32, float64, get_default_dtype,
                      half, int, int8, int16, int32, int64, long, promote_types,
                      set_default_dtype, short, uint8)
from ._dtypes import uint16, uint32, uint64  # noqa: F401
from ._grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                         is_inference_mode_enabled, no_grad, set_grad_enabled)
from ._size import Size  # noqa: F401
from ._tensor import Tensor, device  # noqa: F401
from ._factories import (arange, as_tensor, empty, empty_like, eye, from_numpy, full,  # noqa
                         full_like, get_default_device, linspace, ones, ones_like, rand,
                         rand_like, randint, randn, randn_like, set_default_device, tensor,
                         zeros, zeros_like)
from ._random import (Generator, default_generator, get_rng_state, initial_seed,  # noqa
                      manual_seed, seed, set_rng_state)
from ._new_methods import empty_strided  # noqa: F401  (and the Tensor.new_* methods)
from ._config import *  # noqa: F401,F403  (finfo, iinfo, threads, determinism, compile)
from ._layout import *  # noqa: F401,F403  (strided, contiguous_format, ...)
from ._printing import set_printoptions  # noqa: F401
from . import _ops
from ._ops import FUNCTIONS as _FUNCTIONS
from ._ops._common import numpy_spellings as _numpy_spellings
from ._sequences import *  # noqa: F401,F403  (tril_indices, logspace, windows, ...)
from . import autograd  # noqa: F401
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled,  # noqa: F401
                                    is_anomaly_enabled)
from . import nn  # noqa: F401
from . import optim  # noqa: F401
from . import utils  # noqa: F401
from . import linalg  # noqa: F401
from . import cuda  # noqa: F401
from .cuda import OutOfMemoryError  # noqa: F401  (torch.OutOfMemoryError)
from . import special  # noqa: F401
from . import fft  # noqa: F401
from . import testing  # noqa: F401
from . import distributions  # noqa: F401
from . import backends, random  # noqa: F401
from ._vmap import vmap  # noqa: F401
from . import serialization  # noqa: F401
from .serialization import load, save  # noqa: F401

globals().update({k: v for k, v in _FUNCTIONS.items() if not k.startswith("_")
                  and k != "sum_to" and v is not _ops._common.NOT_EXPORTED.get(k)})
globals().update({name: _numpy_spellings(fn)     # cr.conv2d, cr.dropout, cr.layer_norm, ...
                 for name, fn in nn.functional.TOP_LEVEL.items()})
globals().update(_random.FUNCTIONS)            # cr.randperm, cr.normal, cr.bernoulli, ...
globals().update(_ops.foreach.FOREACH)          # cr._foreach_mul_, ...
globals().update(_ops.torch_surface.CONSTANTS)   # cr.e, cr.pi, cr.inf, cr.nan, cr.newaxis

__version__ = "0.1.0"


def is_tensor(obj):
    """True for chainrule tensors.

    >>> import chainrule as cr
    >>> cr.is_tensor(cr.ones(1))
    True
    """
    return isinstance(obj, Tensor)


def __getattr__(name):
    """``chainrule.profiler`` and ``chainrule.func``: loaded from their layers on first
    use (an ImportError names the wheel to install), like ``chainrule.autograd.profiler``."""
    if name in ("profiler", "func"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    from ._legacy_slots import LEGACY_MODULE_ATTRIBUTES   # Note [legacy attribute slot]
    if name in LEGACY_MODULE_ATTRIBUTES:
        return LEGACY_MODULE_ATTRIBUTES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

from . import amp, cpu  # noqa: E402  (last: amp wraps the composites published above)
amp._install(globals())

from . import overrides, _C  # noqa: E402,F401
from . import _torch_function  # noqa: E402


def _install_torch_function():
    """Note [torch function slot]: every public function, Tensor method and property
    becomes a dispatching wrapper (last: after every layer of wrapping above)."""
    import sys
    from .nn import functional as _functional
    from ._ops._out import out_form, special_out_form
    _torch_function.install_functions(sys.modules[__name__], out_forms=out_form)
    for module in (linalg, fft):
        _torch_function.install_functions(module, prefix=module.__name__[10:] + "_")
    _torch_function.install_functions(special, prefix="special_", out_forms=special_out_form)
    _torch_function.install_functions(_functional, plain_tensor=True, c_level=False)
    _torch_function.install_functions(autograd, plain_tensor=True, c_level=False,
                                      names=("backward", "grad"))
    _torch_function.install_tensor(Tensor)


_install_torch_function()
