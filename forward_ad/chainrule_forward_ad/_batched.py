"""Batched tangents: many directions through one forward pass.

Note [batched tangents]
    Inside ``batched_dual_level(B)`` every tangent carries a leading dimension of
    size B: row b is the tangent along direction b. One evaluation of a function then
    gives B Jacobian-vector products (a whole Jacobian when the directions are a
    basis): jacfwd, ``jacobian(strategy="forward-mode")`` and the functional layer's
    vectorized jacobian/hessian use it. Each op's JVP runs once on the batched
    tangents:

    - elementwise ops (their JVPs broadcast): the formula as declared, after each
      tangent is given singleton dimensions between the batch dimension and its own
      shape, so that it lines up with the primals by NumPy's right-aligned
      broadcasting;
    - ops with a rule in BATCH_RULES (products, reductions, shape ops): the rule,
      which moves the op's dimension arguments past the batch dimension;
    - any other op: its JVP row by row, the rows stacked (correct, B formula calls;
      ``unbatched_ops`` lists which ops of the table take that path).

    A custom Function's ``jvp`` is likewise called row by row. Dual tensors made here
    (``make_batched_dual``) take a tangent of shape ``(B,) + primal.shape``.
"""
import contextlib

import numpy as np

from chainrule._ops import _registry
from chainrule._ops import elementwise as _elementwise
from chainrule._ops import nn as _nn
from chainrule._ops._common import FUNCTIONS
from chainrule._ops._registry import NONDIFF
from chainrule._ops.shape import ALIAS
from chainrule._tensor import Tensor
from chainrule._version_counter import counter_of

from ._tangents import CURRENT, _data, _env, _fit_array, _fit_tensor, _same, paused


@contextlib.contextmanager
def batched_dual_level(batch):
    """A dual level whose tangents have a leading dimension of size ``batch``."""
    from . import enter_dual_level, exit_dual_level
    level = enter_dual_level()
    CURRENT[0].batch = batch
    try:
        yield level
    finally:
        exit_dual_level(level=level)


def make_batched_dual(tensor, tangents):
    """A dual of ``tensor`` carrying ``tangents`` (shape ``(B,) + tensor.shape``)."""
    with paused():
        dual = _registry.apply_op(ALIAS, (tensor,), {})
    dual._vc = counter_of(tensor)
    CURRENT[0].set(dual, tangents)
    return dual


def _names(module):
    return {v.name for v in vars(module).values() if isinstance(v, _registry.OpDef)}


ELEMENTWISE = frozenset((_names(_elementwise) - {"floor_divide"}) |
                        {"gelu", "silu", "softplus"})


def attach_batched(level, op, inputs, attrs, out, tangents, is_view, track):
    """attach_tangents for Note [batched tangents]."""
    batch = level.batch
    F = _registry.TENSOR_NS if track else _registry.ARRAY_NS
    unwrap = _same if track else _data
    t = [None if g is None else unwrap(g) for g in tangents]
    env = _env(op, op.jvp, inputs, attrs, out, unwrap)
    rule = BATCH_RULES.get(op.name)
    with paused():
        if rule is not None:
            result = rule(F, t, inputs, attrs, batch, out)
        elif op.name in ELEMENTWISE:
            result = op.jvp.fn(F, tuple(_aligned(op, inputs, t, out, unwrap)), *env)
        else:
            result = _row_by_row(op, F, inputs, t, env, out, batch, unwrap, track)
    outs = out if op.multi_output else (out,)
    results = result if op.multi_output else (result,)
    fit = _fit_tensor if track else _fit_array
    with paused():
        for o, r in zip(outs, results):
            tangent = fit(r, o, t, is_view, batch)
            if tangent is not None:
                level.set_output(o, tangent)


def _zero(x, unwrap):
    return unwrap(Tensor._wrap(np.zeros(x._data.shape, x._data.dtype)))


