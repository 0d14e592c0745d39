"""``chainrule.autograd.variable``: ``Variable`` comes with the compat layer
(chainrule-compat); importing this without it raises an ImportError naming the wheel.
"""
from ._layers import load_layer as _load

Variable = _load("variable").Variable
