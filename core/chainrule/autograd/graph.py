"""``chainrule.autograd.graph``: the graph API (Node, GradientEdge, hooks on it)."""
from typing import NamedTuple

from .node import Node  # noqa: F401


class GradientEdge(NamedTuple):
    """A gradient edge: a node and the index of one of its gradient inputs. Usable as
    an input (or output) of ``autograd.grad``."""
    node: object
    output_nr: int


def get_gradient_edge(tensor):
    """The edge that the gradient of ``tensor`` flows into.

    >>> import chainrule as cr
    >>> x = cr.ones(2, requires_grad=True); y = x * 2
    >>> edge = cr.autograd.graph.get_gradient_edge(y)
    >>> cr.autograd.grad(y.sum(), edge)[0].tolist()
    [1.0, 1.0]
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    if tensor.grad_fn is None:
        from .node import grad_accumulator
        return GradientEdge(grad_accumulator(tensor), 0)
    return GradientEdge(tensor.grad_fn, tensor._output_nr)
