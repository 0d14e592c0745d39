"""Samples for the shape family: views and reshapes (``_ops/shape.py``), joins and
splits, flips and repeats, indexing (``_ops/indexing.py``) and in-place writes through
views (CopySlices, ``_ops/views.py``).

Index tensors and masks are explicit integer/bool Tensors (not differentiated). Calls
use Tensor methods where torch has the same ones, so ``torch_call`` defaults to the
same lambda; functions that exist only as ``cr.<name>`` get a torch twin. Scatter
samples with ``src`` use indices without repeats (which value wins is unspecified).
"""
import numpy as np

import chainrule as cr

from . import Sample


def _torch():
    import torch
    return torch


def _idx(*values):
    return cr.tensor(values, dtype=cr.int64)


def _mask(*shape, seed=1):
    values = np.random.default_rng(seed).random(shape) > 0.5
    if values.size >= 2:
        values.flat[0], values.flat[1] = True, False
    return cr.tensor(values)


def _both(op, call, real, complex, **kw):
    """Samples of ``call`` on each input tuple in ``real`` and (complex) in ``complex``."""
    note = kw.pop("note", "")
    return ([Sample(op, call, *inputs, note=note, **kw) for inputs in real] +
            [Sample(op, call, *inputs, complex=True, note=note + "-complex", **kw)
             for inputs in complex])


def _key_for(x, key):
    """An index key whose chainrule tensors are converted to ``x``'s library, so the
    same sample call runs on torch in the parity tier."""
    if isinstance(x, cr.Tensor):
        return key
    import torch
    convert = (lambda k: torch.from_numpy(k.numpy().copy()) if isinstance(k, cr.Tensor) else k)
    return tuple(convert(k) for k in key) if isinstance(key, tuple) else convert(key)


def _put(key, accumulate=False):
    """``y = x.clone(); y[key] = v`` (or ``+=`` with accumulate) as a pure function."""
    def call(x, v):
        key_ = _key_for(x, key)
        y = x.clone()
        if accumulate:
            y.index_put_(key_, v, accumulate=True)
        else:
            y[key_] = v
        return y
    return call


def _write_through_view(view, method, *args):
    """``y = x.clone(); view(y).<method>(*args); return y``: in-place through a view."""
    def call(x, *tensors):
        y = x.clone()
        getattr(view(y), method)(*(tensors + args))
        return y
    return call


def _zeros_at(s):
    """Multiplies the first element of each row by 0 (exact zeros in a prod's factors);
    in ``s``'s library."""
    values = np.ones(tuple(s.shape))
    values[..., 0] = 0
    values[0, 1] = 0
    if isinstance(s, cr.Tensor):
        return cr.tensor(values, dtype=s.dtype, device=s.device)
    import torch
    return torch.tensor(values, dtype=s.dtype)


T = _torch
IDX = _idx(0, 2, 0)                      # with a repeat: gradients accumulate
MASK34 = _mask(3, 4)

