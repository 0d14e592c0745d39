"""``chainrule.autograd``: reverse-mode automatic differentiation.

>>> import chainrule as cr
>>> x = cr.tensor(2.0, requires_grad=True)
>>> cr.autograd.grad(x ** 3, x)[0].item()
12.0
"""
from .._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .backward import backward, grad  # noqa: F401
from . import function, graph  # noqa: F401
from .function import Function  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401


def __getattr__(name):
    """``chainrule.autograd.functional`` / ``forward_ad`` / ``profiler`` / ``Variable``:
    loaded from their layer on first use (an ImportError names the wheel to install)."""
    import importlib
    if name in ("functional", "forward_ad", "profiler"):
        return importlib.import_module(f"{__name__}.{name}")
    if name == "Variable":
        return importlib.import_module(f"{__name__}.variable").Variable
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
