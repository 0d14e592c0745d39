"""Gradients with batches: ``grad(..., is_grads_batched=True)`` and ``grad`` inside vmap.

Note [one backward for a batch of cotangents]
    The graph is an ordinary graph of unbatched tensors; the cotangents carry the
    batch. The engine runs it ONCE with the formulas on the tensor namespace (the
    create_graph path of Note [one formula, two namespaces]) while the cotangents are
    batched tensors of a fresh vmap level (Note [batched tensors]): every formula's
    ops then run their batching rules, and each input's gradient comes back with the
    batch as its leading dimension. Nothing is recorded unless create_graph asked for
    it. A custom Function's backward runs once too, on the batched cotangents, like
    the reference's (its ops batch; it needs no ``vmap`` staticmethod: that is for
    vmapping its forward). A formula or backward that reads values outside the table
    falls back to one backward per row.

    Inside vmap, ``grad`` of batched outputs w.r.t. inputs batched the same way (what
    ``chainrule.func.grad`` makes of its inputs under vmap) is one plain backward over
    the physical tensors: entries do not mix, so each entry's gradient is its own.
"""
from .. import _grad_mode
from . import tangent_slot
from .._batched import BatchedTensor, batched_at, rewrap, unwrap_all, wrap


def batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                 materialize_grads):
    from .backward import _make_grads
    batch = _batch_size(grad_outputs)
    _make_grads(outputs, grad_outputs, is_grads_batched=True)
    if batch == 1:      # one row needs no batching (Note [tangents under vmap]: a dual
        # level's tangents flow through the batched backward's physical ops)
        return _looped_grad(outputs, inputs, grad_outputs, batch, retain_graph,
                            create_graph, allow_unused, materialize_grads)
    from .._batched import ValuesOutsideTable
    from .._vmap import batch_level
    try:        # the graph is kept for the loop should a formula leave the table
        with batch_level(batch) as level:
            grads = [None if g is None else wrap(g, level) for g in grad_outputs]
            result = cotangent_batched_grad(outputs, inputs, grads, True, create_graph,
                                            True, False)
            result = tuple(_unbatched(g, level) for g in result)
    except ValuesOutsideTable:
        from .._ops import _batching_rules
        if _batching_rules.LOOP_LOG is not None:
            _batching_rules.LOOP_LOG.add("ValuesOutsideTable")
        return _looped_grad(outputs, inputs, grad_outputs, batch, retain_graph, create_graph,
                            allow_unused, materialize_grads)
    return tuple(_stack_column([g], t, j, None, allow_unused, materialize_grads, batch)
                 if g is None else g for j, (g, t) in enumerate(zip(result, inputs)))


def _unbatched(g, level):
    """A gradient of the batched backward as a tensor with the batch in front."""
    from .._ops._batching_rules import _expand_batch
    if g is None:
        return None
    if batched_at(g, level):
        return g._value
    return _expand_batch(g, level.size).contiguous()


def cotangent_batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused,
                           materialize_grads):
    """The engine run once with (batched) tensor cotangents: formulas on the tensor
    namespace, recording only under create_graph."""
    from .backward import _drop_missing, _root_edges, _target_edge, _finish, get_engine
    roots = _root_edges(outputs)
    targets = [_target_edge(t, i, True) for i, t in enumerate(inputs)]
    roots, grads = _drop_missing(roots, grads)
    if retain_graph is None:
        retain_graph = create_graph
    with _grad_mode.set_grad_enabled(create_graph):
        captured = get_engine().execute(roots, list(grads), retain_graph, True, targets,
                                        accumulate_grad=False)
    return _finish(inputs, captured, allow_unused, materialize_grads)


