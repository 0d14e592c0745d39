"""``chainrule.autograd.forward_ad``: provided by the forward_ad layer (see _layers.py).

Importing it without that layer's wheel raises an ImportError naming the wheel.
"""
from ._layers import load_layer as _load, public_names as _public_names

globals().update(_public_names(_load("forward_ad")))
