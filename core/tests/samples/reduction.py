"""Samples for the reduction family (sum, mean, prod, var, std, amax, amin, max, min,
logsumexp, softmax, log_softmax, norm, cumsum).

Calls use the Tensor methods, so the same lambda runs on torch tensors for parity.
Inputs that must hold exact zeros (prod) are given as float64 tensors that require
grad: they are differentiated like the random ones.
"""
import math

import chainrule as cr

from . import Sample

INF = math.inf


def _with_zeros(rows):
    return cr.tensor(rows, dtype=cr.float64, requires_grad=True)


def _reductions(op, method, shapes_dims, complex=True):
    """One sample per (shape, kwargs) for a reduction called as ``x.<method>(**kwargs)``."""
    out = []
    for shape, kwargs in shapes_dims:
        out.append(Sample(op, lambda x, k=kwargs: getattr(x, method)(**k), shape,
                          note=_note(kwargs)))
        if complex:
            out.append(Sample(op, lambda x, k=kwargs: getattr(x, method)(**k), shape,
                              complex=True, note=_note(kwargs) + "complex"))
    return out


def _note(kwargs):
    return "".join(f"{k}={v}" for k, v in kwargs.items())


_FULL = [((3, 4), {}), ((), {}), ((0, 3), {}), ((2, 1, 3), {})]
_BY_DIM = [((3, 4), {"dim": 1}), ((2, 3, 4), {"dim": (0, 2), "keepdim": True}),
           ((5,), {"dim": -1}), ((2, 1, 3), {"dim": 1}), ((0, 3), {"dim": 0}),
           ((3, 4), {"dim": ()}), ((), {"dim": 0})]

