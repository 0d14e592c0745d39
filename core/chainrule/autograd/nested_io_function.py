"""``autograd.NestedIOFunction``: torch's legacy Function with nested (lists, tuples
of tensors) inputs and outputs, kept for old code that subclasses it or calls its
helpers. As in torch, it predates static ``forward``/``backward``: calling an
instance needs the removed ``Function._do_forward`` and fails; new code uses
``Function``."""
from .._tensor import Tensor
from .function import Function

__all__ = ["NestedIOFunction"]


def _iter_tensors(obj):
    """The tensors of a nested structure (lists, tuples, dicts' values), in order."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _iter_tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _iter_tensors(item)


def _iter_none_tensors(obj):
    """Like ``_iter_tensors``, keeping the Nones (missing gradients) too."""
    if obj is None or isinstance(obj, Tensor):
        yield obj
    else:
        for item in obj:
            yield from _iter_none_tensors(item)


def _unflatten(flat, proto):
    """``flat`` (a sequence) put back into the nesting of ``proto``."""
    items = iter(flat)

    def rebuild(node):
        if isinstance(node, (list, tuple)):
            return type(node)(rebuild(item) for item in node) if isinstance(node, list) \
                else tuple(rebuild(item) for item in node)
        return next(items)
    return rebuild(proto)


def _data(obj):
    """A nested structure with each tensor replaced by its ``.data``."""
    if isinstance(obj, Tensor):
        return obj.data
    if isinstance(obj, (list, tuple)):
        return type(obj)(_data(item) for item in obj)
    return obj


class NestedIOFunction(Function):
    """Legacy: subclasses define ``forward_extended(*inputs)`` and
    ``backward_extended(*grad_outputs)`` on nested structures; ``forward`` and
    ``backward`` flatten them and ``save_for_backward``/``saved_tensors``,
    ``mark_dirty`` and ``mark_non_differentiable`` accept nested arguments.

    >>> import chainrule as cr
    >>> class Scale(cr.autograd.NestedIOFunction):
    ...     def forward_extended(self, pair):
    ...         return [pair[0] * 2, (pair[1] * 3,)]
    ...     def backward_extended(self, grad_first, grad_rest):
    ...         return [grad_first * 2, grad_rest[0] * 3]
    >>> f = Scale(); f._nested_input = ([cr.ones(1), cr.ones(1)],)
    >>> [t.item() for t in f.forward()]
    [2.0, 3.0]
    >>> [g.item() for g in f.backward(cr.ones(1), cr.ones(1))]
    [2.0, 3.0]
    """

    def __init__(self, *args, **kwargs):
        pass             # a legacy (instance-method) Function by design

    def _do_forward(self, *input):
        self._nested_input = input
        flat_output = super()._do_forward(*tuple(_iter_tensors(input)))  # gone, as in torch
        return _unflatten(flat_output, self._nested_output)

    __call__ = _do_forward

    def forward(self, *args):
        """Run ``forward_extended`` on the nested input's data; the flat outputs."""
        result = self.forward_extended(*_data(self._nested_input))
        del self._nested_input
        self._nested_output = result
        return tuple(_iter_tensors(result))

    def backward(self, *gradients):
        """Run ``backward_extended`` on the gradients nested like the outputs."""
        result = self.backward_extended(*_unflatten(gradients, self._nested_output))
        return tuple(_iter_none_tensors(result))

    def save_for_backward(self, *args):
        """Save the tensors of a nested structure."""
        self.to_save = tuple(_iter_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        """The saved tensors, nested as they were given."""
        return _unflatten(self.to_save, self._to_save_nested)

    def mark_dirty(self, *args, **kwargs):
        """Declare the (nested) inputs modified in place."""
        self.dirty_tensors = tuple(_iter_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs):
        """Declare the (nested) outputs that are not differentiable."""
        self.non_differentiable = tuple(_iter_tensors((args, kwargs)))

    def forward_extended(self, *input):
        """The user's forward, on nested inputs."""
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        """The user's backward, on nested gradients."""
        raise NotImplementedError
