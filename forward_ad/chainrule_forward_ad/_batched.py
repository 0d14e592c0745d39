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
    - any other op (``vmapped_ops``): its formula once on the tensor namespace, the
      tangents batched tensors of a fresh vmap level, so that core's batching rules
      (Note [batching rules by family]) carry the batch through the formula's ops;
      where the formula reads values outside the table (ValuesOutsideTable), row by
      row, the rows stacked (correct, B formula calls; forward_ad/tests/
      test_jvp_table.py lists exactly which ops do).

    A custom Function's ``jvp`` is likewise called row by row. Dual tensors made here
    (``make_batched_dual``) take a tangent of shape ``(B,) + primal.shape``.
"""
import contextlib
import math

import numpy as np

from chainrule._ops import _registry
from chainrule._ops import elementwise as _elementwise
from chainrule._ops import nn as _nn
from chainrule._ops._common import FUNCTIONS
from chainrule import _grad_mode
from chainrule._batched import BatchedTensor
from chainrule._ops._registry import NONDIFF
from chainrule._tensor import Tensor

from ._vmapped import involves_vmap, make_physical_dual
from ._tangents import CURRENT, _data, _env, _fit_array, _fit_tensor, _same, alias_for_dual, paused


@contextlib.contextmanager
def batched_dual_level(batch, graph=True):
    """A dual level whose tangents have a leading dimension of size ``batch``.
    ``graph=False``: nobody differentiates the tangents, so their formulas run on the
    arrays even where the primals require grad (a one-pass Jacobian of a gradient:
    the primal graph is recorded for the inner backward, the tangents are not)."""
    from . import enter_dual_level, exit_dual_level
    level = enter_dual_level()
    CURRENT[0].batch = batch
    CURRENT[0].basis = {}
    CURRENT[0].tangent_graph = graph
    CURRENT[0].by_transform = True      # Note [a transform's dual level]
    try:
        yield level
    finally:
        exit_dual_level(level=level)


def make_batched_dual(tensor, tangents, basis=None):
    """A dual of ``tensor`` carrying ``tangents`` (shape ``(B,) + tensor.shape``).
    ``basis=start`` says the tangents are basis directions: row ``start + k`` is the
    k-th one of ``tensor``'s elements and every other row is zero (Note [basis
    tangents])."""
    level = CURRENT[0]
    if involves_vmap(tensor, tangents):         # Note [tangents of batched tensors]
        return make_physical_dual(level, tensor, tangents, level.batch)
    dual = alias_for_dual(tensor)
    level.set(dual, tangents)
    if basis is not None and tensor._data.ndim == 1:
        level.basis[id(tangents._data)] = (tangents._data, basis)
    return dual


ROW_LOG = None      # a set while a test records which ops ran their JVP per direction


def _names(module):
    return {v.name for v in vars(module).values() if isinstance(v, _registry.OpDef)}


ELEMENTWISE = frozenset((_names(_elementwise) - {"floor_divide"}) |
                        {"gelu", "silu", "softplus"})


def attach_batched(level, op, inputs, attrs, out, tangents, is_view, track):
    """attach_tangents for Note [batched tangents]."""
    batch = level.batch
    track = track and level.tangent_graph
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
            result = _through_vmap(op, inputs, t, attrs, out, batch, track)
            if result is None:
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


def _through_vmap(op, inputs, t, attrs, out, batch, track):
    """The JVP formula once, on the tensor namespace, its tangents batched tensors of a
    fresh vmap level: core's batching rules carry the batch through the formula's ops.
    None where the formula reads values outside the table (then: row by row)."""
    from chainrule._batched import ValuesOutsideTable, wrap
    from chainrule._vmap import batch_level
    env = _env(op, op.jvp, inputs, attrs, out, _same)
    try:
        with _grad_mode.set_grad_enabled(track), batch_level(batch) as vlevel:
            row = tuple(wrap(g if track else Tensor._wrap(g), vlevel) if g is not None else
                        None if vjp is NONDIFF else _zero(x, _same)
                        for x, g, vjp in zip(inputs, t, op.vjps))
            result = op.jvp.fn(_registry.TENSOR_NS, row, *env)
    except ValuesOutsideTable:
        if ROW_LOG is not None:
            ROW_LOG.add(op.name)
        return None
    outs = out if op.multi_output else (out,)
    results = result if op.multi_output else (result,)
    physical = tuple(_physical(r, o, vlevel, batch, track) for r, o in zip(results, outs))
    return physical if op.multi_output else physical[0]


def _physical(r, out, vlevel, batch, track):
    """A formula's result under ``_through_vmap`` with the batch leading."""
    if r is None:
        return None
    if not isinstance(r, Tensor):
        r = Tensor._wrap(np.asarray(r))
    shape = tuple(r.shape)          # may be smaller than the output's (copy's source)
    missing = max(out._data.ndim - len(shape), 0)
    if type(r) is BatchedTensor and r._level is vlevel:
        r = FUNCTIONS["reshape"](r._value, (batch,) + (1,) * missing + shape)
    else:                           # the same for every direction
        r = FUNCTIONS["reshape"](r, (1,) * (missing + 1) + shape)
    return r if track else r._data


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
    """matmul/mm/mv/dot/bmm: ``t0 @ other + self @ t1`` with the batch dimension leading
    (Note [batched products], Note [basis tangents])."""
    self, other = (_value(F, x) for x in inputs)
    a_nd, b_nd = inputs[0]._data.ndim, inputs[1]._data.ndim
    total = None
    if t[0] is not None:
        total = _basis_times(F, t[0], other, batch, -2 if b_nd > 1 else -1) \
            if a_nd == 1 else None
        if total is None:
            total = _tangent_times(F, t[0], other, a_nd, b_nd)
    if t[1] is not None:
        term = _basis_times(F, t[1], self, batch, -1) if b_nd == 1 else None
        if term is None:
            term = _times_tangent(F, self, t[1], a_nd, b_nd)
        total = term if total is None else total + term
    return total


