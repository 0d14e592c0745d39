"""``chainrule.func``: the composable function transforms (grad, vjp, jvp, jacrev,
jacfwd, hessian, vmap), provided by the functional layer (see autograd/_layers.py).

Importing it without that layer's wheel raises an ImportError naming the wheel.
"""
from .autograd._layers import load_layer as _load, public_names as _public_names

globals().update(_public_names(_load("functional", "func", "chainrule.func")))
