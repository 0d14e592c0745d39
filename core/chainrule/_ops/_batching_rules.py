"""Batching rules: how each table op runs once on a whole batch (Note [batched tensors]).

Note [batching rules by family]
    A rule is ``rule(call, op, args, batched, attrs)``: ``args`` are the op's inputs
    at the level being handled (the physical tensor, batch at dimension 0, for a
    batched input; the tensor itself otherwise), ``batched`` says which are batched,
    ``call(op, args, attrs)`` runs an op on physical tensors (lower vmap levels still
    dispatched) and the rule returns the physical result(s), batch at dimension 0.
    Rules are declared per family, from what the table says about an op (its module
    and the names of its attributes), so a new op of a family needs no new rule:

    - element-wise ops: batched inputs get singleton dimensions after the batch one
      up to the largest logical rank, then NumPy's broadcasting does the rest;
    - ops with dimension attributes (``dim``, ``dims``, ``dim0``, ...): non-negative
      dimensions move one place right (negative ones already count from the end);
      a reduction over every dimension (``dim=None``) reduces all but the batch one;
      ops with several data inputs get the unbatched ones expanded to the batch;
    - ops with a shape attribute (view, expand, repeat): the batch size is prepended;
    - matmul and its family (mm, bmm, mv, dot, outer, linear): rewritten as matmul,
      which broadcasts batch dimensions; einsum: a fresh letter for the batch;
    - linalg ops on the last two dimensions: they already broadcast over leading ones;
    - indexing with a key: a full slice prepended to the key;
    - ops over samples (N) with per-sample attributes (ctc's lengths, nll_loss's
      targets): the batch folds into N, or becomes a trailing dimension;
    - as_strided: one as_strided of the physical tensor, the batch stride prepended
      (Note [as_strided under vmap] in shape.py).

    Every other op (``LOOPED``) runs once per batch entry, its results stacked: correct,
    and listed by a test (core/tests/test_vmap_ops.py) so the list cannot grow silently.
"""
import math
import string
import warnings

import numpy as np

from . import elementwise as _elementwise
from . import special_functions as _special_functions
from . import nn as _nn
from . import pooling as _pooling
from . import padding as _padding, shuffle as _shuffle, upsample as _upsample
from . import distance as _distance, im2col as _im2col, unpooling as _unpooling
from . import grid_sampler as _grid_sampler
from .._batched import PERFORMANCE_DROP, BatchedTensor
from .._tensor import Tensor
from ._common import ABSENT, FUNCTIONS
from ._registry import OPS

_NEW_DIM_OPS = frozenset(("unsqueeze", "stack", "diag_embed"))  # dims of the result
LOOP_LOG = None     # a set while a test records which ops ran per entry
# Looped ops that the reference has no batching rule for either: its name of the op
REFERENCE_FALLBACKS = {"masked_scatter": "aten::masked_scatter"}
DIM_ATTRS = ("dim", "dims", "dim0", "dim1", "dim2", "dimension")


# --- physical-tensor helpers ---------------------------------------------------------
def _lnd(t, is_batched):
    """The logical rank of a physical argument."""
    return t.ndim - 1 if is_batched else t.ndim


def _pad(t, rank):
    """A batched physical tensor with singleton dimensions after the batch one, up to
    logical rank ``rank``."""
    missing = rank - (t.ndim - 1)
    if missing <= 0:
        return t
    shape = tuple(t.shape)
    return FUNCTIONS["reshape"](t, shape[:1] + (1,) * missing + shape[1:])


def _expand_batch(t, size):
    """An unbatched tensor broadcast to a batch of ``size`` (no copy)."""
    return FUNCTIONS["expand"](FUNCTIONS["unsqueeze"](t, 0), (size,) + tuple(t.shape))


def _batch_size(args, batched):
    return next(a.shape[0] for a, b in zip(args, batched) if b)


def _materialized(args, batched):
    size = _batch_size(args, batched)
    return [a if b or a is None else _expand_batch(a, size) for a, b in zip(args, batched)]


def _shift(d):
    if d is None:
        return None
    if isinstance(d, (tuple, list)):
        return type(d)(_shift(x) for x in d)
    return d + 1 if d >= 0 else d


def _shifted(attrs):
    return {k: _shift(v) if k in DIM_ATTRS else v for k, v in attrs.items()}


# --- rules ---------------------------------------------------------------------------
def elementwise(call, op, args, batched, attrs):
    rank = max(_lnd(a, b) for a, b in zip(args, batched) if a is not None)
    args = [_pad(a, rank) if b else a for a, b in zip(args, batched)]
    return call(op, args, attrs)


def elementwise_on_self(call, op, args, batched, attrs):
    """Element-wise ops whose result has ``self``'s shape (copy, masked_fill): ``self``
    is expanded to the batch when only another input is batched."""
    if not batched[0]:
        args, batched = _materialized(args, batched), [True] * len(args)
    return elementwise(call, op, args, batched, attrs)


def zero_dim_aware(rule):
    """A 0-d logical ``self`` has no dimension for the batch one to move past: the op
    runs on (B, 1) with its dimension 0 (or -1) pointing at the 1, which is dropped.
    (The ops of several inputs refuse a 0-d ``self`` before their table op, but for
    gather and the scatters: Note [gather and scatter on vectors].)"""
    def wrapper(call, op, args, batched, attrs):
        if not batched[0] or args[0].ndim != 1 or op.name in _NEW_DIM_OPS:
            return rule(call, op, args, batched, attrs)
        args = [None if a is None else FUNCTIONS["unsqueeze"](a, -1) for a in args]
        out = rule(call, op, args, batched, attrs)
        if isinstance(out, tuple):
            return tuple(o.reshape(o.shape[:1]) for o in out)
        return out.reshape(out.shape[:1])
    return wrapper


@zero_dim_aware
def shift_dims(call, op, args, batched, attrs):
    if sum(batched) < len([a for a in args if a is not None]):
        args = _materialized(args, batched)
    return call(op, args, _shifted(attrs))


@zero_dim_aware
def reduction(call, op, args, batched, attrs):
    attrs = _shifted(attrs)
    if "dim" in attrs and attrs["dim"] is None:
        attrs["dim"] = tuple(range(1, args[0].ndim)) if args[0].ndim > 1 else None
    return call(op, args, attrs)