SAMPLES = (
    _reductions("sum", "sum", _FULL)
    + _reductions("sum_dim", "sum", _BY_DIM)
    + _reductions("mean", "mean", [s for s in _FULL if 0 not in s[0]])
    + _reductions("mean_dim", "mean", [s for s in _BY_DIM if 0 not in s[0]])
    + _reductions("prod", "prod", [((3, 4), {}), ((), {}), ((0, 3), {}), ((2, 1, 3), {})])
    + _reductions("prod_dim", "prod", [((3, 4), {"dim": 1}), ((2, 3, 4), {"dim": 0,
                                                                          "keepdim": True}),
                                       ((5,), {"dim": -1}), ((2, 1, 3), {"dim": 1}),
                                       ((0, 3), {"dim": 1}), ((), {"dim": 0})])
    + [Sample("prod", lambda x: x.prod(), _with_zeros([[1.5, 0.0], [2.0, -0.5]]),
              note="one zero"),
       Sample("prod", lambda x: x.prod(), _with_zeros([[1.5, 0.0], [0.0, -0.5]]),
              note="two zeros"),
       Sample("prod_dim", lambda x: x.prod(1),
              _with_zeros([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0], [0.5, -2.0, 1.0],
                           [0.0, 0.0, 0.0]]), note="zeros"),
       Sample("prod_dim", lambda x: x.prod(0, keepdim=True),
              _with_zeros([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0]]), note="zeros keepdim")]
    + _reductions("var", "var", [((3, 4), {}), ((3, 4), {"dim": 1}),
                                 ((2, 3, 4), {"dim": (0, 2), "keepdim": True}),
                                 ((5,), {"dim": 0, "unbiased": False}),
                                 ((4, 3), {"correction": 2}), ((2, 1, 3), {"dim": 2}),
                                 ((4, 3), {"dim": 0, "correction": 0})])
    + _reductions("std", "std", [((3, 4), {}), ((3, 4), {"dim": 1}),
                                 ((2, 3, 4), {"dim": (0, 2), "keepdim": True}),
                                 ((5,), {"dim": 0, "unbiased": False}),
                                 ((4, 3), {"correction": 2}), ((2, 1, 3), {"dim": 2})])
    + _reductions("amax", "amax", [((3, 4), {}), ((3, 4), {"dim": 1}),
                                   ((2, 3, 4), {"dim": (0, 2), "keepdim": True}),
                                   ((2, 1, 3), {"dim": 1}), ((), {}), ((0, 3), {"dim": 1})],
                  complex=False)
    + _reductions("amin", "amin", [((3, 4), {}), ((3, 4), {"dim": 0}),
                                   ((2, 3, 4), {"dim": (1, 2)}), ((2, 1, 3), {"dim": 1}),
                                   ((), {}), ((0, 3), {"dim": 1, "keepdim": True})],
                  complex=False)
    + [Sample("max", lambda x: x.max(), (3, 4)), Sample("max", lambda x: x.max(), ()),
       Sample("max", lambda x: x.max(), (2, 1, 3)),
       Sample("min", lambda x: x.min(), (3, 4)), Sample("min", lambda x: x.min(), (5,)),
       Sample("max_dim", lambda x: x.max(1).values, (3, 4)),
       Sample("max_dim", lambda x: x.max(0, keepdim=True).values, (3, 4), note="keepdim"),
       Sample("max_dim", lambda x: x.max(dim=-1).values, (2, 3, 4)),
       Sample("max_dim", lambda x: x.max(1).values, (2, 1, 3), note="size1"),
       Sample("max_dim", lambda x: x.max(0).values, ()),
       Sample("max_dim", lambda x: x.max(1).values, (0, 3), note="empty"),
       Sample("min_dim", lambda x: x.min(0).values, (3, 4)),
       Sample("min_dim", lambda x: x.min(2, True).values, (2, 3, 4), note="keepdim"),
       Sample("min_dim", lambda x: x.min(0).values, ())]
    + _reductions("logsumexp", "logsumexp",
                  [((3, 4), {"dim": 1}), ((2, 3, 4), {"dim": (0, 2), "keepdim": True}),
                   ((5,), {"dim": 0}), ((2, 1, 3), {"dim": 1}), ((0, 3), {"dim": 1}),
                   ((0, 3), {"dim": 0}), ((), {"dim": 0})])
    + _reductions("softmax", "softmax", [((3, 4), {"dim": 1}), ((3, 4), {"dim": 0}),
                                         ((2, 3, 4), {"dim": -1}), ((2, 1, 3), {"dim": 1}),
                                         ((5,), {"dim": 0}), ((), {"dim": 0}),
                                         ((0, 3), {"dim": 1})], complex=False)
    + _reductions("log_softmax", "log_softmax",
                  [((3, 4), {"dim": 1}), ((3, 4), {"dim": 0}), ((2, 3, 4), {"dim": 1}),
                   ((2, 1, 3), {"dim": 1}), ((5,), {"dim": 0}), ((), {"dim": 0}),
                   ((0, 3), {"dim": 0})], complex=False)
    + _reductions("linalg_vector_norm", "norm",
                  [((3, 4), {}), ((3, 4), {"p": 1}), ((3, 4), {"p": INF}),
                   ((3, 4), {"p": -INF}), ((3, 4), {"p": 0}), ((3, 4), {"p": 3}),
                   ((3, 4), {"p": 0.5}), ((3, 4), {"p": 1.5, "dim": 1}),
                   ((2, 3, 4), {"p": 2, "dim": (0, 2), "keepdim": True}),
                   ((3, 4), {"p": "fro", "dim": 0}), ((2, 1, 3), {"p": INF, "dim": 2}),
                   ((), {}), ((0, 3), {}), ((0, 3), {"p": 1, "dim": 0})])
    + [Sample("dist", lambda a, b, p=p: a.dist(b, p), (3, 4), shape, note=f"-p{p}")
       for p, shape in ((2, (3, 4)), (1, (4,)), (3, (1, 4)), (INF, (3, 4)), (0.5, (3, 4)))]
    + _reductions("cumsum", "cumsum", [((3, 4), {"dim": 1}), ((3, 4), {"dim": 0}),
                                       ((2, 3, 4), {"dim": -1}), ((5,), {"dim": 0}),
                                       ((), {"dim": 0}), ((0, 3), {"dim": 0}),
                                       ((2, 1, 3), {"dim": 1})])
)


