"""chainrule-cuda: ``device="cuda"`` for chainrule (import ``chainrule_cuda``).

Importing it registers the layer with core; users call ``chainrule.cuda``, which
forwards here (``chainrule_cuda.runtime``: devices, streams, events, memory).

>>> import chainrule_cuda
>>> isinstance(chainrule_cuda.runtime.is_available(), bool)
True
"""
from . import runtime  # noqa: F401
