"""``chainrule.backends``: the switches programs set for the reference's compute
libraries (``backends.cudnn.benchmark = True``, ``backends.cuda.matmul.allow_tf32``)
and what is available. chainrule runs on NumPy (and, with chainrule-cuda, its own
kernels), so these are recorded settings; ``is_available()`` answers for chainrule.

>>> import chainrule as cr
>>> cr.backends.cudnn.benchmark = True
>>> cr.backends.cudnn.benchmark, cr.backends.mps.is_available()
(True, False)
>>> cr.backends.cudnn.benchmark = False
"""
import contextlib
import types

cudnn = types.ModuleType("chainrule.backends.cudnn",
                         "cuDNN switches (recorded; chainrule has no cuDNN).")
cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32 = True, False, False, True
cudnn.benchmark_limit = 10
cudnn.is_available = lambda: False
cudnn.version = lambda: None


@contextlib.contextmanager
def _cudnn_flags(enabled=False, benchmark=False, deterministic=False, allow_tf32=True,
                 benchmark_limit=10):
    names = ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit")
    saved = {n: getattr(cudnn, n) for n in names}
    for n, v in zip(names, (enabled, benchmark, deterministic, allow_tf32, benchmark_limit)):
        setattr(cudnn, n, v)
    try:
        yield
    finally:
        for n, v in saved.items():
            setattr(cudnn, n, v)


cudnn.flags = _cudnn_flags


def _cuda_is_built():
    from .._backends import find_backend
    return find_backend("cuda") is not None


cuda = types.ModuleType("chainrule.backends.cuda", "CUDA matmul switches (recorded).")
cuda.matmul = types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                    allow_bf16_reduced_precision_reduction=True)
cuda.is_built = _cuda_is_built
cuda.preferred_linalg_library = lambda backend=None: None


def _unavailable(name):
    module = types.ModuleType(f"chainrule.backends.{name}",
                              f"{name}: not used by chainrule (is_available() is False).")
    module.is_available = lambda: False
    module.is_built = lambda: False
    return module


mps, mkldnn, mkl, openmp = (_unavailable(n) for n in ("mps", "mkldnn", "mkl", "openmp"))
__all__ = ["cudnn", "cuda", "mps", "mkldnn", "mkl", "openmp"]
