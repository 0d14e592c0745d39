"""Derivative table: soft_margin_loss, multilabel_margin_loss and multi_margin_loss, one
op each like the reference's (SoftMarginLossBackward0, MultilabelMarginLossBackward0,
MultiMarginLossBackward0).

Note [margin losses by their direction]
    Each loss is a sum over a row (or one element, for the soft margin) of terms in
    the input, then the reduction. Its derivative is a direction D shaped like the
    input (the gradient for a unit output gradient before the reduction): the VJP is
    D times the output gradient spread back over the rows (divided by their number
    for 'mean'), the JVP the reduction of sum(D * tangent) per row. D is written in
    the formula namespace, so double backward follows: the two hinge losses are
    piecewise linear in the input for p = 1 (D is a constant mask: zero second
    derivative), multi_margin_loss with p = 2 is quadratic (D is linear in the
    input). The reference has no double backward or forward mode for the hinge
    losses; these formulas give them.
"""
import numpy as np

from .._tensor import Tensor, asarray, on_device_of
from ._common import ABSENT, formula_helper
from ._namespaces import array_fn
from ._registry import NONDIFF, apply_op, defop


def _reduced(losses, reduction, out_shape):
    if reduction == "none":
        return losses.reshape(out_shape)
    total = losses.sum() if reduction == "sum" else losses.mean()
    return asarray(total, losses.dtype)


def _unreduce(F, g, reduction, rows):
    """The output gradient per row (rows: the number of losses before the reduction)."""
    if reduction == "none":
        return F.reshape(g, (-1,) if rows else ())
    return g / rows if reduction == "mean" and rows else g


def _reduce(F, losses, reduction, out_shape):
    if reduction == "none":
        return F.reshape(losses, tuple(out_shape))
    return F.sum(losses) if reduction == "sum" else F.mean(losses)


# --- soft margin: log(1 + exp(-y x)) per element ---------------------------------------------
def _soft_margin_forward(x, target, reduction):
    return _reduced(np.log1p(np.exp(-x * target)), reduction, np.broadcast_shapes(
        x.shape, target.shape))


def _soft_margin_direction(F, x, target):
    z = F.exp(-target * x)
    return -(target * z) / (1 + z)                    # the reference's order of operations


def _soft_margin_vjp(F, g, self, target, self_shape, reduction):
    d = _soft_margin_direction(F, self, target)
    scale = g if reduction == "none" else _unreduce(F, g, reduction, _numel(d.shape))
    return F.sum_to(d * scale, tuple(self_shape))


def _soft_margin_jvp(F, t, self, target, result, reduction):
    d = _soft_margin_direction(F, self, target)
    return _reduce(F, d * t[0], reduction, tuple(d.shape))


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64))


SOFT_MARGIN = defop("soft_margin_loss", _soft_margin_forward, inputs=("self", "target"),
                    attrs=("reduction",), vjp=(_soft_margin_vjp, NONDIFF),
                    jvp=_soft_margin_jvp)


# --- the hinge losses: rows of (N, C) ---------------------------------------------------------
def _rows_of(x):
    return x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)


def _listed_pairs(x, target):
    """(N, j, i): how often class j is listed as a target (up to the first -1) times
    whether class i is not a target: the reference's pairs."""
    t = _rows_of(target).astype(np.int64)
    listed = np.cumprod(t >= 0, axis=1)
    classes = on_device_of(np.arange(t.shape[1]), t)
    counts = ((t[:, :, None] == classes) * listed[:, :, None]).sum(1)
    return counts[:, :, None] * (counts[:, None, :] == 0)


def _multilabel_forward(x, target, reduction, out_shape):
    rows = _rows_of(x)
    z = np.maximum(1 - rows[:, :, None] + rows[:, None, :], 0)
    pairs = _listed_pairs(x, target).astype(x.dtype)
    return _reduced((z * pairs).sum((1, 2)) / rows.shape[1], reduction, out_shape)


def _multilabel_direction_array(x, target):
    rows = _rows_of(x)
    active = (1 - rows[:, :, None] + rows[:, None, :] > 0) * _listed_pairs(x, target)
    d = (active.sum(1) - active.sum(2)) / rows.shape[1]
    return d.astype(x.dtype).reshape(x.shape)


def _hinge_vjp(direction):
    def vjp(F, g, self, target, self_shape, reduction, out_shape):
        d = direction(F, self, target)
        rows = _numel(tuple(self_shape)[:-1]) if len(self_shape) > 1 else 1
        scale = _unreduce(F, g, reduction, rows)
        if len(self_shape) > 1:
            scale = F.unsqueeze(scale, -1) if reduction == "none" else scale
        return d * scale
    return vjp


