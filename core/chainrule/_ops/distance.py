"""Derivative table: pdist, one op like the reference's (PdistBackward0).

Note [pdist pairs]
    pdist of (N, M) rows is the p-norm of ``x[i] - x[j]`` for every pair i < j, in
    row-major order (np.triu_indices). Each distance's gradient is a direction per
    coordinate of the pair's difference, the reference's closed forms: 0 for p = 0,
    sign(diff) for p = 1, diff / dist for p = 2, sign(diff) where |diff| equals the
    distance for p = inf (every tie gets it, unlike vector_norm, which splits it), and
    sign(diff) |diff|^(p-1) / dist^(p-1) otherwise, 0 where the distance is 0. The VJP
    adds g * direction into row i and subtracts it from row j; the JVP contracts the
    direction with the tangents' differences. Formulas are namespace-generic, so double
    backward (which the reference lacks) follows from them.
"""
import numpy as np

from .._tensor import Tensor, on_device_of, zeros_on
from ._common import FUNCTIONS, formula_helper
from ._namespaces import array_fn
from ._registry import apply_op, defop
from .indexing import index_add_array
from .reduction import _norm_forward, norm_direction

_INF = float("inf")


def _pairs(n, like):
    return tuple(on_device_of(a.astype(np.int64), like) for a in np.triu_indices(n, 1))


def _pdist_forward(x, p):
    i, j = _pairs(x.shape[-2], x)
    return _norm_forward(x[..., i, :] - x[..., j, :], p, x.ndim - 1, False)


def _pair_differences(F, x):
    """Row pairs over the last two dims (leading dims are vmap's batch dims)."""
    i, j = F._pdist_pairs(x)
    rows = len(x.shape) - 2
    return i, j, F.index_select(x, rows, i) - F.index_select(x, rows, j)


def _direction(F, diff, result, p):
    last = len(diff.shape) - 1
    if p == _INF:
        return F.where(F.abs(diff) == F.unsqueeze(result, last), F.sgn(diff), 0)
    return norm_direction(F, diff, p, result, (last,), False)


def _pdist_grad(F, g, self, result, p):
    i, j, diff = _pair_differences(F, self)
    rows = len(diff.shape) - 2
    part = F.unsqueeze(g, rows + 1) * _direction(F, diff, result, p)
    return F._pdist_scatter(part, i, j, tuple(self.shape))


def _pdist_jvp(F, t, self, result, p):
    i, j, diff = _pair_differences(F, self)
    rows = len(diff.shape) - 2
    moved = F.index_select(t[0], rows, i) - F.index_select(t[0], rows, j)
    return F.sum(_direction(F, diff, result, p) * moved, (rows + 1,))


PDIST = defop("_pdist_forward", _pdist_forward, attrs=("p",), node_name="PdistBackward0",
              vjp=(_pdist_grad,), jvp=_pdist_jvp)

def _segment_sums(part, n):
    """Row k of the result: the pair terms with i == k minus those with j == k. Pairs
    come grouped by i (np.triu_indices's order), and by j after a stable sort, so each
    side is one np.add.reduceat (np.add.at is an order of magnitude slower)."""
    out = np.zeros(part.shape[:-2] + (n, part.shape[-1]), part.dtype)
    if part.shape[-2]:
        counts = np.arange(n - 1, 0, -1)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        out[..., :-1, :] += np.add.reduceat(part, starts, axis=-2)
        order = np.argsort(np.triu_indices(n, 1)[1], kind="stable")
        starts = np.concatenate([[0], np.cumsum(np.arange(1, n - 1))])
        out[..., 1:, :] -= np.add.reduceat(part[..., order, :], starts, axis=-2)
    return out


@array_fn("_pdist_scatter")
def _pdist_scatter_array(part, i, j, shape):
    if type(part) is np.ndarray:                  # (device arrays have no reduceat)
        return _segment_sums(part, shape[-2])
    rows = part.ndim - 2
    summed = index_add_array(zeros_on(shape, part.dtype, part), rows, i, part)
    return index_add_array(summed, rows, j, -part)


@formula_helper
def _pdist_scatter(part, i, j, shape):
    """The pair terms ``part`` (..., P, M) added into their first rows and subtracted
    from their second rows of zeros of ``shape`` (Note [pdist pairs])."""
    rows = part.dim() - 2
    summed = FUNCTIONS["index_add"](FUNCTIONS["_new_zeros"](part, shape), rows, i, part)
    return FUNCTIONS["index_add"](summed, rows, j, -part)


array_fn("_pdist_pairs")(lambda x: _pairs(x.shape[-2], x))
OP_NAMES = ("_pdist_forward",)


@formula_helper
def _pdist_pairs(x):
    """The (i, j) row indices of pdist's pairs (Note [pdist pairs]), as constants."""
    return tuple(Tensor._wrap(a) for a in _pairs(x.shape[-2], x._data))


def pdist(x, p):
    """The table op on a 2-D floating tensor (the caller checks)."""
    return apply_op(PDIST, (x,), {"p": float(p)})
