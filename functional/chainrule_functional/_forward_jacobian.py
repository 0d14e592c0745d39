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


def forward_jacobian(call, inputs, need_graph=False):
    """(outputs, blocks): ``call(*duals)``'s outputs (a sequence of Tensors) and
    blocks[i][j] = d outputs[i] / d inputs[j], of shape out_i.shape + in_j.shape.
    ``need_graph``: the duals require grad (for a function that differentiates
    inside, e.g. a gradient: forward-over-reverse)."""
    from chainrule_forward_ad import unpack_dual
    from chainrule_forward_ad._batched import batched_dual_level, make_batched_dual
    numels = [x.numel() for x in inputs]
    total = sum(numels)
    eye = cr.eye(total, dtype=inputs[0].dtype if inputs else cr.float64)
    with batched_dual_level(total):
        duals, start = [], 0
        for x, n in zip(inputs, numels):
            rows = eye[:, start:start + n].to(x.dtype).reshape((total,) + tuple(x.shape))
            dual = make_batched_dual(x.detach(), rows)
            duals.append(dual.requires_grad_() if need_graph else dual)
            start += n
        outputs = call(*duals)
        tangents = [unpack_dual(o).tangent for o in outputs]
        primals = [unpack_dual(o).primal for o in outputs]
    blocks = [_blocks(t, o, inputs, numels) for t, o in zip(tangents, primals)]
    return primals, blocks


def _blocks(tangent, out, inputs, numels):
    """One output's batched tangent (total, *out) split into its input blocks."""
    blocks, start = [], 0
    for x, n in zip(inputs, numels):
        shape = tuple(out.shape) + tuple(x.shape)
        if tangent is None:
            blocks.append(cr.zeros(*shape, dtype=out.dtype))
        else:
            part = tangent[start:start + n]
            order = list(range(1, part.ndim)) + [0]
            blocks.append(part.permute(order).reshape(shape))
        start += n
    return blocks