def _values(op, method, shapes_kwargs, complex=False):
    """Samples of ``x.<method>(**kwargs).values`` (ops returning (values, indices))."""
    return [Sample(op, lambda x, k=kwargs: getattr(x, method)(**k).values, shape,
                   note=_note(kwargs)) for shape, kwargs in shapes_kwargs]


_ZEROS = [[1.5, 0.0, 2.0, 0.5, -1.0], [0.0, 3.0, 0.0, 2.0, 1.0], [2.0, 1.0, 0.5, 1.5, 0.0],
          [0.0, 0.0, 2.0, 1.0, 3.0], [1.0, 2.0, 0.0, 0.0, 0.0]]

SAMPLES += (
    _reductions("cumprod", "cumprod", [((3, 4), {"dim": 1}), ((3, 4), {"dim": 0}),
                                       ((2, 3, 4), {"dim": -1}), ((), {"dim": 0}),
                                       ((0, 3), {"dim": 0}), ((2, 1, 3), {"dim": 1})])
    + [Sample("cumprod", lambda x: x.cumprod(1), _with_zeros(_ZEROS), note="zeros"),
       Sample("cumprod", lambda x: x.cumprod(0), _with_zeros(_ZEROS), note="zeros dim0"),
       Sample("cumprod", lambda x: x.clone().cumprod_(1), (3, 4), note="inplace")]
    + _reductions("logcumsumexp", "logcumsumexp",
                  [((3, 4), {"dim": 1}), ((3, 4), {"dim": 0}), ((2, 3, 4), {"dim": -1}),
                   ((), {"dim": 0}), ((0, 3), {"dim": 0}), ((5,), {"dim": 0})])
    + [Sample("logcumsumexp", lambda x: x.logcumsumexp(1),
              _with_zeros([[800.0, 0.0, -700.0], [-900.0, 1.0, 900.0]]), note="wide")]
    + _values("cummax", "cummax", [((3, 4), {"dim": 1}), ((5,), {"dim": 0}), ((), {"dim": 0}),
                                    ((2, 3, 4), {"dim": 0})])
    + _values("cummin", "cummin", [((3, 4), {"dim": 0}), ((5,), {"dim": -1}), ((), {"dim": 0})])
    + _values("sort", "sort", [((3, 4), {}), ((3, 4), {"dim": 0, "descending": True}),
                               ((), {}), ((0, 3), {"dim": 0}),
                               ((2, 3, 4), {"dim": 1})])
    + [Sample("sort", lambda x: x.msort(), (4, 3), note="msort")]
    + _values("sort_stable", "sort", [((5,), {"stable": True}),
                                      ((3, 4), {"stable": False, "descending": True})])
    + _values("topk", "topk", [((3, 4), {"k": 2}), ((5,), {"k": 3, "largest": False}),
                               ((2, 3, 4), {"k": 1, "dim": 1}), ((), {"k": 1}),
                               ((3, 4), {"k": 0})])
    + _values("kthvalue", "kthvalue", [((3, 4), {"k": 2}), ((5,), {"k": 5}),
                                       ((2, 3, 4), {"k": 1, "dim": 1, "keepdim": True}),
                                       ((), {"k": 1})])
    + [Sample("median", lambda x: x.median(), shape) for shape in ((3, 4), (5,), (), (2, 1, 3))]
    + [Sample("nanmedian", lambda x: x.nanmedian(), (3, 4))]
    + _values("median_dim", "median", [((3, 4), {"dim": 1}), ((4, 3), {"dim": 0, "keepdim": True}),
                                       ((), {"dim": 0}), ((2, 3, 4), {"dim": -1})])
    + _values("nanmedian_dim", "nanmedian", [((3, 4), {"dim": 1}), ((), {"dim": 0})])
    + _reductions("nansum", "nansum", [((3, 4), {}), ((3, 4), {"dim": 1}), ((), {}),
                                       ((2, 3, 4), {"dim": (0, 2), "keepdim": True})],
                  complex=False)
)