def _looped_grad(outputs, inputs, grad_outputs, batch, retain_graph, create_graph,
                 allow_unused, materialize_grads):
    from .. import _ops
    from .backward import grad
    rows = []
    for i in range(batch):
        row_grads = [None if g is None else g[i] for g in grad_outputs]
        keep = True if i < batch - 1 else retain_graph
        rows.append(grad(outputs, inputs, row_grads, retain_graph=keep,
                         create_graph=create_graph, allow_unused=True))
    stack = _ops.FUNCTIONS["stack"]
    return tuple(_stack_column([row[j] for row in rows], t, j, stack, allow_unused,
                               materialize_grads) for j, t in enumerate(inputs))


def _batch_size(grad_outputs):
    sizes = {g.shape[0] for g in grad_outputs if g is not None}
    if len(sizes) != 1:
        raise RuntimeError("If `is_grads_batched=True`, every grad_output must have the same "
                           f"batch (first) dimension, got sizes {sorted(sizes)}")
    return sizes.pop()


def _stack_column(column, t, index, stack, allow_unused, materialize_grads, batch=None):
    from .._factories import zeros
    from .backward import unused_input_message
    if all(g is None for g in column):
        if materialize_grads:
            return zeros(batch or len(column), *t.shape, dtype=t.dtype)
        if not allow_unused:
            raise RuntimeError(unused_input_message(index))
        return None
    filled = [g if g is not None else zeros(*t.shape, dtype=t.dtype) for g in column]
    return stack(filled)


# --- grad inside vmap -----------------------------------------------------------------
def has_batched(*groups):
    return any(type(t) is BatchedTensor for group in groups for t in group)


def grad_in_vmap(outputs, inputs, grads, retain_graph, create_graph, allow_unused,
                 materialize_grads, is_grads_batched=False):
    """``grad`` with batched tensors among its arguments (Note [one backward for a
    batch of cotangents])."""
    out_levels = [unwrap_all(o)[1] for o in outputs]
    if not any(out_levels) and not any(type(t) is BatchedTensor for t in inputs):
        if is_grads_batched:
            return batched_grad(outputs, inputs, grads, retain_graph, create_graph,
                                allow_unused, materialize_grads)
        return cotangent_batched_grad(outputs, inputs, grads, retain_graph, create_graph,
                                      allow_unused, materialize_grads)
    from .backward import _make_grads, _run_grad
    physical_out = [unwrap_all(o)[0] for o in outputs]
    if is_grads_batched:
        return _batched_grads_in_vmap(outputs, physical_out, out_levels, inputs, grads,
                                      retain_graph, create_graph, allow_unused,
                                      materialize_grads)
    extra = _extra_levels(grads, out_levels)
    physical_grads = [_physical_like(g, levels, extra) if g is not None else
                      _ones_for_scalar(o, p) if levels else None
                      for g, o, p, levels in zip(grads, outputs, physical_out, out_levels)]
    unwrapped = [unwrap_all(t) for t in inputs]
    _check_same_levels(out_levels, unwrapped)
    physical_grads = _make_grads(physical_out, physical_grads)
    if retain_graph is None:
        retain_graph = create_graph
    run = cotangent_batched_grad if extra else _run_grad
    result = run(physical_out, [p for p, _ in unwrapped], physical_grads, retain_graph,
                 create_graph, allow_unused, materialize_grads)
    return tuple(None if g is None else _rewrapped(g, extra, levels)
                 for g, (_, levels) in zip(result, unwrapped))


def _ones_for_scalar(output, physical):
    """The implicit gradient of a batched scalar output: ones for every entry."""
    if output.numel() != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    from .._factories import ones_like
    return ones_like(physical)


def _extra_levels(grads, out_levels):
    """Note [cotangents batched beyond their outputs]
        Inside vmap a cotangent may be batched at levels its output is not (the implicit
        NTK calls a vjp_fn under a vmap of its own: ``vmap(vjp_fn)(basis)``) or be
        unbatched where its output is batched. The graph holds physical tensors batched
        at the output's levels; the cotangent becomes one of those physical tensors
        (missing levels broadcast) wrapped at its extra levels, and the engine runs once
        with batched cotangents (Note [one backward for a batch of cotangents]). Each
        gradient comes back wrapped at the extra levels and at its input's levels.
    The levels of the cotangents not among their outputs', in level order."""
    extra = {}
    for g, levels in zip(grads, out_levels):
        if g is not None:
            ids = {lv.id for lv in levels}
            extra.update((lv.id, lv) for lv in unwrap_all(g)[1] if lv.id not in ids)
    return [extra[i] for i in sorted(extra)]


