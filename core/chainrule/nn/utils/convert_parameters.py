"""One flat vector from many parameters, and back."""
from ..._ops import FUNCTIONS
from ..._tensor import Tensor


def _check(value):
    if not isinstance(value, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(value).__name__}")


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated (differentiable).

    >>> import chainrule as cr
    >>> cr.nn.utils.parameters_to_vector(cr.nn.Linear(2, 3).parameters()).shape
    chainrule.Size([9])
    """
    flat = []
    for param in parameters:
        _check(param)
        flat.append(param.reshape(-1))
    return FUNCTIONS["cat"](flat)


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of ``vec`` into the parameters' data.

    >>> import chainrule as cr
    >>> fc = cr.nn.Linear(2, 1)
    >>> cr.nn.utils.vector_to_parameters(cr.arange(3.), fc.parameters())
    >>> fc.weight.tolist(), fc.bias.tolist()
    ([[0.0, 1.0]], [2.0])
    """
    _check(vec)
    offset = 0
    for param in parameters:
        _check(param)
        n = param.numel()
        param.data = vec[offset:offset + n].view_as(param).data
        offset += n
