"""chainrule_profiler: the profiler layer (wheel chainrule-profiler).

``chainrule.autograd.profiler`` is this package (profile, record_function,
emit_nvtx, emit_itt, load_nvprof and the event classes); ``chainrule.profiler`` is
its module ``chainrule_profiler.profiler`` (profile with activities and schedules).
Core is observed through its dispatch and node observer slots, never patched (Note
[profiler observation] in _state.py).

>>> import chainrule as cr
>>> from chainrule.autograd import profiler
>>> x = cr.ones(2, 2, requires_grad=True)
>>> with profiler.profile() as prof:
...     (x * x).sum().backward()
>>> [e.name for e in prof.function_events if e.cpu_parent is None][:2]
['aten::mul', 'aten::sum']
>>> [e.name for e in prof.function_events if e.kind == "backward"]
['SumBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad']
"""
from ._nvprof import load_nvprof, parse_nvprof_trace
from .annotate import emit_itt, emit_nvtx
from .events import EventList, FunctionEvent, FunctionEventAvg, Interval
from .profile import profile, record_function

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "load_nvprof",
           "parse_nvprof_trace", "EventList", "FunctionEvent", "FunctionEventAvg",
           "Interval", "kineto_available"]
__version__ = "0.1.0"


def kineto_available():
    """Whether the Kineto library is there: never (chainrule records CPU events)."""
    return False