# Note [basis tangents]
#     A one-pass Jacobian (forward_jacobian in the functional layer) seeds each 1-D
#     input with basis directions: rows ``start .. start + n`` of its batched tangent
#     are the identity, the others zero (``make_batched_dual(..., basis=start)``
#     records which arrays those are). A product with such a tangent needs no
#     arithmetic: ``M @ e_k`` is column k of M and ``e_k @ M`` its row k, so the
#     batched result is M with that dimension moved to the front (copied, so that it
#     shares no memory with M; in M's own memory order, a plain copy whose layout the
#     element-wise tangents downstream keep, so the Jacobian's blocks, moved back,
#     come out C-contiguous), zero rows around it. The first layer of most
#     functions, ``A @ x``, then costs a copy instead of an n^3 matrix product.
def _basis_times(F, g, m, batch, axis):
    """The batched product of the basis tangent ``g`` with ``m`` along m's dimension
    ``axis`` (-1: ``m @ g``, -2: ``g @ m``), or None when ``g`` is not a basis."""
    basis = getattr(CURRENT[0], "basis", None)
    arr = g._data if isinstance(g, Tensor) else g
    entry = basis.get(id(arr)) if basis else None
    if entry is None or entry[0] is not arr:
        return None
    start = entry[1]
    moved = F.permute(m, _to_front(m.ndim, axis % m.ndim))
    n, rest = moved.shape[0], tuple(moved.shape[1:])
    if F is _registry.ARRAY_NS:
        if start == 0 and n == batch:
            return moved.copy(order="K")
        out = np.zeros((batch,) + rest, moved.dtype)
        out[start:start + n] = moved
        return out
    if start == 0 and n == batch:
        return FUNCTIONS["clone"](moved)
    zeros = [Tensor._wrap(np.zeros((k,) + rest, moved._data.dtype))
             for k in (start, batch - start - n)]
    return FUNCTIONS["cat"]([zeros[0], moved, zeros[1]])


def _to_front(ndim, axis):
    return (axis,) + tuple(d for d in range(ndim) if d != axis)


# Note [batched products]
#     A batched tangent (B, *shape) times an unbatched operand is written as ONE BLAS
#     product wherever the shapes allow: the batch rows are folded into the rows of a
#     matrix ((B*m, k) @ (k, n)), or the batch becomes the columns of the other factor
#     (``A @ t.T``), and the result is moved back to batch-first. NumPy's broadcast
#     matmul would otherwise loop over the batch, and with a size-1 dimension added
#     to make a vector a matrix (``t[..., None]``) it leaves BLAS for its own
#     triple loop: a (200, 200) @ (200, 200, 1) product took ~40x one gemm.
def _tangent_times(F, g, b, a_nd, b_nd):
    """Row i: ``g[i] @ b``; ``g`` has the batch in front of the left factor's shape."""
    if b_nd <= 2:                   # rows of every entry folded into one product
        k = g.shape[-1]
        rows = tuple(g.shape[:-1])
        flat = g if g.ndim == 2 else F.reshape(g, (math.prod(rows), k))
        return F.reshape(F.matmul(flat, b), rows + tuple(b.shape[1:]))
    if a_nd == 1:                   # (..., n, k) @ (k, B): the batch as columns
        return _last_to_front(F, F.matmul(F.transpose(b, -1, -2), F.transpose(g, 0, 1)))
    return F.matmul(_lead(F, g, b_nd), b)


def _times_tangent(F, a, g, a_nd, b_nd):
    """Row i: ``a @ g[i]``; ``g`` has the batch in front of the right factor's shape."""
    if b_nd == 1:
        if a_nd <= 2:               # (B, k) @ a.T
            return F.matmul(g, a if a_nd == 1 else F.transpose(a, 0, 1))
        return _last_to_front(F, F.matmul(a, F.transpose(g, 0, 1)))
    if a_nd == 1:                   # a (k,) @ g (B, ..., k, n): numpy's vector rules
        return F.matmul(a, g)
    return F.matmul(a, _lead(F, g, a_nd))


def _last_to_front(F, r):
    return F.permute(r, (r.ndim - 1,) + tuple(range(r.ndim - 1)))


def _lead(F, g, other_ndim):
    """Batched ``g`` with singleton dimensions after the batch one, so that its
    non-batch part has at least ``other_ndim`` dimensions."""
    missing = other_ndim - (g.ndim - 1)
    if missing <= 0:
        return g
    return F.reshape(g, (g.shape[0],) + (1,) * missing + tuple(g.shape[1:]))


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


def vmapped_ops():
    """The table's ops whose batched JVP runs through core's vmap (no rule here, not
    elementwise); ROW_LOG, while a test sets it, collects those among them that fell
    back to one formula call per direction."""
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
