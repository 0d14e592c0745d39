"""chainrule: automatic differentiation with torch.autograd's API, on NumPy arrays.

>>> import chainrule as cr
>>> x = cr.tensor([1.0, 2.0], requires_grad=True)
>>> (x.exp() * x).sum().backward()
>>> [round(v, 4) for v in x.grad.tolist()]
[5.4366, 22.1672]
"""
from ._dtypes import (bfloat16, bool_ as bool, cdouble, cfloat, complex64, complex128,  # noqa
                      double, dtype, float, float16, float32, float64, get_default_dtype,
                      half, int, int8, int16, int32, int64, long, promote_types,
                      set_default_dtype, short, uint8)
from ._grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                         is_inference_mode_enabled, no_grad, set_grad_enabled)
from ._size import Size  # noqa: F401
from ._tensor import Tensor, device  # noqa: F401
from ._factories import (arange, as_tensor, empty, empty_like, eye, from_numpy, full,  # noqa
                         full_like, linspace, manual_seed, ones, ones_like, rand, rand_like,
                         randint, randn, randn_like, tensor, zeros, zeros_like)
from . import _ops
from ._ops import FUNCTIONS as _FUNCTIONS
from . import autograd  # noqa: F401
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled,  # noqa: F401
                                    is_anomaly_enabled)
from . import nn  # noqa: F401
from . import cuda  # noqa: F401
from ._vmap import vmap  # noqa: F401

globals().update({k: v for k, v in _FUNCTIONS.items() if not k.startswith("_")
                  and k not in ("sum_to",)})

__version__ = "0.1.0"


def is_tensor(obj):
    """True for chainrule tensors.

    >>> import chainrule as cr
    >>> cr.is_tensor(cr.ones(1))
    True
    """
    return isinstance(obj, Tensor)


def __getattr__(name):
    """``chainrule.func`` is loaded from the functional layer on first use (an
    ImportError names the wheel to install)."""
    if name == "func":
        import importlib
        return importlib.import_module("chainrule.func")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
