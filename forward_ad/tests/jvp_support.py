"""What the forward-mode test files share (the generated JVP table test and the
tangents-through-vmap test): calling a Sample, random tangents, and which ops declare
no JVP or refuse an input."""
import chainrule as cr
from chainrule._ops import _registry


def _differentiable(value):
    return isinstance(value, cr.Tensor) and value.requires_grad


def _float_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, cr.Tensor) and
            (o.is_floating_point() or o.is_complex())]


def _call(sample, inputs):
    cr.manual_seed(0)
    return _float_outputs(sample.call(*inputs))


def _tangents(inputs, rng):
    tangents = []
    for x in inputs:
        if not _differentiable(x):
            tangents.append(None)
            continue
        v = rng.standard_normal(x.shape)
        if x.is_complex():
            v = v + 1j * rng.standard_normal(x.shape)
        tangents.append(cr.tensor(v, dtype=x.dtype))
    return tangents


def _documented_refusal(error):
    """A JVP formula may refuse an input it does not handle (e.g. linalg.svd with
    full_matrices=True on a non-square matrix), with a message that says so."""
    return "not implemented" in str(error)


def _declares_no_jvp(sample):
    op = _registry.OPS.get(sample.op)
    return op is not None and not isinstance(op.jvp, _registry.Formula)
