"""``chainrule.profiler``: the newer profiler API (``profile`` with activities and
schedules, ``ProfilerActivity``, ``schedule``, ``tensorboard_trace_handler``),
provided by the profiler layer (see autograd/_layers.py).

Importing it without that layer's wheel raises an ImportError naming the wheel.
"""
from .autograd._layers import load_layer as _load

_layer = _load("profiler", "profiler", "chainrule.profiler")
globals().update({k: v for k, v in vars(_layer).items() if not k.startswith("__")})
