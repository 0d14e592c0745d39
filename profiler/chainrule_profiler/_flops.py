"""FLOPs of the ops the reference estimates them for (``with_flops=True``): the
matrix-multiplication family and 2-D convolution (a multiply and an add per term,
so 2 per multiply-accumulate), plus ``mul`` and ``add`` (one per output element)."""
import math


def _matmul_like(shapes, out_shape):
    """2 * (elements of the output) * (the contracted length): mm, bmm, matmul, mv,
    dot, linear: the contracted length is the last dimension of the first input."""
    k = shapes[0][-1] if shapes[0] else 1
    return 2 * math.prod(out_shape) * k


def _convolution(shapes, out_shape):
    """Every output element sums (input channels per group) x kh x kw products."""
    weight = shapes[1]
    return 2 * math.prod(out_shape) * math.prod(weight[1:])


def _elementwise(shapes, out_shape):
    return math.prod(out_shape)


_FORMULAS = {
    "mm": _matmul_like, "bmm": _matmul_like, "matmul": _matmul_like, "mv": _matmul_like,
    "dot": _matmul_like, "linear": _matmul_like, "convolution": _convolution,
    "mul": _elementwise, "add": _elementwise,
}


def flops_of(op_name, shapes, out_shape):
    """The FLOPs of one call of ``op_name`` (None for ops without an estimate).

    >>> from chainrule_profiler._flops import flops_of
    >>> flops_of("mm", [[2, 3], [3, 4]], [2, 4])
    48
    """
    formula = _FORMULAS.get(op_name)
    if formula is None or not shapes:
        return None
    return formula(shapes, out_shape)
