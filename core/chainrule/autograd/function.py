"""Custom differentiable functions: ``chainrule.autograd.Function``.

A subclass defines static ``forward`` and ``backward`` (and optionally
``setup_context``, ``jvp``, ``vmap``); ``apply`` runs forward without recording and
makes one graph node for the whole call. That node is also the ``ctx`` the methods
receive: its class is ``<Name>Backward``, created with the subclass.

Note [custom function outputs]
    An output that is a new tensor gets the node as grad_fn. An input returned as is
    (not marked dirty) is returned as a fresh alias with the node as grad_fn, so the
    input's own history is untouched. An input marked dirty (modified in place) keeps
    its identity: its version is bumped and its history rebased onto the node.

Note [materialized gradients]
    ``backward`` always receives one gradient per forward output. An output whose
    gradient is undefined (never used, used only by a node that returned None, or no
    gradient reached the node at all: the engine then runs it with None for every
    output) gets zeros of its shape and dtype, unless ``ctx.set_materialize_grads(False)``
    asked for None. An output that is not a tensor always gets None. This is what makes Functions that return their intermediate
    results as extra outputs (for double backward) work.
"""
import functools

import numpy as np

from .. import _grad_mode, _legacy_slots
from .._batched import FUNC_TRANSFORMS as _FUNC_TRANSFORMS, LEVELS as _LEVELS
from .._tensor import Tensor
from .node import Node, grad_accumulator
from .saved_tensor import FREED_MESSAGE, RawSavedTensor, SavedTensor


class FunctionCtx:
    """The methods a ``ctx`` offers in ``forward``/``setup_context``/``backward``."""

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for backward; read them back with ``saved_tensors``."""
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors for ``jvp`` (forward-mode AD)."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        """Declare inputs that forward modified in place (and returns).

        >>> import chainrule as cr
        >>> class AddOne_(cr.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         x.numpy()[...] += 1          # forward runs with grad mode off
        ...         ctx.mark_dirty(x)
        ...         return x
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         return g
        >>> a = cr.ones(2, requires_grad=True).clone()
        >>> AddOne_.apply(a).grad_fn.name(), a._version, a.tolist()
        ('AddOne_Backward', 1, [2.0, 2.0])
        """
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that are not differentiable (they won't require grad)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """Whether undefined output gradients reach backward as zeros (default) or None."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The graph node (and ctx) of one call of a custom Function."""

    _forward_cls = None
    _to_save = ()
    _dirty = ()
    _non_differentiable = ()
    materialize_grads = True
    _saved = None
    _released = False
    _jvp_saved = None      # what save_for_forward saved, while jvp runs (Note [tangent slot])
    # A Python class in the reference: the default repr names its module.
    __repr__ = object.__repr__

    @property
    def saved_tensors(self):
        if self._jvp_saved is not None:
            return self._jvp_saved
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        if self._saved is None:
            return tuple(self._to_save)
        return tuple(None if s is None else s.as_tensor(self) for s in self._saved)

    @property
    def _raw_saved_tensors(self):
        """The saved tensors themselves (``register_hooks``), like the reference's."""
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        saved = self._saved if self._saved is not None else ()
        return tuple(None if s is None else
                     RawSavedTensor(self, lambda n, i=i: n._saved[i] if n._saved else None)
                     for i, s in enumerate(saved))

    def release_saved(self):
        if self._saved:
            self._released = True
            self._saved = None

    def num_inputs(self):
        return len(self._out_meta)

    def apply(self, grads, create_graph):
        grads = [self._grad_for(i, g) for i, g in enumerate(grads)]
        backward = self._forward_cls.backward
        # Recording follows create_graph; the batched backward asks for the tensor path
        # (create_graph) with recording off (Note [one backward for a batch of cotangents]).
        with _grad_mode.set_grad_enabled(create_graph and _grad_mode.STATE.grad_enabled):
            result = backward(self, *grads)
        result = result if isinstance(result, tuple) else (result,)
        return self._route_results(result, create_graph)

    def _grad_for(self, index, grad):
        if grad is None:            # Note [materialized gradients]
            shape, dtype = self._out_meta[index]
            if not self.materialize_grads or dtype is None:     # dtype None: not a tensor
                return None
            return Tensor._wrap(np.zeros(shape, dtype))
        return grad if isinstance(grad, Tensor) else Tensor._wrap(grad)

    def _route_results(self, result, create_graph):
        n_args = len(self._is_tensor_arg)
        if len(result) < n_args or any(r is not None for r in result[n_args:]):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {n_args}, got {len(result)})")
        grads = []
        for position, (grad, is_tensor) in enumerate(zip(result, self._is_tensor_arg)):
            if not is_tensor:
                if grad is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {position + 1}, but the corresponding forward input was not "
                        "a Variable")
                continue
            if grad is not None and not isinstance(grad, Tensor):
                raise TypeError(f"function {self.name()} returned a gradient of type "
                                f"{type(grad).__name__} at position {position + 1}; expected a "
                                "Tensor or None")
            grads.append(grad if grad is None or create_graph else grad._data)
        return grads