def _shared_index(call, op, args, batched, attrs):
    """An unbatched index: the unbatched data inputs (not a fill value) expanded to the
    batch, dimensions shifted past it."""
    size = _batch_size(args, batched)
    args = [a if b or name not in ("self", "source") else _expand_batch(a, size)
            for a, b, name in zip(args, batched, op.inputs)]
    return call(op, args, _shifted(attrs))


def by_index(batched_index_rule):
    """Ops with a 1-D index input (index_select, index_add, ...): a shared index by
    ``_shared_index``, one per entry by ``batched_index_rule``."""
    def rule(call, op, args, batched, attrs):
        if batched[1]:
            return batched_index_rule(call, op, args, batched, attrs)
        return _shared_index(call, op, args, batched, attrs)
    return rule


def unfold(call, op, args, batched, attrs):
    """A 0-d entry is the one-element vector it stands for, whose first window (of
    ``size`` 1 or 0) is all of it or none: that vector narrowed to ``size`` (a view of
    the entry, as the op's result is)."""
    if args[0].ndim > 1:
        return shift_dims(call, op, args, batched, attrs)
    return FUNCTIONS["narrow"](FUNCTIONS["unsqueeze"](args[0], -1), 1, 0, attrs["size"])


# Note [gather and scatter on vectors]
#     gather and the scatters take a 0-d self, or an index of the other rank (0-d
#     against 1-d), as vectors: self's elements, the index's positions and src's values
#     each flattened (src: its corner of the index's shape where their ranks agree,
#     else its first value for every position), the op along that one dimension.
#     Under vmap the entries are such vectors side by side: every input (B, n), the op
#     once along dimension 1, the result reshaped to the entry's shape (self's for a
#     scatter, the index's for gather).
def _entry_shape(t, is_batched):
    return tuple(t.shape)[1:] if is_batched else tuple(t.shape)


def _flat_entries(t, is_batched, size):
    """(B, n): each entry's elements in order (a shared tensor expanded to the batch)."""
    return FUNCTIONS["reshape"](t if is_batched else _expand_batch(t, size), (size, -1))


def _scattered_values(src, src_batched, index_shape, size):
    """(B, K): the value src gives each of the K positions of an entry's index."""
    shape = _entry_shape(src, src_batched)
    if shape and len(shape) == len(index_shape):
        for d, n in enumerate(index_shape):
            if shape[d] != n:
                src = FUNCTIONS["narrow"](src, d + src_batched, 0, n)
        return _flat_entries(src, src_batched, size)
    first = FUNCTIONS["narrow"](_flat_entries(src, src_batched, size), 1, 0, 1)
    return FUNCTIONS["expand"](first, (size, math.prod(index_shape)))


def gather_or_scatter(call, op, args, batched, attrs):
    """Note [gather and scatter on vectors] where it applies, else the dims shifted."""
    shape, index_shape = _entry_shape(args[0], batched[0]), _entry_shape(args[1], batched[1])
    if shape and len(shape) == len(index_shape):
        return shift_dims(call, op, args, batched, attrs)
    size = _batch_size(args, batched)
    vectors = [_flat_entries(a, b, size) for a, b in zip(args[:2], batched[:2])]
    if len(args) > 2:
        vectors.append(_scattered_values(args[2], batched[2], index_shape, size))
    out = call(op, vectors, dict(attrs, dim=1))
    return FUNCTIONS["reshape"](out, (size,) + (index_shape if op.name == "gather" else shape))


# Note [an index per entry]
#     index_select/index_add/index_copy/index_fill take a 1-D index of positions along
#     ``dim``. With one index per entry (physical (B, K)) they are the gather/scatter
#     ops whose index holds each entry's positions at every place of the other
#     dimensions: the index reshaped to (B, 1.., K, 1..) and expanded (no copy).
def _entry_positions(index, dim, rank, shape):
    size, k = index.shape
    positions = FUNCTIONS["reshape"](index, (size,) + (1,) * dim + (k,) + (1,) * (rank - dim - 1))
    return FUNCTIONS["expand"](positions, tuple(shape[:dim + 1]) + (k,) + tuple(shape[dim + 2:]))


def _by_entry(build):
    """A rule for a batched index (Note [an index per entry]) of entries of rank 1 or
    more (Note [0-d operands of the index ops]). ``build(call, x, positions_for, dim,
    args, attrs)`` makes the result."""
    def rule(call, op, args, batched, attrs):
        rank = _lnd(args[0], batched[0])
        size, dim = _batch_size(args, batched), attrs["dim"] % rank
        args = [a if b or a is None or not isinstance(a, Tensor) or i == 1 else
                _expand_batch(a, size) for i, (a, b) in enumerate(zip(args, batched))]
        positions_for = lambda shape: _entry_positions(args[1], dim, rank, shape)  # noqa: E731
        return build(call, args[0], positions_for, dim, args, attrs)
    return rule


index_select_by_entry = _by_entry(lambda call, x, at, dim, args, attrs: call(
    OPS["gather"], [x, at(x.shape)], {"dim": dim + 1}))
index_add_by_entry = _by_entry(lambda call, x, at, dim, args, attrs: call(
    OPS["scatter_add"], [x, at(args[2].shape), args[2] if attrs["alpha"] == 1 else
                         FUNCTIONS["mul"](args[2], attrs["alpha"])], {"dim": dim + 1}))
index_copy_by_entry = _by_entry(lambda call, x, at, dim, args, attrs: call(
    OPS["scatter"], [x, at(args[2].shape), args[2]], {"dim": dim + 1}))
index_fill_by_entry = _by_entry(lambda call, x, at, dim, args, attrs: call(
    OPS["scatter_value"], [x, at(x.shape)], {"dim": dim + 1, "value": attrs["value"]}))