def _aligned(op, inputs, t, out, unwrap):
    """Tangents reshaped (B, 1, ..., 1, *shape) to the output's rank; zeros (without a
    batch dimension) for inputs without one."""
    ndim = max(o._data.ndim for o in (out if op.multi_output else (out,)))
    for x, g, vjp in zip(inputs, t, op.vjps):
        if g is None:
            yield None if vjp is NONDIFF else _zero(x, unwrap)
            continue
        shape = x._data.shape
        missing = ndim - len(shape)
        yield g if missing <= 0 else g.reshape((g.shape[0],) + (1,) * missing + shape)


def _row_by_row(op, F, inputs, t, env, out, batch, unwrap, track):
    """The JVP once per direction; each row broadcast to its output's shape (a row
    may come back smaller, e.g. copy's source tangent), then stacked."""
    outs = out if op.multi_output else (out,)
    rows = []
    for b in range(batch):
        row = tuple(g[b] if g is not None else None if vjp is NONDIFF else _zero(x, unwrap)
                    for x, g, vjp in zip(inputs, t, op.vjps))
        result = op.jvp.fn(F, row, *env)
        rows.append([_full(r, o, track) for r, o in
                     zip(result if op.multi_output else (result,), outs)])
    stack = FUNCTIONS["stack"] if track else np.stack
    columns = tuple(stack([r[k] for r in rows]) for k in range(len(outs)))
    return columns if op.multi_output else columns[0]


def _full(r, out, track):
    shape = out._data.shape
    if track:
        return r if tuple(r.shape) == shape else r.expand(shape)
    r = np.asarray(r)
    return r if r.shape == shape else np.broadcast_to(r, shape)


# --- rules ----------------------------------------------------------------------------
def _product(F, t, inputs, attrs, batch, out):
    """matmul/mm/mv/dot/bmm: t0 @ other + self @ t1 with the batch dimension leading:
    vectors are made matrices (as matmul does), the tangent gets singleton dimensions
    after the batch one so that it lines up with the other operand's batch
    dimensions, and the added dimensions are dropped again."""
    self, other = (_value(F, x) for x in inputs)
    a_vec, b_vec = inputs[0]._data.ndim == 1, inputs[1]._data.ndim == 1
    total = None
    if t[0] is not None:
        a = t[0][..., None, :] if a_vec else t[0]
        b = other[..., None] if b_vec else other
        total = _drop(F.matmul(_lead(F, a, b.ndim), b), a_vec, b_vec)
    if t[1] is not None:
        a = self[None, :] if a_vec else self
        b = t[1][..., None] if b_vec else t[1]
        term = _drop(F.matmul(a, _lead(F, b, a.ndim)), a_vec, b_vec)
        total = term if total is None else total + term
    return total


def _lead(F, g, other_ndim):
    """Batched ``g`` with singleton dimensions after the batch one, so that its
    non-batch part has at least ``other_ndim`` dimensions."""
    missing = other_ndim - (g.ndim - 1)
    if missing <= 0:
        return g
    return F.reshape(g, (g.shape[0],) + (1,) * missing + tuple(g.shape[1:]))


def _drop(r, a_vec, b_vec):
    if b_vec:
        r = r[..., 0]
    if a_vec:
        r = r[..., 0] if b_vec else r[..., 0, :]
    return r


def _value(F, x):
    return x if F is _registry.TENSOR_NS else x._data


def _shifted(dims, ndim):
    return tuple(range(1, ndim + 1)) if dims is None else tuple(d + 1 for d in dims)


def _sum(F, t, inputs, attrs, batch, out):
    return F.sum(t[0], _shifted(_dims(attrs["dim"]), inputs[0]._data.ndim), attrs["keepdim"])


def _mean(F, t, inputs, attrs, batch, out):
    return F.mean(t[0], _shifted(_dims(attrs["dim"]), inputs[0]._data.ndim), attrs["keepdim"])


def _dims(dim):
    return (dim,) if isinstance(dim, int) else dim


