"""Samples for the special-function ops (``_ops/special_functions.py``).

Each call goes through ``special.<name>`` of whichever library made its input, so the
same lambda serves the parity tier. The incomplete gamma functions and zeta are
differentiable in their second argument only (the first is a fixed tensor here; the
NOT_IMPLEMENTED test makes it require grad to reach the marker).
"""
import numpy as np

import chainrule as cr

from . import Sample

SHAPES = ((3, 4), (), (0, 2))


def _special(t):
    if isinstance(t, cr.Tensor):
        return cr.special
    import torch
    return torch.special


def _unary(op, name, domain, shapes=SHAPES):
    return [Sample(op, lambda a: getattr(_special(a), name)(a), s, domain=domain) for s in shapes]


_SHAPE_A = np.array([[0.6, 1.5, 3.0, 7.5]])


def _shape_first(name):
    """``special.<name>(a, x)`` with a fixed first argument broadcast against x."""
    return lambda a, x: getattr(_special(x), name)(a, x)


SAMPLES = [
    *_unary("i0", "i0", (-3.0, 3.0)),
    Sample("i0", lambda a: a.i0(), (4,), domain=(-3.0, 3.0), note="-method"),
    *_unary("special_i0e", "i0e", (-3.0, 3.0)),
    *_unary("special_i1", "i1", (-3.0, 3.0)),
    *_unary("special_i1e", "i1e", (-3.0, 3.0)),
    *_unary("special_erfcx", "erfcx", (-2.0, 6.0)),
    *_unary("special_log_ndtr", "log_ndtr", (-6.0, 3.0)),
    Sample("igamma", _shape_first("gammainc"), cr.tensor(_SHAPE_A), (3, 4), domain=(0.3, 6.0)),
    Sample("igamma", lambda a, x: a.igamma(x), cr.tensor(np.array([2.5])), (5,), domain=(0.3, 6.0),
           note="-method"),
    Sample("igammac", _shape_first("gammaincc"), cr.tensor(_SHAPE_A), (3, 4),
           domain=(0.3, 6.0)),
    Sample("special_zeta", _shape_first("zeta"), cr.tensor([[2.0, 2.5, 3.5, 6.0]]), (3, 4),
           domain=(0.3, 4.0)),
]