class FunctionMeta(type):
    """Creates ``<Name>Backward``, the node class, with each Function subclass."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom differentiable operations.

    >>> import chainrule as cr
    >>> class Exp(cr.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         result = x.exp()
    ...         ctx.save_for_backward(result)
    ...         return result
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         (result,) = ctx.saved_tensors
    ...         return grad_output * result
    >>> x = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> Exp.apply(x).sum().backward()
    >>> [round(v, 4) for v in x.grad.tolist()]
    [1.0, 2.7183]
    """

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        if type(self).forward is not Function.forward and \
                not isinstance(type(self).__dict__.get("forward"), staticmethod) and \
                _legacy_slots.LEGACY_FUNCTION is None:     # Note [legacy Function slot]
            raise RuntimeError(_LEGACY_MESSAGE)

    def __call__(self, *args, **kwargs):
        if _legacy_slots.LEGACY_FUNCTION is None or kwargs:  # Note [legacy Function slot]
            raise RuntimeError(_LEGACY_MESSAGE)
        return _legacy_slots.LEGACY_FUNCTION(self, args)

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def vmap(info, in_dims, *args):
        """The batching rule (Note [custom Functions under vmap]): ``info.batch_size``,
        ``info.randomness``, the batch dimension of each argument (None: unbatched);
        returns ``(outputs, out_dims)``."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either "
                                  "override the vmap staticmethod or set "
                                  "generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the function on ``args``, recording one node when any input needs grad."""
        _check_static(cls)
        from .custom_apply import apply_function
        if _LEVELS.stack or _FUNC_TRANSFORMS.active:   # inside vmap or a chainrule.func transform
            from .._vmap import apply_function_batched, check_transformable, lowered
            if check_transformable(cls):        # Note [custom Functions under transforms]
                out = apply_function_batched(cls, args, kwargs)
                if out is not NotImplemented:
                    return out
                with lowered(_LEVELS.stack):
                    return apply_function(cls, args, kwargs)
        return apply_function(cls, args, kwargs)


_LEGACY_MESSAGE = ("Legacy autograd function with non-static forward method is deprecated. "
                   "Please use new-style autograd function with static forward method. "
                   "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")


def _check_static(cls):
    for klass in cls.__mro__:
        if "forward" in klass.__dict__:
            if not isinstance(klass.__dict__["forward"], staticmethod):
                raise RuntimeError(_LEGACY_MESSAGE)
            return


def once_differentiable(backward):
    """Mark a backward as not differentiable: it runs without recording, and a
    double backward through it raises a clear error.

    >>> import chainrule as cr
    >>> class Square(cr.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @cr.autograd.function.once_differentiable
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = cr.tensor([3.0], requires_grad=True)
    >>> Square.apply(x).sum().backward(); x.grad.tolist()
    [6.0]
    """
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with _grad_mode.no_grad():
            outputs = backward(ctx, *grads)
        if not _grad_mode.is_grad_enabled():
            return outputs
        requires = any(g is not None and g.requires_grad for g in grads)
        if not requires:
            return outputs
        from .custom_apply import mark_once_differentiable
        return mark_once_differentiable(outputs)
    return wrapper


from .nested_io_function import NestedIOFunction  # noqa: E402,F401  (torch's legacy name here)