def _hinge_jvp(direction):
    def jvp(F, t, self, target, result, reduction, out_shape):
        d = direction(F, self, target)
        per_row = F.sum(d * t[0], (len(d.shape) - 1,)) if len(d.shape) else d * t[0]
        return _reduce(F, per_row, reduction, out_shape)
    return jvp


def _multilabel_direction(F, x, target):
    return F._multilabel_margin_direction(x, target)


MULTILABEL_MARGIN = defop(
    "multilabel_margin_loss", _multilabel_forward, inputs=("self", "target"),
    attrs=("reduction", "out_shape"), node_name="MultilabelMarginLossBackward0",
    vjp=(_hinge_vjp(_multilabel_direction), NONDIFF), jvp=_hinge_jvp(_multilabel_direction))

array_fn("_multilabel_margin_direction")(_multilabel_direction_array)


@formula_helper
def _multilabel_margin_direction(x, target):
    """The constant direction of Note [margin losses by their direction]."""
    return Tensor._wrap(_multilabel_direction_array(x._data, target._data))


# --- multi margin: w[y] max(0, margin - x[y] + x[i]) ** p over i != y, / C ----------------------
def _multi_margin_terms(x, target, weight, p, margin):
    rows = _rows_of(x)
    y = target.reshape(-1, 1).astype(np.int64)
    z = margin - np.take_along_axis(rows, y, 1) + rows
    h = np.where((z > 0) & (_target_column_array(y, rows) == 0), z if p == 1 else z * z, 0)
    if weight.shape[0]:                                  # (absent: a 0-size placeholder)
        h = h * weight[y]
    return h.sum(1) / rows.shape[1]


def _multi_margin_forward(x, target, weight, p, margin, reduction, out_shape):
    return _reduced(_multi_margin_terms(x, target, weight, p, margin).astype(x.dtype),
                    reduction, out_shape)


def _multi_margin_direction(F, x, target, weight, p, margin):
    shape, classes = tuple(x.shape), x.shape[-1] if len(x.shape) else 1
    rows = F.reshape(x, (-1, classes))
    y = F.reshape(target, (-1, 1))
    z = margin - F.gather(rows, 1, y) + rows
    others = F._other_classes(y, rows, weight)           # w[y] off the target column, else 0
    d = F.where(z > 0, others if p == 1 else 2 * z * others, 0) / classes
    return F.reshape(d - F._target_column(y, rows) * F.sum(d, (1,), True), shape)


def _multi_margin_vjp(F, g, self, target, weight, self_shape, p, margin, reduction,
                      out_shape):
    return _hinge_vjp(lambda F, x, t: _multi_margin_direction(F, x, t, weight, p, margin))(
        F, g, self, target, self_shape, reduction, out_shape)


def _multi_margin_jvp(F, t, self, target, weight, result, p, margin, reduction, out_shape):
    return _hinge_jvp(lambda F, x, tg: _multi_margin_direction(F, x, tg, weight, p, margin))(
        F, t, self, target, result, reduction, out_shape)


MULTI_MARGIN = defop(
    "multi_margin_loss", _multi_margin_forward, inputs=("self", "target", "weight"),
    attrs=("p", "margin", "reduction", "out_shape"),
    vjp=(_multi_margin_vjp, NONDIFF, NONDIFF), jvp=_multi_margin_jvp)


def _target_column_array(y, rows):
    return (on_device_of(np.arange(rows.shape[1]), y) == y).astype(rows.dtype)


def _other_classes_array(y, rows, weight):
    others = 1 - _target_column_array(y, rows)
    return others * weight[y] if weight.shape[0] else others


array_fn("_target_column")(_target_column_array)
array_fn("_other_classes")(_other_classes_array)


@formula_helper
def _target_column(y, rows):
    """1 at each row's target class (a constant)."""
    return Tensor._wrap(_target_column_array(y._data, rows._data))


@formula_helper
def _other_classes(y, rows, weight):
    """The target class's weight (or 1) off the target column, 0 on it (a constant)."""
    return Tensor._wrap(_other_classes_array(y._data, rows._data, weight._data))


OP_NAMES = ("soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss")


def soft_margin_loss(input, target, reduction):
    return apply_op(SOFT_MARGIN, (input, target), {"reduction": reduction})


def multilabel_margin_loss(input, target, reduction, out_shape):
    return apply_op(MULTILABEL_MARGIN, (input, target),
                    {"reduction": reduction, "out_shape": tuple(out_shape)})


def multi_margin_loss(input, target, weight, p, margin, reduction, out_shape):
    attrs = {"p": p, "margin": margin, "reduction": reduction, "out_shape": tuple(out_shape)}
    return apply_op(MULTI_MARGIN, (input, target, ABSENT if weight is None else weight), attrs)
