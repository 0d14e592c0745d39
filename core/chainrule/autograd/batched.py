"""``grad(..., is_grads_batched=True)``: one vector-Jacobian product per row of the
grad_outputs' leading (batch) dimension, stacked along a new leading dimension.

Each row runs as its own backward pass over the retained graph; the results are the
same as a vectorised evaluation would give.
"""


def batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                 materialize_grads):
    from .. import _ops
    from .backward import _make_grads, grad
    batch = _batch_size(grad_outputs)
    _make_grads(outputs, grad_outputs, is_grads_batched=True)
    rows = []
    for i in range(batch):
        row_grads = [None if g is None else g[i] for g in grad_outputs]
        keep = True if i < batch - 1 else retain_graph
        rows.append(grad(outputs, inputs, row_grads, retain_graph=keep,
                         create_graph=create_graph, allow_unused=True))
    stack = _ops.FUNCTIONS["stack"]
    results = []
    for j, t in enumerate(inputs):
        column = [row[j] for row in rows]
        results.append(_stack_column(column, t, j, stack, allow_unused, materialize_grads))
    return tuple(results)


def _batch_size(grad_outputs):
    sizes = {g.shape[0] for g in grad_outputs if g is not None}
    if len(sizes) != 1:
        raise RuntimeError("If `is_grads_batched=True`, every grad_output must have the same "
                           f"batch (first) dimension, got sizes {sorted(sizes)}")
    return sizes.pop()


def _stack_column(column, t, index, stack, allow_unused, materialize_grads):
    from .._factories import zeros
    from .backward import unused_input_message
    if all(g is None for g in column):
        if materialize_grads:
            return zeros(len(column), *t.shape, dtype=t.dtype)
        if not allow_unused:
            raise RuntimeError(unused_input_message(index))
        return None
    filled = [g if g is not None else zeros(*t.shape, dtype=t.dtype) for g in column]
    return stack(filled)