# Note [0-d operands of the index ops]
#     index_select/index_add/index_copy/index_fill take a 0-d self, index or source as
#     the one-element vector it stands for (a 0-d self has the one position 0, which
#     dim 0 or -1 names). Under vmap each such operand becomes that vector, (B, 1)
#     batched or (1,) shared, the op's rule for vectors runs, and the result of a 0-d
#     self goes back to 0-d. A fill value stays the number it is.
def zero_dim_as_vectors(rule):
    """Note [0-d operands of the index ops]."""
    def wrapper(call, op, args, batched, attrs):
        scalar = _lnd(args[0], batched[0]) == 0
        args = [FUNCTIONS["unsqueeze"](a, -1) if _lnd(a, b) == 0 and
                name in ("self", "index", "source") else a
                for a, b, name in zip(args, batched, op.inputs)]
        out = rule(call, op, args, batched, attrs)
        return FUNCTIONS["squeeze"](out, -1) if scalar else out
    return wrapper


@zero_dim_as_vectors
def index_fill_tensor(call, op, args, batched, attrs):
    """A batched fill value or index: ``where`` the positions (index_fill's rule on a
    mask, for a shared index or one per entry) are, the value, else ``self``; neither
    batched: as index_fill."""
    if not (batched[1] or batched[2]):
        return _shared_index(call, op, args, batched, attrs)
    x, index, value = args
    x = x if batched[0] else _expand_batch(x, _batch_size(args, batched))
    mask = RULES["index_fill"](call, OPS["index_fill"],
                               [Tensor._wrap(np.zeros(tuple(x.shape), bool)), index],
                               [True, batched[1]], {"dim": attrs["dim"], "value": True})
    return call(OPS["where"], [mask, _pad(value, x.ndim - 1) if batched[2] else value, x], {})


def take(call, op, args, batched, attrs):
    """Flat indices into each entry: into the flattened batch, offset by the entry's
    start (negative ones counted from the entry's end first)."""
    x, (index,) = args[0], attrs["key"]
    size, n = x.shape[0], math.prod(tuple(x.shape)[1:])
    index = np.where(index < 0, index + n, index)
    offsets = (np.arange(size) * n).reshape((size,) + (1,) * index.ndim)
    return call(op, [x], dict(attrs, key=(index + offsets,)))


def prepend_shape(call, op, args, batched, attrs):
    key = "shape" if "shape" in attrs else "repeats"
    target = tuple(attrs[key])
    x = _pad(args[0], len(target))
    lead = x.shape[0] if key == "shape" else 1
    return call(op, [x], dict(attrs, **{key: (lead,) + target}))


def as_strided_rule(call, op, args, batched, attrs):
    """Note [as_strided under vmap] (in shape.py): one as_strided of the physical
    tensor, its batch dimension prepended with its stride."""
    x = args[0]
    offset, strides = _memory_layout(x)
    start = offset if attrs["storage_offset"] is None else attrs["storage_offset"]
    size, stride = attrs["size"], attrs["stride"]
    _check_inside_entry(x.shape[1:], strides[1:], offset, size, stride, start)
    return FUNCTIONS["as_strided"](x, (x.shape[0],) + size, strides[:1] + stride, start)


def _memory_layout(x):
    """(storage offset, strides) of a physical tensor, that of a lower vmap level
    included (its physical tensor's, without that level's batch dimension)."""
    depth = 0
    while isinstance(x, BatchedTensor):
        x, depth = x._value, depth + 1
    return x.storage_offset(), x.stride()[depth:]


def _last_position(size, stride, offset):
    """One past the last storage position a geometry reaches (None: no element)."""
    if not all(size):
        return None
    return offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))


def _check_inside_entry(entry_size, entry_stride, entry_offset, size, stride, offset):
    reach = _last_position(size, stride, offset)
    if reach is None:
        return
    limit = _last_position(entry_size, entry_stride, entry_offset)
    if limit is None or offset < entry_offset or reach > limit:
        raise RuntimeError(
            f"result = tensor.as_strided({list(size)}, {list(stride)}, {offset}) can access "
            f"memory outside of `tensor`. `result` can access some memory in range "
            f"[{offset}, {reach}], but `tensor` can only access some memory in range "
            f"[{entry_offset}, {limit}]. This is not supported inside of vmap, please try "
            "to rewrite the `as_strided` call as a sequence of PyTorch view operations")


def permute(call, op, args, batched, attrs):
    return call(op, args, dict(attrs, dims=(0,) + tuple(d + 1 for d in attrs["dims"])))


def last_dims(call, op, args, batched, attrs):
    """Ops acting on trailing dimensions that broadcast over leading ones."""
    if len([a for a in args if a is not None]) > 1:
        return elementwise(call, op, _materialized(args, batched),
                           [a is not None for a in args], attrs)
    return call(op, args, attrs)


def transpose_2d(call, op, args, batched, attrs):
    if args[0].ndim < 3:
        return args[0]
    return call(OPS["transpose"], args, {"dim0": 1, "dim1": 2}, view=True)


def matmul(call, op, args, batched, attrs):
    """matmul on physical tensors: 1-D logical operands become matrices, ranks are
    aligned after the batch dimension, and the added dimensions are dropped again."""
    a, b = args
    a_vec, b_vec = _lnd(a, batched[0]) == 1, _lnd(b, batched[1]) == 1
    if b_vec and batched[1] and not batched[0] and not a_vec:
        # a shared matrix times a batch of vectors: one product with the vectors as
        # rows, (B, k) @ (..., k, n) -> (..., B, n), the batch then moved to the front
        out = call(OPS["matmul"], [b, FUNCTIONS["transpose"](a, -1, -2)], {})
        return out if out.ndim == 2 else FUNCTIONS["movedim"](out, -2, 0)
    if a_vec:
        a = FUNCTIONS["unsqueeze"](a, -2)
    if b_vec:
        b = FUNCTIONS["unsqueeze"](b, -1)
    rank = max(_lnd(a, batched[0]), _lnd(b, batched[1]))
    a = _pad(a, rank) if batched[0] else a
    b = _pad(b, rank) if batched[1] else b
    out = call(OPS["matmul"], [a, b], {})
    if b_vec:
        out = FUNCTIONS["squeeze"](out, -1)
    if a_vec:
        out = FUNCTIONS["squeeze"](out, -1 if b_vec else -2)
    return out


def outer(call, op, args, batched, attrs):
    a = FUNCTIONS["unsqueeze"](args[0], -1)
    b = _pad(args[1], 2) if batched[1] else args[1]
    return elementwise(call, OPS["mul"], [a, b], batched, {})