def _aligned(physical, levels, target):
    """``physical`` (one leading dimension per level of ``levels``, then the entry) with
    one leading dimension per level of ``target``, in that order: the levels it lacks
    broadcast."""
    from .._ops import FUNCTIONS
    ids, k = [lv.id for lv in levels], len(levels)
    order = [ids.index(lv.id) for lv in target if lv.id in ids]
    if order != list(range(k)):
        physical = FUNCTIONS["permute"](physical, order + list(range(k, physical.ndim)))
    sizes, entry = iter(physical.shape[:k]), tuple(physical.shape[k:])
    present = tuple(next(sizes) if lv.id in ids else 1 for lv in target) + entry
    physical = FUNCTIONS["reshape"](physical, present)
    return FUNCTIONS["expand"](physical, tuple(lv.size for lv in target) + entry)


def _physical_like(g, levels, extra):
    """The physical cotangent of an output batched at ``levels`` (Note [cotangents
    batched beyond their outputs])."""
    physical, g_levels = unwrap_all(g)
    if [lv.id for lv in g_levels] == [lv.id for lv in levels]:
        return physical
    own = [lv for lv in g_levels if lv in extra]
    return rewrap(_aligned(physical, g_levels, own + list(levels)), own)


def _rewrapped(g, extra, levels):
    """A gradient of the physical graph (wrapped at some of the ``extra`` levels) as a
    tensor batched at ``extra`` and ``levels``, in level order."""
    if not extra:
        return rewrap(g, levels)
    physical, own = unwrap_all(g)
    physical = _aligned(physical, own, extra)
    both = list(extra) + list(levels)
    order = sorted(range(len(both)), key=lambda i: both[i].id)
    return rewrap(_aligned(physical, both, [both[i] for i in order]), [both[i] for i in order])


def _batched_grads_in_vmap(outputs, physical_out, out_levels, inputs, grads, retain_graph,
                           create_graph, allow_unused, materialize_grads):
    """is_grads_batched inside vmap (jacrev under vmap): the unbatched rows of
    cotangents are broadcast over the vmap entries, one batched backward runs over the
    physical graph, and each entry's block of rows is rewrapped."""
    from .._ops import FUNCTIONS
    unwrapped = [unwrap_all(t) for t in inputs]
    _check_same_levels(out_levels, unwrapped)
    physical_grads = []
    for g, p, levels in zip(grads, physical_out, out_levels):
        if g is not None:
            lead = tuple(p.shape)[:len(levels)]
            g = FUNCTIONS["reshape"](g, (g.shape[0],) + (1,) * len(lead) + tuple(g.shape)[1:])
            g = FUNCTIONS["expand"](g, (g.shape[0],) + lead + tuple(g.shape)[1 + len(lead):])
        physical_grads.append(g)
    result = batched_grad(physical_out, [p for p, _ in unwrapped], physical_grads,
                          retain_graph, create_graph, allow_unused, materialize_grads)
    return tuple(None if g is None else
                 rewrap(FUNCTIONS["movedim"](g, 0, len(levels)), levels)
                 for g, (_, levels) in zip(result, unwrapped))


def _check_same_levels(out_levels, unwrapped):
    for levels in out_levels:
        for _, in_levels in unwrapped:
            if [lv.id for lv in in_levels] != [lv.id for lv in levels]:
                raise RuntimeError(
                    "vmap: grad of a batched output with respect to an input not batched the "
                    "same way: use chainrule.func.grad (or vjp), which batches its inputs, or "
                    "take the gradient outside vmap.")
