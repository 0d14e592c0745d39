"""``chainrule.autograd.functional``: provided by the functional layer (see _layers.py).

Importing it without that layer's wheel raises an ImportError naming the wheel.
"""
from ._layers import load_layer as _load

globals().update({k: v for k, v in vars(_load("functional")).items() if not k.startswith("__")})