SAMPLES = [
    # --- view / reshape / flatten ---------------------------------------------------
    *_both("view", lambda x: x.view(4, 3), [((3, 4),)], [((6, 2),)]),
    Sample("view", lambda x: x.view(-1), (2, 3, 4)),
    Sample("view", lambda x: x.view(()), (1,), note="-to-0d"),
    Sample("view", lambda x: x.view(3, 0), (0, 3), note="-empty"),
    Sample("view", lambda x: x.t().view(2, 2, 3), (3, 4), note="-of-transposed"),
    Sample("view", lambda x: x.reshape(2, 6), (3, 4), note="-reshape"),
    Sample("view", lambda x: x.flatten(1), (2, 3, 4), note="-flatten"),
    Sample("view", lambda x: x.unflatten(1, (2, -1)), (3, 4), note="-unflatten"),
    *_both("_unsafe_view", lambda x: x.t().reshape(-1), [((3, 4),)], [((2, 3),)]),
    Sample("_unsafe_view", lambda x: x.transpose(0, 2).flatten(), (2, 3, 4), note="-flatten"),
    Sample("alias", lambda x: x[...], (3, 4)),
    Sample("alias", lambda x: x.transpose(0, -1), (), note="-0d-transpose"),
    # --- expand / permute / transpose / t / (un)squeeze --------------------------------
    *_both("expand", lambda x: x.expand(3, 4), [((3, 1),), ((4,),), ((),)], [((1, 4),)]),
    Sample("expand", lambda x: x.expand(2, -1, 0), (1, 0), note="-empty"),
    Sample("expand", lambda x: x.expand(2, 3, 4), (4,), note="-new-dims"),
    Sample("expand", lambda x: cr.broadcast_to(x, (2, 3)), (3,), note="-broadcast_to",
           torch_call=lambda x: T().broadcast_to(x, (2, 3))),
    *_both("permute", lambda x: x.permute(2, 0, 1), [((2, 3, 4),), ((0, 1, 2),)],
           [((2, 1, 3),)]),
    Sample("permute", lambda x: x.movedim(0, -1), (2, 3, 4), note="-movedim"),
    Sample("permute", lambda x: x.T, (2, 3), note="-T"),
    *_both("transpose", lambda x: x.transpose(0, 1), [((3, 4),), ((0, 2),)], [((2, 3),)]),
    Sample("transpose", lambda x: x.mT, (2, 3, 4), note="-mT"),
    Sample("transpose", lambda x: x.swapaxes(-1, 0), (2, 3, 4), note="-swapaxes"),
    *_both("t", lambda x: x.t(), [((3, 4),), ((3,),), ((),)], [((2, 3),)]),
    *_both("unsqueeze", lambda x: x.unsqueeze(-1), [((3,),), ((2, 3),), ((),)], [((2,),)]),
    *_both("squeeze", lambda x: x.squeeze(), [((1, 3, 1),), ((),), ((2, 3),)], [((1, 2),)]),
    *_both("squeeze_dim", lambda x: x.squeeze(0), [((1, 3),), ((2, 3),)], [((1, 2),)]),
    *_both("squeeze_dims", lambda x: x.squeeze((0, 2)), [((1, 3, 1),), ((1, 3, 2),)],
           [((1, 2, 1),)]),
    *_both("contiguous", lambda x: x.t().contiguous(), [((3, 4),)], [((2, 3),)]),
    Sample("contiguous", lambda x: x[:, ::2].contiguous(), (3, 5), note="-strided"),
    # --- cat / stack ---------------------------------------------------------------------
    *_both("cat", lambda a, b: cr.cat([a, b]), [((2, 3), (1, 3)), ((2,), (0,))],
           [((2, 3), (2, 3))], torch_call=lambda a, b: T().cat([a, b])),
    Sample("cat", lambda a, b: cr.cat([a, b], dim=1), (2, 3), (2, 0), note="-dim1",
           torch_call=lambda a, b: T().cat([a, b], dim=1)),
    Sample("cat", lambda a, b, c: cr.cat((a, b, c), -1), (2,), (3,), (1,), note="-three",
           torch_call=lambda a, b, c: T().cat((a, b, c), -1)),
    Sample("cat", lambda a, b: cr.cat([a, b], 1), (2, 3), (0,), note="-skips-empty-1d",
           torch_call=lambda a, b: T().cat([a, b], 1)),
    Sample("cat", lambda a: cr.cat([a]), (2, 3), note="-one",
           torch_call=lambda a: T().cat([a])),
    *_both("stack", lambda a, b: cr.stack([a, b]), [((3,), (3,)), ((), ())],
           [((2, 3), (2, 3))], torch_call=lambda a, b: T().stack([a, b])),
    Sample("stack", lambda a, b, c: cr.stack([a, b, c], dim=-1), (2, 3), (2, 3), (2, 3),
           note="-three-last", torch_call=lambda a, b, c: T().stack([a, b, c], dim=-1)),
    Sample("stack", lambda a, b: cr.stack([a, b], 1), (0, 2), (0, 2), note="-empty",
           torch_call=lambda a, b: T().stack([a, b], 1)),
    # --- split / chunk / unbind (multi-output views) ------------------------------------
    *_both("split", lambda x: x.split(2), [((5, 3),), ((0, 2),)], [((3, 2),)]),
    Sample("split", lambda x: x.split(1, dim=1), (2, 3), note="-dim1"),
    Sample("split", lambda x: x.chunk(2), (5, 3), note="-chunk"),
    Sample("split", lambda x: x.split(2)[0], (5, 3), note="-one-output-used"),
    *_both("split_with_sizes", lambda x: x.split([1, 3, 1]), [((5, 2),)], [((5,),)]),
    Sample("split_with_sizes", lambda x: x.split([0, 2], 1), (3, 2), note="-empty-piece"),
    Sample("split_with_sizes", lambda x: x.chunk(3), (0, 2), note="-chunk-empty"),
    *_both("unbind", lambda x: x.unbind(), [((3, 2),), ((1,),)], [((2, 3),)]),
    Sample("unbind", lambda x: x.unbind(1)[2], (2, 3), note="-dim1-one-used"),
    # --- flip / roll / repeat / tile -------------------------------------------------------
    *_both("flip", lambda x: x.flip(0), [((3, 4),), ((0, 2),)], [((3,),)]),
    Sample("flip", lambda x: x.flip(0, -1), (2, 3, 2), note="-two-dims"),
    Sample("flip", lambda x: cr.fliplr(x), (2, 3), note="-fliplr",
           torch_call=lambda x: T().fliplr(x)),
    *_both("roll", lambda x: x.roll(1), [((3, 4),), ((5,),)], [((2, 3),)]),
    Sample("roll", lambda x: x.roll((1, -2), (0, 1)), (3, 4), note="-dims"),
    Sample("roll", lambda x: x.roll(4, 1), (2, 3), note="-wraps"),
    *_both("repeat", lambda x: x.repeat(2, 3), [((2, 3),), ((3,),), ((),)], [((2,),)]),
    Sample("repeat", lambda x: x.repeat(2, 1, 2), (3,), note="-new-dims"),
    Sample("repeat", lambda x: x.repeat(0, 2), (2, 3), note="-zero"),
    Sample("repeat", lambda x: x.tile((2,)), (2, 3), note="-tile"),
    # --- diagonal / diag / diag_embed ------------------------------------------------------
    *_both("diagonal", lambda x: x.diagonal(), [((3, 4),), ((4, 3),)], [((3, 3),)]),
    Sample("diagonal", lambda x: x.diagonal(1), (3, 4), note="-offset"),
    Sample("diagonal", lambda x: x.diagonal(-1, 0, 2), (3, 2, 4), note="-dims"),
    Sample("diagonal", lambda x: x.diagonal(5), (3, 4), note="-empty"),
    *_both("diagonal_copy", lambda x: cr.diag(x), [((3, 4),)], [((2, 2),)],
           torch_call=lambda x: T().diag(x)),
    Sample("diagonal_copy", lambda x: cr.diag(x, -1), (3, 4), note="-offset",
           torch_call=lambda x: T().diag(x, -1)),
    *_both("diag_embed", lambda x: cr.diag(x), [((3,),), ((0,),)], [((2,),)],
           torch_call=lambda x: T().diag(x)),
    Sample("diag_embed", lambda x: cr.diag(x, 1), (3,), note="-offset",
           torch_call=lambda x: T().diag(x, 1)),
    Sample("diag_embed", lambda x: cr.diag_embed(x, -1, 0, 2), (2, 3), note="-dims",
           torch_call=lambda x: T().diag_embed(x, -1, 0, 2)),
    # --- select / slice / narrow (basic indexing: views) ----------------------------------
    *_both("select", lambda x: x.select(0, 1), [((3, 4),), ((3,),)], [((2, 3),)]),
    Sample("select", lambda x: x[-1], (3, 4), note="-getitem"),
    Sample("select", lambda x: x[0, 2], (3, 4), note="-two-ints"),
    Sample("select", lambda x: x[..., 1], (2, 3, 4), note="-ellipsis"),
    Sample("select", lambda x: x[_key_for(x, _idx(1)[0])], (3, 4), note="-0d-index-tensor"),
    *_both("slice", lambda x: x[1:3], [((4, 2),), ((3,),)], [((4,),)]),
    Sample("slice", lambda x: x[:, ::2], (3, 5), note="-step"),
    Sample("slice", lambda x: x[::3], (7,), note="-step3"),
    Sample("slice", lambda x: x[1:1], (3, 2), note="-empty"),
    Sample("slice", lambda x: x[:], (3,), note="-full"),
    Sample("slice", lambda x: x[None, 1:, None, -2:], (3, 4), note="-mixed-none"),
    Sample("slice", lambda x: x.narrow(1, 1, 2), (3, 4), note="-narrow"),
    # --- advanced indexing (a copy; repeats accumulate) -----------------------------------
    *_both("index", lambda x, i: x[i], [((3, 4), IDX), ((3,), IDX)], [((3, 2), IDX)]),
    Sample("index", lambda x, m: x[m], (3, 4), MASK34, note="-mask"),
    Sample("index", lambda x, m: x[m], (3, 4), _mask(3, seed=3), note="-row-mask"),
    Sample("index", lambda x, i: x[:, i], (3, 4), _idx(3, 3, 1), note="-dim1"),
    Sample("index", lambda x, i: x[i], (3,), _idx([0, 1], [2, 2]), note="-2d-index"),
    Sample("index", lambda x: x[[0, 1], [1, 1]], (3, 4), note="-lists"),
    Sample("index", lambda x, i: x[0, i], (3, 4), _idx(1, 1), note="-int-and-tensor"),
    Sample("index", lambda x, i: x[i, :, i], (3, 2, 3), IDX, note="-separated"),
    Sample("index", lambda x, i: x[None, i], (3, 2), IDX, note="-none"),
    Sample("index", lambda x: x[True], (3,), note="-true"),
    Sample("index", lambda x, i: x[i], (0, 3), cr.tensor([], dtype=cr.int64), note="-empty"),
    # --- __setitem__ / index_put ------------------------------------------------------------
    *_both("index_put", _put((_idx(0, 2),)), [((3, 4), (2, 4)), ((3, 4), (4,))],
           [((3, 2), (2, 2))]),
    Sample("index_put", _put((MASK34,)), (3, 4), (), note="-mask-0d-value"),
    Sample("index_put", _put((IDX,), accumulate=True), (3, 4), (3, 4), note="-accumulate"),
    Sample("index_put", lambda x, v: x.index_put(_key_for(x, (_idx(0, 0),)), v, True), (3,), (2,),
           note="-functional"),
    Sample("index_put", _put((slice(None), _idx(1))), (3, 4), (3, 1), note="-dim1"),
    Sample("index_put", _put((slice(1, None), _idx(2, 0))), (3, 4), (2, 2), note="-on-view"),
    Sample("copy", lambda x, v: _put((0,))(x, v), (3, 4), (4,), note="-setitem-basic"),
    Sample("copy", lambda x, v: _put((slice(1, None), 1))(x, v), (3, 4), (1, 2),
           note="-setitem-strip-leading-1"),
    Sample("fill", lambda x: _put((slice(None), 0))(x, 2.0), (3, 4), note="-setitem-scalar"),
    # --- index_select / index_add / gather / scatter --------------------------------------
    *_both("index_select", lambda x, i: x.index_select(0, i), [((3, 4), IDX), ((3,), IDX)],
           [((3, 2), IDX)]),
    Sample("index_select", lambda x, i: x.index_select(1, i), (2, 4), _idx(3, 0, 3),
           note="-dim1"),
    Sample("index_select", lambda x, i: x.index_select(0, i), (3, 2), _idx(1)[0],
           note="-0d-index"),
    Sample("index_select", lambda x, i: x.index_select(0, i), (3, 2),
           cr.tensor([], dtype=cr.int64), note="-empty"),
    *_both("index_add", lambda x, i, s: x.index_add(0, i, s), [((3, 4), IDX, (3, 4))],
           [((3, 2), IDX, (3, 2))]),
    Sample("index_add", lambda x, i, s: x.index_add(1, i, s, alpha=2.5), (2, 4),
           _idx(1, 1), (2, 2), note="-alpha-dim1"),
    *_both("gather", lambda x, i: x.gather(1, i), [((3, 4), _idx([0, 0], [3, 1], [2, 2]))],
           [((3, 4), _idx([0, 0], [3, 1], [2, 2]))]),
    Sample("gather", lambda x, i: x.gather(0, i), (3, 4), _idx([2, 0, 1]), note="-smaller"),
    Sample("gather", lambda x, i: x.gather(0, i), (3,), _idx(2, 2, 0, 1), note="-1d"),
    *_both("scatter_add", lambda x, i, s: x.scatter_add(0, i, s),
           [((3, 4), _idx([0, 2, 0, 1], [0, 0, 2, 2]), (2, 4))],
           [((3, 2), _idx([1, 1]), (1, 2))]),
    # torch 2.13's own backward rejects a src larger than index (its gradient comes back at
    # index's shape), so these samples are checked by gradcheck only.
    Sample("scatter_add", lambda x, i, s: x.scatter_add(1, i, s), (2, 3),
           _idx([0, 0], [2, 1]), (2, 4), note="-larger-src", torch_call=None),
    *_both("scatter", lambda x, i, s: x.scatter(1, i, s),
           [((3, 4), _idx([0, 3], [1, 2], [2, 0]), (3, 2))], []),
    Sample("scatter", lambda x, i, s: x.scatter(1, i, s), (2, 3), _idx([2], [0]), (2, 2),
           complex=True, note="-complex-larger-src", torch_call=None),
    Sample("scatter", lambda x, i, s: x.scatter(0, i, s), (3, 2), _idx([2, 0]), (2, 3),
           note="-larger-src", torch_call=None),
    Sample("scatter_multiply", lambda x, i, s: x.scatter(1, i, s, reduce="multiply"), (2, 3),
           _idx([0, 0], [2, 1]), (2, 2), note="-not-differentiable"),
    *_both("scatter_value", lambda x, i: x.scatter(1, i, 2.5),
           [((3, 4), _idx([0, 3], [1, 1], [2, 0]))], [((2, 3), _idx([2], [0]))]),
    # --- masked_fill ----------------------------------------------------------------------------
    *_both("masked_fill", lambda x, m: x.masked_fill(m, 0.5), [((3, 4), MASK34),
                                                                 ((3, 4), _mask(4))],
           [((3, 4), MASK34)]),
    Sample("masked_fill", lambda x, m: x.masked_fill(m, -1.0), (4,), _mask(2, 4),
           note="-mask-broadcasts-input"),
    Sample("masked_fill", lambda x, m: x.masked_fill(m, 1.0), (0, 2), _mask(0, 2),
           note="-empty"),
    *_both("masked_fill_tensor", lambda x, m, v: x.masked_fill(m, v),
           [((3, 4), MASK34, ()), ((4,), _mask(3, 4), ())], [((3, 4), MASK34, ())]),
    # --- triangles, traces, diagonals and slices written into --------------------------------
    *_both("tril", lambda x: x.tril(), [((3, 4),), ((2, 3, 3),)], [((3, 3),)]),
    Sample("tril", lambda x: x.tril(-1), (4, 3), note="-below"),
    Sample("tril", lambda x: x.tril(5), (2, 3), note="-all"),
    Sample("tril", lambda x: x.tril(), (0, 3), note="-empty"),
    *_both("triu", lambda x: x.triu(1), [((3, 4),), ((2, 2, 3),)], [((3, 3),)]),
    Sample("triu", lambda x: _write_through_view(lambda y: y[1:], "triu_")(x), (4, 3),
           note="-inplace-on-view"),
    *_both("trace", lambda x: x.trace(), [((3, 4),), ((4, 3),), ((0, 2),)], [((3, 3),)]),
    *_both("diagonal_scatter", lambda x, s: cr.diagonal_scatter(x, s), [((3, 4), (3,))],
           [((3, 3), (3,))], torch_call=lambda x, s: T().diagonal_scatter(x, s)),
    Sample("diagonal_scatter", lambda x, s: cr.diagonal_scatter(x, s, -1, 2, 0), (2, 3, 4),
           (3, 2), note="-dims", torch_call=lambda x, s: T().diagonal_scatter(x, s, -1, 2, 0)),
    Sample("diag_embed", lambda x: cr.diagflat(x, 1), (2, 2), note="-diagflat",
           torch_call=lambda x: T().diagflat(x, 1)),
    # (torch 2.13 has no complex autograd for select/slice_scatter or scatter_reduce: the
    # complex samples of those are checked by gradcheck only)
    Sample("select_scatter", lambda x, s: cr.select_scatter(x, s, 1, -1), (3, 4), (3,),
           torch_call=lambda x, s: T().select_scatter(x, s, 1, -1)),
    Sample("select_scatter", lambda x, s: cr.select_scatter(x, s, 0, 1), (2, 2), (2,),
           complex=True, note="-complex", torch_call=None),
    Sample("slice_scatter", lambda x, s: cr.slice_scatter(x, s, 1, 1, None, 2), (3, 5), (3, 2),
           torch_call=lambda x, s: T().slice_scatter(x, s, 1, 1, None, 2)),
    Sample("slice_scatter", lambda x, s: cr.slice_scatter(x, s, 1, 1, None, 2), (2, 4), (2, 2),
           complex=True, note="-complex", torch_call=None),
    Sample("slice_scatter", lambda x, s: cr.slice_scatter(x, s), (3, 2), (3, 2), note="-all",
           torch_call=lambda x, s: T().slice_scatter(x, s)),
    # --- rotations, index splits, stacks (composites of the ops above) ----------------------------
    *_both("rot90", lambda x: x.rot90(), [((2, 3),), ((0, 2),)], [((2, 2),)]),
    Sample("rot90", lambda x: x.rot90(-1, (2, 0)), (2, 3, 4), note="-k3-dims"),
    Sample("rot90", lambda x: x.rot90(2), (2, 3), note="-k2"),
    Sample("rot90", lambda x: x.rot90(4, (1, -1)), (2, 3, 4), note="-k4"),
    Sample("slice", lambda x: x.tensor_split(3, 1), (2, 7), note="-tensor_split"),
    Sample("sub", lambda x: x.diff(n=2, dim=0), (5, 3), note="-diff"),
    Sample("sub", lambda x, p, a: x.diff(dim=1, prepend=p, append=a), (2, 3), (2, 1),
           (2, 2), note="-diff-ends"),
    Sample("slice", lambda x: x.tensor_split([1, -1, 9]), (4, 2), note="-tensor_split-indices"),
    Sample("slice", lambda x: x.hsplit(2), (2, 4), note="-hsplit"),
    Sample("slice", lambda x: x.vsplit([1]), (3, 2), note="-vsplit"),
    Sample("slice", lambda x: x.dsplit(2), (1, 2, 4), note="-dsplit"),
    Sample("cat", lambda a, b: cr.hstack([a, b]), (2, 3), (2, 1), note="-hstack",
           torch_call=lambda a, b: T().hstack([a, b])),
    Sample("cat", lambda a, b: cr.vstack([a, b]), (3,), (2, 3), note="-vstack",
           torch_call=lambda a, b: T().vstack([a, b])),
    Sample("cat", lambda a, b: cr.dstack([a, b]), (3,), (1, 3, 2), note="-dstack",
           torch_call=lambda a, b: T().dstack([a, b])),
    Sample("cat", lambda a, b: cr.column_stack([a, b]), (), (1, 2), note="-column_stack",
           torch_call=lambda a, b: T().column_stack([a, b])),
    Sample("cat", lambda a, b: cr.block_diag(a, b), (2, 3), (2,), note="-block_diag",
           torch_call=lambda a, b: T().block_diag(a, b)),
    Sample("expand", lambda x: x.repeat_interleave(2), (2, 3), note="-repeat_interleave"),
    Sample("expand", lambda x: x.repeat_interleave(3, -1), (2, 2), note="-repeat_interleave-dim"),
    Sample("expand", lambda x: x.repeat_interleave(0, 0), (2, 2), note="-repeat_interleave-0"),
    Sample("index_select", lambda x, r: x.repeat_interleave(r, dim=1), (2, 3), _idx(0, 2, 1),
           note="-repeat_interleave-tensor"),
    Sample("expand", lambda a, b: cr.meshgrid(a, b, indexing="xy"), (2,), (3,),
           note="-meshgrid", torch_call=lambda a, b: T().meshgrid(a, b, indexing="xy")),
    Sample("expand", lambda a, b: cr.broadcast_tensors(a, b), (2, 1), (3,),
           note="-broadcast_tensors", torch_call=lambda a, b: T().broadcast_tensors(a, b)),
    Sample("stack", lambda a, b: cr.cartesian_prod(a, b), (2,), (3,), note="-cartesian_prod",
           torch_call=lambda a, b: T().cartesian_prod(a, b)),
    Sample("stack", lambda a: cr.combinations(a, 2, True), (3,), note="-combinations",
           torch_call=lambda a: T().combinations(a, 2, True)),
    # --- strided views, complex pairs ---------------------------------------------------------
    *_both("unfold", lambda x: x.unfold(-1, 2, 1), [((3, 4),), ((5,),)], [((2, 3),)]),
    Sample("unfold", lambda x: x.unfold(0, 2, 3), (7, 2), note="-gaps"),
    Sample("unfold", lambda x: x.unfold(0, 1, 1), (), note="-0d"),
    Sample("unfold", lambda x: x.unfold(-1, 3, 1)[1:], (2, 5), note="-view-of"),
    *_both("as_strided", lambda x: x.as_strided((3, 3), (1, 1)), [((3, 4),)], [((2, 3),)]),
    Sample("as_strided", lambda x: x.as_strided((2, 2), (1, 2), 3), (3, 4), note="-offset"),
    Sample("as_strided", lambda x: x[1].as_strided((2,), (2,)), (3, 4), note="-of-view"),
    Sample("view_as_real", lambda x: cr.view_as_real(x), (3,), complex=True,
           torch_call=lambda x: T().view_as_real(x)),
    Sample("view_as_real", lambda x: cr.view_as_real(x.t()), (2, 3), complex=True,
           note="-transposed", torch_call=lambda x: T().view_as_real(x.t())),
    Sample("view_as_complex", lambda x: cr.view_as_complex(x), (3, 2),
           torch_call=lambda x: T().view_as_complex(x)),
    Sample("view_as_complex", lambda x: cr.view_as_complex(x[1:]), (3, 2, 2), note="-of-view",
           torch_call=lambda x: T().view_as_complex(x[1:])),
    Sample("complex", lambda a, b: cr.complex(a, b), (3,), (3,),
           torch_call=lambda a, b: T().complex(a, b)),
    Sample("complex", lambda a, b: cr.complex(a, b), (2, 1), (3,), note="-broadcast",
           torch_call=lambda a, b: T().complex(a, b)),
    Sample("polar", lambda a, b: cr.polar(a, b), (3,), (3,), domain=(0.1, 2.0),
           torch_call=lambda a, b: T().polar(a, b)),
    Sample("polar", lambda a, b: cr.polar(a, b), (2, 1), (3,), note="-broadcast",
           domain=(0.1, 2.0),
           torch_call=lambda a, b: T().polar(a, b)),
    # --- index_copy / index_fill / masked_scatter / masked_select / take ------------------------
    *_both("index_copy", lambda x, i, s: x.index_copy(0, i, s), [((3, 4), _idx(2, 0), (2, 4))],
           [((3, 2), _idx(1), (1, 2))]),
    Sample("index_copy", lambda x, i, s: x.index_copy(1, i, s), (2, 3), _idx(1, 0), (2, 2),
           note="-dim1"),
    *_both("index_fill", lambda x, i: x.index_fill(1, i, -1.5), [((3, 4), _idx(0, 2, 0))],
           [((2, 3), _idx(-1))]),
    *_both("index_fill_tensor", lambda x, i, v: x.index_fill(0, i, v),
           [((3, 4), _idx(1, 1, 2), ())], [((2, 3), _idx(0), ())]),
    *_both("masked_scatter", lambda x, m, s: x.masked_scatter(m, s), [((3, 4), MASK34, (12,))],
           [((3, 4), MASK34, (3, 4))]),
    Sample("masked_scatter", lambda x, m, s: x.masked_scatter(m, s), (3, 4), _mask(4), (2, 7),
           note="-broadcast-mask-larger-source"),
    Sample("masked_scatter", lambda x, m, s: x.masked_scatter(m, s), (4,), _mask(3, 4), (12,),
           note="-broadcast-self"),
    *_both("masked_select", lambda x, m: x.masked_select(m), [((3, 4), MASK34)],
           [((3, 4), MASK34)]),
    Sample("masked_select", lambda x, m: x.masked_select(m), (4,), _mask(3, 4),
           note="-broadcast"),
    Sample("masked_select", lambda x, m: x.masked_select(m), (0, 2), _mask(0, 2), note="-empty"),
    *_both("take", lambda x, i: x.take(i), [((3, 4), _idx([0, -1], [5, 5])), ((), _idx(0, 0))],
           [((2, 3), _idx(4, -6))]),
    Sample("gather", lambda x, i: x.take_along_dim(i, 1), (3, 4), _idx([0], [3], [2]),
           note="-take_along_dim"),
    Sample("gather", lambda x, i: x.take_along_dim(i), (3, 4), _idx(11, 0, 0),
           note="-take_along_dim-flat"),
    Sample("gather", lambda x, i: x.take_along_dim(i, 0), (3, 1), _idx([0, 2]),
           note="-take_along_dim-broadcast"),
    # --- scatter_reduce (every reduction, with and without self) ---------------------------------
    *[Sample("scatter_reduce", (lambda r, inc: lambda x, i, s:
                                x.scatter_reduce(0, i, s, r, include_self=inc))(r, inc),
             (3, 4), _idx([0, 2, 0, 1], [0, 0, 2, 2]), (2, 4), note=f"-{r}-{inc}",
             domain=(0.5, 2.0) if r == "prod" else None)
      for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
    Sample("scatter_reduce", lambda x, i, s: x.scatter_reduce(1, i, s, "sum"), (2, 3),
           _idx([0, 0], [2, 1]), (2, 4), note="-larger-src", torch_call=None),
    Sample("scatter_reduce", lambda x, i, s: x.scatter_reduce(0, i, s * _zeros_at(s), "prod"),
           (2, 3), _idx([0, 1, 1], [0, 1, 1], [1, 1, 0]), (3, 3), note="-prod-zeros"),
    Sample("scatter_reduce", lambda x, i, s: x.scatter_reduce(0, i, s, "prod",
                                                              include_self=False),
           (2, 3), _idx([0, 1, 1], [0, 1, 1]), (2, 3), complex=True, note="-prod-complex",
           torch_call=None),
    Sample("scatter_reduce", lambda x, i, s: x.scatter_reduce(0, i, s, "mean"),
           (3,), _idx(0, 0, 2), (3,), complex=True, note="-mean-complex", torch_call=None),
    # --- in-place writes through views (the base gets CopySlices) --------------------------
    Sample("mul", _write_through_view(lambda y: y[0], "mul_", 2.0), (3, 4), note="-on-view"),
    Sample("mul", _write_through_view(lambda y: y.t()[1:], "mul_"), (3, 4), (3,),
           note="-on-transposed-view"),
    Sample("mul", _write_through_view(lambda y: y.view(2, 6)[:, 1], "mul_"), (3, 4), (2,),
           note="-on-reshaped-view"),
    Sample("exp", _write_through_view(lambda y: y.diagonal(), "exp_"), (3, 3),
           note="-on-diagonal", complex=True),
    Sample("copy", _write_through_view(lambda y: y[1:, ::2], "copy_"), (3, 4), (1, 2),
           note="-on-view"),
]