def _expand(F, t, inputs, attrs, batch, out):
    shape = tuple(attrs["shape"])
    have = inputs[0]._data.shape
    g = F.reshape(t[0], (batch,) + (1,) * (len(shape) - len(have)) + have)
    return F.expand(g, (batch,) + shape)


def _transpose(F, t, inputs, attrs, batch, out):
    return F.transpose(t[0], _dim(attrs, inputs, "dim0"), _dim(attrs, inputs, "dim1"))


def _dim(attrs, inputs, key="dim", extra=0):
    """The op's dimension argument ``key`` past the batch dimension."""
    return attrs[key] % (inputs[0]._data.ndim + extra) + 1


def _select(F, t, inputs, attrs, batch, out):
    return F.select(t[0], _dim(attrs, inputs), attrs["index"])


def _slice(F, t, inputs, attrs, batch, out):
    return F._slice(t[0], _dim(attrs, inputs), attrs["start"], attrs["end"], attrs["step"])


def _permute(F, t, inputs, attrs, batch, out):
    nd = inputs[0]._data.ndim
    return F.permute(t[0], (0,) + tuple(d % nd + 1 for d in attrs["dims"]))


def _matrix_t(F, t, inputs, attrs, batch, out):
    return F.transpose(t[0], 1, 2) if inputs[0]._data.ndim == 2 else t[0]


def _batched_all(F, t, inputs, batch):
    """Every input's tangent with the batch dimension (zeros broadcast for those
    without one)."""
    return [g if g is not None else F.expand(_zero(x, _same if F is _registry.TENSOR_NS
                                                   else _data), (batch,) + x._data.shape)
            for x, g in zip(inputs, t)]


def _stack(F, t, inputs, attrs, batch, out):
    return F.stack(_batched_all(F, t, inputs, batch), _dim(attrs, inputs, extra=1))


def _cat(F, t, inputs, attrs, batch, out):
    # cat skips legacy empty 1-d inputs beside higher-dimensional ones: so does this
    kept = [(x, g) for x, g in zip(inputs, t)
            if not (x._data.shape == (0,) and out._data.ndim > 1)]
    tangents = _batched_all(F, [g for _, g in kept], [x for x, _ in kept], batch)
    return F.cat(tangents, out._data.ndim and attrs["dim"] % out._data.ndim + 1)


def _same_values(F, t, inputs, attrs, batch, out):
    """Ops that only reshape their input (squeeze, unsqueeze, view, ...)."""
    return F.reshape(t[0], (batch,) + out._data.shape)


BATCH_RULES = {name: _product for name in ("matmul", "mm", "mv", "dot", "bmm")}
BATCH_RULES.update({name: _same_values for name in ("view", "reshape", "squeeze",
                                                     "squeeze_dims", "unsqueeze", "_unsafe_view",
                                                     "flatten")})
BATCH_RULES.update(sum=_sum, mean=_mean, expand=_expand, transpose=_transpose, select=_select,
                   slice=_slice, permute=_permute, t=_matrix_t, stack=_stack, cat=_cat,
                   alias=lambda F, t, inputs, attrs, batch, out: t[0])


def unbatched_ops():
    """The table's ops whose batched JVP runs row by row (no rule, not elementwise)."""
    return sorted(set(_registry.OPS) - ELEMENTWISE - set(BATCH_RULES))


def function_jvp_rows(call_jvp, args, tangents, batch):
    """A custom Function's jvp on batched tangents: row by row (zeros for tensor
    arguments without a tangent), stacked."""
    rows = []
    for b in range(batch):
        row = [g[b] if g is not None else _zero(a, _same) if isinstance(a, Tensor) else None
               for a, g in zip(args, tangents)]
        rows.append(call_jvp(row))
    return tuple(None if rows[0][k] is None else FUNCTIONS["stack"]([r[k] for r in rows])
                 for k in range(len(rows[0])))
