"""Whole Jacobians by forward mode in one pass (Note [batched tangents] in the
forward_ad layer): every input element's basis direction is one row of a batched
tangent, so one evaluation of the function gives every column of the Jacobian.

Note [one-pass jacobians]
    jacobian(vectorize=True), jacrev and jacfwd use this pass where it is cheaper than
    one backward per output element and gives the same values: the forward_ad layer
    is installed, no dual level is active (an outer one would need nesting), no graph
    of the result is wanted (create_graph, strict and outer reverse transforms keep
    the reverse path), at least MIN_OUTPUTS output elements and as many as input
    elements for reverse-mode requests, at most MAX_INPUTS input elements (the batched tangents hold MAX_INPUTS copies of every intermediate), and
    for reverse-mode requests real inputs and outputs only (``worth_it``).
    When the pass meets something it cannot batch (an op without a forward rule, a
    custom Function without ``jvp``, an in-place op on a view) it raises
    NotImplementedError and the caller takes its usual path.
"""
import numpy as np

import chainrule as cr

from ._common import forward_ad

MIN_OUTPUTS, MAX_INPUTS = 4, 2048


def usable(inputs):
    fwAD = forward_ad()
    if fwAD is None:
        return False
    from chainrule_forward_ad._tangents import CURRENT
    return CURRENT[0] is None and sum(x.numel() for x in inputs) <= MAX_INPUTS


def worth_it(outputs, inputs):
    """For a reverse-mode request: enough outputs, no more inputs than outputs (else
    the one batched backward of core's is_grads_batched, one row per output element,
    does less work), and real values only (for complex values reverse mode's Jacobian
    is the conjugate convention's, not forward mode's)."""
    n_out = sum(o.numel() for o in outputs)
    return MIN_OUTPUTS <= n_out >= sum(x.numel() for x in inputs) and \
        not any(t.is_complex() for t in list(outputs) + list(inputs))


def forward_jacobian(call, inputs, need_graph=False, history=False):
    """(outputs, blocks): ``call(*duals)``'s outputs (a sequence of Tensors, without
    their tangents once this returns) and blocks[i][j] = d outputs[i] / d inputs[j], of
    shape out_i.shape + in_j.shape. ``need_graph``: the duals require grad (for a
    function that differentiates inside, e.g. a gradient: forward-over-reverse).
    ``history``: the blocks keep the graph their tangents were computed with (where
    the function's own inputs required grad), else nothing is recorded for them."""
    from chainrule_forward_ad._batched import batched_dual_level, make_batched_dual
    from chainrule_forward_ad._tangents import CURRENT
    from chainrule_forward_ad._vmapped import wrapped_tangent
    numels = [x.numel() for x in inputs]
    total = sum(numels)
    with batched_dual_level(total, graph=need_graph or history):
        duals, start = [], 0
        for x, n in zip(inputs, numels):
            dual = make_batched_dual(x.detach(), _basis_rows(x, start, total), basis=start)
            duals.append(dual.requires_grad_() if need_graph else dual)
            start += n
        outputs = call(*duals)
        tangents = [wrapped_tangent(CURRENT[0], o) for o in outputs]
    return outputs, [_blocks(t, o, inputs, numels) for t, o in zip(tangents, outputs)]


def _basis_rows(x, start, total):
    """x's rows of the identity over every input element: row ``start + k`` is the k-th
    basis direction of x, the other rows are zeros (shape (total, *x.shape))."""
    eye = np.eye(total, x.numel(), -start, dtype=x._data.dtype)
    return cr.Tensor._wrap(eye.reshape((total,) + tuple(x.shape)))


def _blocks(tangent, out, inputs, numels):
    """One output's batched tangent (total, *out) split into its input blocks, each
    moved to out.shape + x.shape (on the arrays where no graph is wanted)."""
    blocks, start = [], 0
    for x, n in zip(inputs, numels):
        shape = tuple(out.shape) + tuple(x.shape)
        if tangent is None:
            blocks.append(cr.zeros(*shape, dtype=out.dtype))
        elif tangent.requires_grad or type(tangent) is not cr.Tensor:
            part = tangent[start:start + n]
            order = list(range(1, part.ndim)) + [0]
            blocks.append(part.permute(order).reshape(shape))
        else:
            part = np.moveaxis(tangent._data[start:start + n], 0, -1)
            blocks.append(cr.Tensor._wrap(part.reshape(shape)))
        start += n
    return blocks
