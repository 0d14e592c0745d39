"""``chainrule.autograd``: reverse-mode automatic differentiation.

>>> import chainrule as cr
>>> x = cr.tensor(2.0, requires_grad=True)
>>> cr.autograd.grad(x ** 3, x)[0].item()
12.0
"""
from .._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .backward import backward, grad  # noqa: F401
from . import function, graph, grad_mode  # noqa: F401
from .grad_mode import (_force_original_view_tracking, enforce_grad_layout_policy,  # noqa: F401
                        is_multithreading_enabled, is_view_replay_enabled,
                        set_multithreading_enabled)
from .function import Function, NestedIOFunction  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .saved_tensor import RawSavedTensor as SavedTensor  # noqa: F401  (grad_fn._raw_saved_*)

# torch.autograd re-exports these profiler names; they come from the profiler layer
_PROFILER_NAMES = {"ProfilerActivity": ("profiler", "ProfilerActivity"),
                   "kineto_available": (None, "kineto_available"),
                   "_supported_activities": ("profiler", "supported_activities")}


def __getattr__(name):
    """``chainrule.autograd.functional`` / ``forward_ad`` / ``profiler`` / ``Variable``
    and the profiler names (``ProfilerActivity``, ``kineto_available``): loaded from
    their layer on first use (an ImportError names the wheel to install)."""
    import importlib
    if name in ("functional", "forward_ad", "profiler"):
        return importlib.import_module(f"{__name__}.{name}")
    if name == "Variable":
        return importlib.import_module(f"{__name__}.variable").Variable
    if name in _PROFILER_NAMES:        # the ones the profiler layer provides
        from ._layers import load_layer
        module, attribute = _PROFILER_NAMES[name]
        return getattr(load_layer("profiler", module, f"{__name__}.{name}"), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