def addmm(call, op, args, batched, attrs):
    bias, mat1, mat2 = args
    out = matmul(call, op, [mat1, mat2], batched[1:], {})
    return elementwise(call, OPS["add"], [out, bias], [batched[1] or batched[2], batched[0]],
                       {"alpha": 1})


def layer_norm(call, op, args, batched, attrs):
    """Normalises the last dims: a batched input runs as is; a batched weight or bias
    applies after the normalisation (Note [affine after normalising])."""
    if not (batched[1] or batched[2]):
        return call(op, args, attrs)
    out = call(op, [args[0], ABSENT, ABSENT], attrs)
    return _affine(call, out, batched[0], args[1:], batched[1:], ())


def group_norm(call, op, args, batched, attrs):
    """Statistics per sample: the batch folds into the samples (N); a batched weight
    or bias applies after the normalisation (Note [affine after normalising])."""
    if not (batched[1] or batched[2]):
        return fold_into_n(call, op, args, batched, attrs)
    plain = [args[0], ABSENT, ABSENT]
    out = (fold_into_n(call, op, plain, (True, False, False), attrs) if batched[0] else
           call(op, plain, attrs))
    trailing = (1,) * (_lnd(args[0], batched[0]) - 2)       # (C,) -> (C, 1, ..., 1)
    return _affine(call, out, batched[0], args[1:], batched[1:], trailing)


# Note [affine after normalising]
#     layer_norm and group_norm end with ``xhat * weight + bias``. With a weight or
#     bias per batch entry the op runs without them, and the product and sum run as
#     the element-wise ops they are, which broadcast the entries' weights (their own
#     shape, then ``trailing`` singleton dims) over the normalised values.
def _affine(call, out, out_batched, params, params_batched, trailing):
    for param, is_batched, name in zip(params, params_batched, ("mul", "add")):
        if tuple(param.shape) == (0,):                       # absent
            continue
        if trailing:
            param = FUNCTIONS["reshape"](param, tuple(param.shape) + trailing)
        attrs = {"alpha": 1} if name == "add" else {}
        out = elementwise(call, OPS[name], [out, param], [out_batched, is_batched], attrs)
        out_batched = out_batched or is_batched
    return out



def batch_norm(call, op, args, batched, attrs):
    """In evaluation with shared parameters the statistics are the running ones, shared
    by every entry: the batch folds into the samples (N). In training each entry has
    its own statistics per channel, and with a weight, bias or running statistics per
    entry (model ensembles) its own parameters: the batch folds into the channels (C),
    the entries' parameters side by side (shared ones tiled to match)."""
    if not any(batched[1:]) and not attrs["training"]:
        return fold_into_n(call, op, args, batched, attrs)
    size = _batch_size(args, batched)
    x = args[0] if batched[0] else _expand_batch(args[0], size)
    params = [a if a.numel() == 0 else FUNCTIONS["reshape"](a, (-1,)) if b else
              FUNCTIONS["repeat"](a, (size,)) for a, b in zip(args[1:], batched[1:])]
    return _batch_unfolded(call(op, [_batch_folded(x, 1)] + params, attrs), 1, size)


def embedding(call, op, args, batched, attrs):
    """A batched weight (B, V, D) or output gradient (B, ..., D); the indices are an
    attribute, shared. Rows are looked up (or accumulated) whole, so the batch folds
    into the embedding width: (V, B * D)."""
    x, reshape, movedim = args[0], FUNCTIONS["reshape"], FUNCTIONS["movedim"]
    size, width = x.shape[0], x.shape[-1]
    folded = reshape(movedim(x, 0, -2), tuple(x.shape)[1:-1] + (size * width,))
    out = call(op, [folded], attrs)
    return movedim(reshape(out, tuple(out.shape)[:-1] + (size, width)), -2, 0)

def embedding_bag(call, op, args, batched, attrs):
    """A batched weight folds into the embedding width, as for ``embedding`` (bags
    never mix columns, max mode included); batched per_sample_weights: the entries'
    bags side by side (``_bags_side_by_side``)."""
    if batched[1]:
        return _bags_side_by_side(call, op, args, batched, attrs)
    weight, reshape, movedim = args[0], FUNCTIONS["reshape"], FUNCTIONS["movedim"]
    size, width = weight.shape[0], weight.shape[-1]
    folded = reshape(movedim(weight, 0, -2), (weight.shape[1], size * width))
    out = call(op, [folded, args[1]], attrs)
    return movedim(reshape(out, (out.shape[0], size, width)), -2, 0)


def _bags_side_by_side(call, op, args, batched, attrs):
    """A weight per lookup for each entry: B * bags bags, entry b's lookups those of
    one entry into bags b * bags + its bag ids (their constant factors repeated), and
    into rows b * V + its indices of a batched (B * V, D) weight."""
    weight, weights = args
    size, bags = weights.shape[0], attrs["bags"]
    entries = np.arange(size)[:, None]
    indices = attrs["indices"][None] + entries * (weight.shape[1] if batched[0] else 0)
    repeated = {k: None if attrs[k] is None else np.tile(attrs[k], size)
                for k in ("factor", "grad_factor")}
    folded = dict(attrs, indices=indices.reshape(-1), bags=size * bags,
                  bag_ids=(attrs["bag_ids"][None] + entries * bags).reshape(-1), **repeated)
    table = FUNCTIONS["reshape"](weight, (-1, weight.shape[-1])) if batched[0] else weight
    out = call(op, [table, FUNCTIONS["reshape"](weights, (-1,))], folded)
    return FUNCTIONS["reshape"](out, (size, bags, -1))


def affine_grid(call, op, args, batched, attrs):
    """The batch folds into theta's N (the size attribute's N with it)."""
    shape, size = tuple(args[0].shape), tuple(attrs["size"])
    folded = FUNCTIONS["reshape"](args[0], (shape[0] * shape[1],) + shape[2:])
    out = call(op, [folded], dict(attrs, size=(shape[0] * size[0],) + size[1:]))
    return FUNCTIONS["reshape"](out, shape[:2] + tuple(out.shape)[1:])


