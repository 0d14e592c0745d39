"""``chainrule.autograd.forward_ad``: provided by the forward_ad layer (see _layers.py).

Importing it without that layer's wheel raises an ImportError naming the wheel.
"""
from ._layers import load_layer as _load

globals().update({k: v for k, v in vars(_load("forward_ad")).items() if not k.startswith("__")})
