"""Input buffers: where the gradients for one node's outputs gather until it runs.

Note [gradients are raw arrays or tensors]
    Without create_graph the engine moves plain NumPy arrays between nodes (no Tensor
    objects, no recording): the fast path. With create_graph it moves chainrule
    Tensors, so the backward pass is itself recorded. ``a + b`` works for both, and
    every derivative formula is written against a namespace that exists for both.
"""


class InputBuffer:
    __slots__ = ("grads",)

    def __init__(self, size):
        self.grads = [None] * size

    def add(self, slot, grad):
        """Accumulate out of place: a gradient array may be shared by several edges."""
        old = self.grads[slot]
        self.grads[slot] = grad if old is None else old + grad
