"""``chainrule.func``: provided by the functional layer (see autograd/_layers.py).

Importing it without that layer's wheel raises an ImportError naming the wheel.
"""
from .autograd._layers import load_layer as _load

globals().update({k: v for k, v in vars(_load("func")).items() if not k.startswith("__")})