def pooling(call, op, args, batched, attrs):
    """Pooling ops map any leading dims (Note [pooling windows]): the batch is one more;
    max pooling's indices batched like its input."""
    args = _materialized(args, batched)
    if "self_shape" in attrs:                 # avg_pool_backward: the input's shape
        attrs = dict(attrs, self_shape=(args[0].shape[0],) + tuple(attrs["self_shape"]))
    return call(op, args, attrs)


def einsum(call, op, args, batched, attrs):
    """A fresh label for the batch, before each batched operand's labels (and its
    ellipsis) and first in the output, once the output is spelled out."""
    equation = _explicit_output(attrs["equation"].replace(" ", ""))
    letter = next(c for c in string.ascii_letters if c not in equation)
    lhs, out = equation.split("->")
    terms = [letter + t if b else t for t, b in zip(lhs.split(","), batched)]
    return call(op, args, dict(attrs, equation=",".join(terms) + "->" + letter + out))


def _explicit_output(equation):
    """``equation`` with its output written out: in implicit mode the output is the
    ellipsis (if any), then the labels used once, in ASCII order (upper case first)."""
    if "->" in equation:
        return equation
    labels = equation.replace(",", "").replace(".", "")
    once = sorted(c for c in set(labels) if labels.count(c) == 1)
    return equation + "->" + ("..." if "..." in equation else "") + "".join(once)


def index_key(call, op, args, batched, attrs):
    """A full slice for the batch before the key. Where the key's advanced indices are
    apart, NumPy puts their dimensions first, before the batch one: it moves back."""
    key = attrs["key"]
    key = key if isinstance(key, tuple) else (key,)
    lead = 0 if _advanced_adjacent(key) else _advanced_ndim(key)
    attrs = dict(attrs, key=(slice(None),) + key)
    if op.name != "index_put":                          # index, masked_select
        out = call(op, args, attrs)
        return FUNCTIONS["movedim"](out, lead, 0) if lead else out
    args = _materialized(args, batched)
    if batched[1] or lead:          # values laid out like the result, batch dim included
        rank = args[0]._data[0][key].ndim if args[0].shape[0] else 0
        args[1] = _pad(args[1], rank)
        args[1] = FUNCTIONS["movedim"](args[1], 0, lead) if lead else args[1]
    return call(op, args, attrs)


def _is_advanced(k):
    return not isinstance(k, (slice, int, type(None), type(Ellipsis)))


def _advanced_adjacent(key):
    """Whether the advanced (array) indices of ``key`` sit side by side: then NumPy
    keeps the dimensions before them, the batch one included, in place."""
    positions = [i for i, k in enumerate(key) if _is_advanced(k)]
    return not positions or positions[-1] - positions[0] == len(positions) - 1


def _advanced_ndim(key):
    """How many dimensions the advanced indices give (a mask of any rank gives one)."""
    arrays = [np.asarray(k) for k in key if _is_advanced(k)]
    return max(1 if a.dtype == np.bool_ else a.ndim for a in arrays)


def solve(call, op, args, batched, attrs):
    """linalg.solve / solve_triangular: a vector right-hand side becomes a column."""
    a, b = args
    a_shape = tuple(a.shape)[1:] if batched[0] else tuple(a.shape)
    b_shape = tuple(b.shape)[1:] if batched[1] else tuple(b.shape)
    vector = len(b_shape) == 1 or (op.name == "linalg_solve" and b_shape == a_shape[:-1])
    if vector:
        b = FUNCTIONS["unsqueeze"](b, -1)
    a, b = _materialized([a, b], batched)
    rank = max(a.ndim, b.ndim) - 1
    out = call(op, [_pad(a, rank), _pad(b, rank)], attrs)
    return FUNCTIONS["squeeze"](out, -1) if vector else out


def squeeze_all(call, op, args, batched, attrs):
    ones = tuple(d for d, n in enumerate(tuple(args[0].shape)) if n == 1 and d > 0)
    return call(op, args, dict(attrs, dim=ones))


def roll(call, op, args, batched, attrs):
    if attrs["dims"] is not None:
        return call(op, args, _shifted(attrs))
    x = args[0]                     # a roll of the flattened entry
    flat = FUNCTIONS["reshape"](x, (x.shape[0], -1))
    out = call(op, [flat], dict(attrs, dims=(1,)))
    return FUNCTIONS["reshape"](out, tuple(x.shape))


def trace(call, op, args, batched, attrs):
    return FUNCTIONS["sum"](FUNCTIONS["diagonal"](args[0], 0, 1, 2), -1)


def constant_pad(call, op, args, batched, attrs):
    """The pad widths run over every dimension: none for the batch one."""
    pads = tuple(attrs["pads"])
    if len(pads) == args[0].ndim - 1:
        pads = ((0, 0),) + pads
    return call(op, args, dict(attrs, pads=pads))


def mse_loss(call, op, args, batched, attrs):
    losses = elementwise(call, op, args, batched, dict(attrs, reduction="none"))
    if attrs["reduction"] == "none":
        return losses
    if losses.ndim == 1:
        return losses
    reduce = FUNCTIONS["sum" if attrs["reduction"] == "sum" else "mean"]
    return reduce(losses, tuple(range(1, losses.ndim)))


def hinge_loss(call, op, args, batched, attrs):
    """multilabel_margin_loss, multi_margin_loss: one loss per row of (N, C) (or of
    the one row (C,), or of the one class of a 0-d input); the entries' rows run as
    one (B * N, C) loss without reduction, each entry's losses reduced after. A weight
    per entry weighs each row's loss by its target's weight (the op's weight is that
    factor), so the rows run unweighted and are weighted after."""
    x, target = _materialized(args, batched)[:2]
    size = x.shape[0]
    classes = x.shape[-1] if _lnd(args[0], batched[0]) else 1
    target_shape = (-1, classes) if op.name == "multilabel_margin_loss" else (-1,)
    rows = [FUNCTIONS["reshape"](x, (-1, classes)), FUNCTIONS["reshape"](target, target_shape)]
    weighted = len(args) > 2 and batched[2]
    losses = call(op, rows + ([ABSENT] if weighted else list(args[2:])),
                  dict(attrs, reduction="none", out_shape=(rows[0].shape[0],)))
    losses = FUNCTIONS["reshape"](losses, (size, -1))
    if weighted:                 # (the weight takes no gradient: its values only)
        targets = FUNCTIONS["reshape"](rows[1], (size, -1))
        losses = FUNCTIONS["mul"](losses, FUNCTIONS["gather"](args[2].detach(), 1, targets))
    if attrs["reduction"] == "none":
        return FUNCTIONS["reshape"](losses, (size,) + tuple(attrs["out_shape"]))
    return FUNCTIONS["sum" if attrs["reduction"] == "sum" else "mean"](losses, (1,))


