"""``chainrule.autograd.functional``: provided by the functional layer (see _layers.py).

Importing it without that layer's wheel raises an ImportError naming the wheel.
"""
from ._layers import load_layer as _load, public_names as _public_names

globals().update(_public_names(_load("functional")))