# Note [targets along a trailing dimension]
#     nll_loss and its backward hold the targets (and each element's weight, where
#     they are ignored) as attributes, shared by the batch entries. The loss over
#     (N, C, *d) is the K-dimensional one, so a batched input (B, N, C, *d) runs
#     once as (N, C, *d, B): the batch is one more trailing dimension, the targets
#     broadcast along it (no copy). It runs as the "none" loss: per-entry sums are
#     its sums over all but the batch, a mean weights each element by its share
#     w / sum(w) (nan where the weights sum to 0, as the reference divides), and the
#     backward of a sum or mean is the element-wise one with the gradient broadcast.
def _per_element(attrs, size, dtype):
    """The attributes of the "none" loss along the batch (the Note above)."""
    if attrs["reduction"] == "mean":
        weight = attrs["element_weight"]
        weight = np.ones(attrs["safe_target"].shape, dtype) if weight is None else weight
        with np.errstate(invalid="ignore", divide="ignore"):
            attrs = dict(attrs, element_weight=weight / dtype.type(attrs["divisor"]))

    def along(a):
        return None if a is None else np.broadcast_to(a[..., None], a.shape + (size,))
    names = ("safe_target", "element_weight", "ignored")
    return dict(attrs, reduction="none", **{k: along(attrs[k]) for k in names})


def nll_loss(call, op, args, batched, attrs):
    """Note [targets along a trailing dimension]; an unbatched input (C,) is the one
    sample (1, C)."""
    x = FUNCTIONS["movedim"](args[0], 0, -1)
    one_sample = x.ndim == 2
    if one_sample:
        x = FUNCTIONS["unsqueeze"](x, 0)
    losses = call(op, [x, *args[1:]], _per_element(attrs, x.shape[-1], x._data.dtype))
    if attrs["reduction"] == "none":
        losses = FUNCTIONS["squeeze"](losses, 0) if one_sample else losses
        return FUNCTIONS["movedim"](losses, -1, 0)
    return FUNCTIONS["sum"](losses, tuple(range(losses.ndim - 1)))


def nll_loss_backward(call, op, args, batched, attrs):
    """Note [targets along a trailing dimension]; an unbatched input (C,) is the one
    sample (1, C)."""
    g, size = args[0], args[0].shape[0]
    element = _per_element(attrs, size, g._data.dtype)
    self_shape = tuple(attrs["self_shape"])
    one_sample = len(self_shape) == 1
    if attrs["reduction"] == "none":
        g = FUNCTIONS["movedim"](g, 0, -1)
        g = FUNCTIONS["unsqueeze"](g, 0) if one_sample else g
    else:                                   # one gradient per entry, for each element
        g = FUNCTIONS["expand"](g, element["safe_target"].shape)
    shape = ((1,) if one_sample else ()) + self_shape + (size,)
    grad = FUNCTIONS["movedim"](call(op, [g], dict(element, self_shape=shape)), -1, 0)
    return FUNCTIONS["squeeze"](grad, 1) if one_sample else grad


def _batch_folded(t, dim):
    """(B, ..., N, ...) with N at logical ``dim`` -> (..., B * N, ...): the entries' samples
    side by side."""
    moved = FUNCTIONS["movedim"](t, 0, dim) if dim else t
    shape = tuple(moved.shape)
    return FUNCTIONS["reshape"](moved, shape[:dim] + (shape[dim] * shape[dim + 1],) + shape[dim + 2:])


def _batch_unfolded(t, dim, size):
    """Inverse of :func:`_batch_folded`."""
    shape = tuple(t.shape)
    split = FUNCTIONS["reshape"](t, shape[:dim] + (size, shape[dim] // size) + shape[dim + 1:])
    return FUNCTIONS["movedim"](split, dim, 0) if dim else split


def ctc_loss(call, op, args, batched, attrs):
    """_ctc_loss and its backward: the batch folds into the loss's samples N (dim 1 of
    (T, N, C) log-probabilities and of the gradient, dim 0 of the others), each entry's
    lengths repeated."""
    size = _batch_size(args, batched)
    folded = [_batch_folded(a, 1 if a.ndim == 4 else 0) for a in _materialized(args, batched)]
    attrs = dict(attrs, input_lengths=tuple(attrs["input_lengths"]) * size,
                 target_lengths=tuple(attrs["target_lengths"]) * size)
    out = call(op, folded, attrs)
    return _batch_unfolded(out, 1 if out.ndim == 3 else 0, size)


def _stacked_rows(t):
    """(B, O, *rest) -> (B * O, *rest): the entries' weights as one grouped weight."""
    shape = tuple(t.shape)
    return FUNCTIONS["reshape"](t, (shape[0] * shape[1],) + shape[2:])


# Note [entries as groups]
#     A convolution whose weight differs per batch entry is one grouped convolution:
#     the entries' channels side by side (N, B * C, *S), their weights stacked
#     (B * O, I / g, *k) and B times the groups. Group b * g + k then reads entry b's
#     channels of its group k and writes that entry's outputs, so nothing mixes
#     across entries. The same folding gives the weight gradient of batched inputs
#     (one weight gradient per entry) and the input gradient of batched weights.
def convolution(call, op, args, batched, attrs):
    """A batched input only: the batch folds into the convolution's own batch (N); a
    batched weight or bias: Note [entries as groups] (transposed ones too: their
    weights' first dimension is the input channels, which the groups split alike)."""
    x, w, bias = args
    if batched[1] or batched[2]:
        if x.ndim - batched[0] != w.ndim - batched[1]:         # an entry without N
            out = convolution(call, op, [FUNCTIONS["unsqueeze"](x, int(batched[0])), w, bias],
                              batched, attrs)
            return FUNCTIONS["squeeze"](out, 1)
        size = _batch_size(args, batched)
        x, w = [a if b else _expand_batch(a, size) for a, b in zip((x, w), batched)]
        if bias is not None and bias.numel():
            bias = _stacked_rows(bias if batched[2] else _expand_batch(bias, size))
        out = call(op, [_batch_folded(x, 1), _stacked_rows(w), bias],
                   dict(attrs, groups=attrs["groups"] * size))
        return _batch_unfolded(out, 1, size)
    if x.ndim == w.ndim:                     # unbatched entries: (B, C, H, W) is N-form
        return call(op, [x, w, bias], attrs)
    return fold_into_n(call, op, args, batched, attrs)



def conv_input_grad(call, op, args, batched, attrs):
    """A batched output gradient only: the batch folds into N; a batched weight: Note
    [entries as groups]."""
    g, w = args
    size, (n, c) = _batch_size(args, batched), tuple(attrs["input_shape"])[:2]
    rest = tuple(attrs["input_shape"])[2:]
    if not batched[1]:
        out = call(op, [_batch_folded(g, 0), w], dict(attrs, input_shape=(size * n, c) + rest))
        return _batch_unfolded(out, 0, size)
    g = g if batched[0] else _expand_batch(g, size)
    out = call(op, [_batch_folded(g, 1), _stacked_rows(w)],
               dict(attrs, groups=attrs["groups"] * size, input_shape=(n, size * c) + rest))
    return _batch_unfolded(out, 1, size)


def conv_weight_grad(call, op, args, batched, attrs):
    """One weight gradient per entry: Note [entries as groups]."""
    x, g = _materialized(args, batched)
    size, shape = x.shape[0], tuple(attrs["weight_shape"])
    out = call(op, [_batch_folded(x, 1), _batch_folded(g, 1)],
               dict(attrs, groups=attrs["groups"] * size, weight_shape=(size * shape[0],) + shape[1:]))
    return FUNCTIONS["reshape"](out, (size,) + shape)

def fold_into_n(call, op, args, batched, attrs):
    """An op over (N, C, *) whose first input only is batched: the batch folds into N
    (the other inputs pass as they are)."""
    out = call(op, [_batch_folded(args[0], 0)] + list(args[1:]), attrs)
    return _batch_unfolded(out, 0, args[0].shape[0])


def dist(call, op, args, batched, attrs):
    """dist: each entry's p-norm of its difference, over every dim but the batch one (a
    0-d entry per entry)."""
    rank = max(_lnd(a, b) for a, b in zip(args, batched))
    if rank == 0:
        return per_entry(call, op, args, batched, attrs)
    a, b = [_pad(t, rank) if is_batched else t for t, is_batched in zip(args, batched)]
    difference = FUNCTIONS["sub"](a, b)
    return FUNCTIONS["norm"](difference, attrs["p"], tuple(range(1, difference.ndim)))


def conv_tbc(call, op, args, batched, attrs):
    """conv_tbc over (T, N, C) by (K, C, O): a batched input alone folds the batch into
    N; a batched weight or bias (the input shared) into the output channels O; an input
    and a weight both batched run per entry."""
    reshape, permute = FUNCTIONS["reshape"], FUNCTIONS["permute"]
    if not batched[0]:
        weight, bias = _materialized(args[1:], batched[1:])
        size, (k, c, o) = weight.shape[0], weight.shape[1:]
        weight = reshape(permute(weight, (1, 2, 0, 3)), (k, c, size * o))
        out = call(op, [args[0], weight, reshape(bias, (size * o,))], attrs)
        out = reshape(out, tuple(out.shape[:2]) + (size, o))
        return permute(out, (2, 0, 1, 3))
    if batched[1] or batched[2]:
        return per_entry(call, op, args, batched, attrs)
    x = args[0]
    size, time, n = x.shape[0], x.shape[1], x.shape[2]
    out = call(op, [reshape(permute(x, (1, 0, 2, 3)), (time, size * n, -1))] + list(args[1:]),
               attrs)
    return permute(reshape(out, (out.shape[0], size, n, -1)), (1, 0, 2, 3))


def grid_sampler(call, op, args, batched, attrs):
    """grid_sampler_2d/3d sample each of N on its own: the batch folds into N of both
    the input and the grid (an unbatched one expanded to the batch first)."""
    input, grid = _materialized(args, batched)
    out = call(op, [_batch_folded(input, 0), _batch_folded(grid, 0)], attrs)
    return _batch_unfolded(out, 0, input.shape[0])


def flash_attention(call, op, args, batched, attrs):
    """The fused attention op over (B, H, L, E): the batch folds into B (a mask with
    its own B repeated once per entry; a fresh scratch for the folded call)."""
    query, key, value = _materialized(args, batched)
    size, mask = query.shape[0], attrs["attn_mask"]
    if mask is not None and mask.ndim == 4 and mask.shape[0] > 1:
        mask = np.concatenate([mask] * size)
    out = call(op, [_batch_folded(t, 0) for t in (query, key, value)],
               dict(attrs, attn_mask=mask, scratch={}))
    return _batch_unfolded(out, 0, size)


def per_entry(call, op, args, batched, attrs):
    """The fallback: the op once per batch entry, the results stacked (with the
    reference's warning where it falls back too)."""
    if LOOP_LOG is not None:
        LOOP_LOG.add(op.name)
    if op.name in REFERENCE_FALLBACKS:
        warnings.warn(PERFORMANCE_DROP.format(REFERENCE_FALLBACKS[op.name]), UserWarning)
    size = _batch_size(args, batched)       # clone: as_strided reads from a row's start
    rows = [call(op, [FUNCTIONS["select"](a, 0, i).clone() if b else a
                      for a, b in zip(args, batched)], attrs) for i in range(size)]
    if op.multi_output:
        return tuple(FUNCTIONS["stack"]([r[k] for r in rows]) for k in range(len(rows[0])))
    return FUNCTIONS["stack"](rows)


# --- the table -------------------------------------------------------------------------
def _module_ops(module):
    return {v.name for v in vars(module).values() if getattr(v, "forward", None) is not None
            and getattr(v, "name", None) in OPS}


_NUMPY_ELEMENTWISE = {
    "mul", "div", "maximum", "minimum", "remainder", "remainder_tensor", "floor_divide", "neg",
    "exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "abs", "sign", "conj", "real",
    "imag", "floor", "ceil", "round", "trunc", "clone", "atan", "asinh", "rad2deg",
    "deg2rad", "clamp_min_tensor", "clamp_max_tensor", "atan2", "hypot", "copysign",
    "logaddexp", "logaddexp2", "fmax", "fmin", "heaviside"}
_NN_ELEMENTWISE = {"gelu", "silu", "softplus", "leaky_relu", "elu", "celu", "prelu_kernel",
                   "rrelu_with_noise", "hardtanh",
                   "hardsigmoid", "hardswish", "mish", "softsign", "tanhshrink", "softshrink",
                   "hardshrink", "threshold", "log_sigmoid"}
_REDUCTIONS = {"sum", "sum_dim", "mean", "mean_dim", "prod", "prod_dim", "var", "std",
               "amax", "amin", "max", "min", "logsumexp", "linalg_vector_norm", "norm_dim", "nansum", "softmax", "_safe_softmax", "log_softmax", "cumsum", "cumprod",
               "logcumsumexp", "median", "nanmedian"}
_LAST_DIMS = {"tril", "triu", "view_as_real", "view_as_complex", "linalg_det",
              "linalg_slogdet", "linalg_inv", "linalg_cholesky", "linalg_qr", "linalg_svd",
              "linalg_eigh", "linalg_eig", "linalg_matrix_exp", "linalg_pinv",
              "complex", "polar", "fill", "fill_tensor", "fill_out", "fill_out_tensor", "zero",
              "contiguous", "alias", "to_copy",
              "_cdist_forward", "_euclidean_dist", "cholesky_solve", "cholesky_inverse",
              "linalg_lu"}
_SHIFT_DIMS = {"glu", "transpose", "unsqueeze", "squeeze_dim", "squeeze_dims", "cat", "stack",
               "split", "split_with_sizes", "unbind", "flip", "diagonal", "diagonal_copy",
               "diag_embed", "diagonal_scatter", "rot90", "select", "slice",
               "select_scatter", "slice_scatter", "linalg_cross",
               "max_dim", "min_dim", "sort", "sort_stable", "topk", "kthvalue", "median_dim",
               "nanmedian_dim", "cummax", "cummin"}
_GATHER_SCATTER = ("gather", "scatter_add", "scatter", "scatter_multiply", "scatter_value",
                   "scatter_reduce")
_SHIFT_DIMS |= {"fft_c2c", "fft_r2c", "fft_c2r"}

RULES = {}
RULES.update({n: elementwise for n in (_module_ops(_elementwise) | _NUMPY_ELEMENTWISE |
                                       _NN_ELEMENTWISE) - {"copy"}})
RULES.update({n: elementwise for n in _module_ops(_special_functions)})
RULES.update({n: reduction for n in _REDUCTIONS})
RULES.update({n: shift_dims for n in _SHIFT_DIMS})
RULES.update({n: last_dims for n in _LAST_DIMS})
RULES["unfold"] = unfold
RULES.update({n: gather_or_scatter for n in _GATHER_SCATTER})
RULES.update({name: zero_dim_as_vectors(by_index(by_entry)) for name, by_entry in (
    ("index_select", index_select_by_entry), ("index_add", index_add_by_entry),
    ("index_copy", index_copy_by_entry), ("index_fill", index_fill_by_entry))})
RULES.update({n: matmul for n in ("matmul", "mm", "bmm", "mv", "dot")})
RULES.update({"copy": elementwise_on_self, "masked_fill": elementwise_on_self,
              "masked_fill_tensor": elementwise_on_self, "view": prepend_shape,
              "_unsafe_view": prepend_shape, "expand": prepend_shape, "repeat": prepend_shape,
              "permute": permute, "as_strided": as_strided_rule, "t": transpose_2d,
              "outer": outer, "addmm": addmm,
              "einsum": einsum, "index": index_key, "index_put": index_key,
              "masked_select": index_key,
              "linalg_solve": solve, "linalg_solve_triangular": solve, "linalg_lstsq": solve,
              "squeeze": squeeze_all, "roll": roll, "trace": trace, "mse_loss": mse_loss, "smooth_l1_loss": mse_loss,
              "huber_loss": mse_loss, "binary_cross_entropy": mse_loss,
              "binary_cross_entropy_with_logits": mse_loss,
              "convolution": convolution, "conv2d_input_grad": conv_input_grad,
              "conv2d_weight_grad": conv_weight_grad, "constant_pad_nd": constant_pad,
              "native_layer_norm": layer_norm, "native_group_norm": group_norm,
              "native_batch_norm": batch_norm, "embedding": embedding,
              "embedding_dense_backward": embedding, "nll_loss": nll_loss, "nll_loss2d": nll_loss,
              "nll_loss_backward": nll_loss_backward, "take": take,
              "index_fill_tensor": index_fill_tensor, "_ctc_loss": ctc_loss,
              "_ctc_loss_backward": ctc_loss})
RULES.update({n: pooling for n in _pooling.OP_NAMES})
RULES.update({n: last_dims for n in _upsample.OP_NAMES + _padding.OP_NAMES + _shuffle.OP_NAMES})
RULES["channel_shuffle"] = fold_into_n
RULES.update({"dist": dist, "conv_tbc": conv_tbc})
RULES["_embedding_bag"] = embedding_bag
RULES.update({n: grid_sampler for n in _grid_sampler.OP_NAMES})
RULES["_scaled_dot_product_flash_attention_for_cpu"] = flash_attention
RULES["soft_margin_loss"] = mse_loss                 # element-wise losses, then the reduction
RULES.update({n: hinge_loss for n in ("multilabel_margin_loss", "multi_margin_loss")})
RULES["affine_grid_generator"] = affine_grid
RULES.update({n: last_dims for n in _im2col.OP_NAMES + _unpooling.OP_NAMES  # leading: batch
              + _distance.OP_NAMES})
RULES = {n: r for n, r in RULES.items() if n in OPS}

LOOPED = frozenset(OPS) - set(RULES)


def rule_for(op):
    return RULES.get(op.name, per_entry)
