"""``chainrule.utils.hooks``: the handle every module hook registration returns, and
the markers for hooks that are not saved with a tensor."""
import warnings

from .._grad_mode import is_grad_enabled
from .._tensor import Tensor
from ..autograd.function import Function
from ..nn.modules.module import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


def unserializable_hook(f):
    """Mark ``f`` as a hook that is not expected to be saved with its tensor (no
    warning from ``warn_if_has_hooks``); returns ``f``.

    >>> import chainrule as cr
    >>> hook = cr.utils.hooks.unserializable_hook(lambda grad: grad)
    >>> hook.__torch_unserializable__
    True
    """
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn for each gradient hook of ``tensor`` not marked ``unserializable_hook``:
    saving the tensor drops it.

    >>> import chainrule as cr
    >>> x = cr.ones(1, requires_grad=True)
    >>> _ = x.register_hook(cr.utils.hooks.unserializable_hook(lambda g: g))
    >>> cr.utils.hooks.warn_if_has_hooks(x)
    """
    for hook in _gradient_hooks(tensor).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If "
                          "this is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)


def _gradient_hooks(tensor):
    """``register_hook``'s table for ``tensor``: on a leaf itself, else on its node."""
    if tensor.grad_fn is None:
        return (tensor._extra.hooks if tensor._extra is not None else None) or {}
    return (tensor.grad_fn._tensor_hooks or {}).get(tensor._output_nr, {})


class BackwardHookFunction(Function):
    """The identity on tensors, as one node (``BackwardHookFunctionBackward``) whose
    hooks see the gradients of all of them at once; inputs that do not require grad
    come out non-differentiable."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class BackwardHook:
    """The reference's machinery of ``nn.Module`` full backward hooks, for code that
    drives it itself: ``setup_input_hook(args)`` and ``setup_output_hook(outputs)`` put
    the tensors among them through a BackwardHookFunction node; in backward the output
    node runs ``user_pre_hooks(module, grad_output)`` (each may replace grad_output),
    and the input node runs ``user_hooks(module, grad_input, grad_output)`` (each may
    replace grad_input), with None where an argument is not a tensor.

    >>> import chainrule as cr
    >>> from chainrule.utils.hooks import BackwardHook
    >>> seen = []
    >>> hook = BackwardHook(None, [lambda m, gi, go: seen.append((gi[0].tolist(),
    ...                                                          go[0].tolist()))], [])
    >>> x, = hook.setup_input_hook((cr.ones(2, requires_grad=True),))
    >>> y = hook.setup_output_hook(x * 3)
    >>> y.sum().backward(); seen
    [([3.0, 3.0], [1.0, 1.0])]
    """

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        """``values`` at ``indices`` of a ``size``-tuple, None elsewhere."""
        packed = [None] * size
        for i, value in zip(indices, values):
            packed[i] = value
        return tuple(packed)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[i] for i in indices)

    def _set_user_hook(self, grad_fn):
        grad_fn.register_hook(lambda grad_input, _: self._run_user_hooks(grad_input))

    def _run_user_hooks(self, grad_input):
        if self.grad_outputs is None:      # reached without the outputs (double backward)
            return None
        packed = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            result = hook(self.module, packed, self.grad_outputs)
            if result is None:
                continue
            if len(result) != len(packed):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(result)}, but expected {len(packed)}")
            packed = result
        self.grad_outputs = None
        return self._unpack_none(self.input_tensors_index, packed)

    def _apply_on_tensors(self, fn, args):
        """``args`` with its tensors through one BackwardHookFunction node (``fn`` gets
        the node), and their positions; ``args`` unchanged and None when nothing
        requires grad or grad mode is off."""
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in positions]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        if not new:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input "
                               "Tensors.")
        nodes = [t.grad_fn for t in new if t.grad_fn is not None and
                 t.grad_fn.name() == "BackwardHookFunctionBackward"]
        fn(nodes[0])
        values = list(args)
        for i, t in zip(positions, new):
            values[i] = t
        return (tuple(values) if type(args) is tuple else type(args)(*values)), positions

    def setup_input_hook(self, args):
        """``args`` with its tensors behind the node whose hook runs ``user_hooks``."""
        result, positions = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs, self.input_tensors_index = len(args), positions
        return result

    def setup_output_hook(self, args):
        """``args`` (a tensor or a tuple) with its tensors behind the node whose hook
        records grad_output and runs ``user_pre_hooks``."""
        single = not isinstance(args, tuple)
        args = (args,) if single else args
        result, positions = self._apply_on_tensors(
            lambda node: node.register_hook(lambda _, grad_output:
                                            self._at_outputs(grad_output)), args)
        self.n_outputs, self.output_tensors_index = len(args), positions
        return result[0] if single else result

    def _at_outputs(self, grad_output):
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                 self.n_outputs)
        for hook in self.user_pre_hooks:
            result = hook(self.module, self.grad_outputs)
            if result is None:
                continue
            if len(result) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(result)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = result
        kept = self.grad_outputs
        if self.input_tensors_index is None:
            self._hooks_without_input_grads()
        return tuple(kept[i] for i in self.output_tensors_index)

    def _hooks_without_input_grads(self):
        """No input requires grad: the user hooks run here, with grad_input all None."""
        warnings.warn("Full backward hook is firing when gradients are computed with "
                      "respect to module outputs since no inputs require gradients. See "
                      "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                      "#torch.nn.Module.register_full_backward_hook for more details.",
                      stacklevel=5)
        grad_inputs = (None,) * self.n_inputs
        for hook in self.user_hooks:
            result = hook(self.module, grad_inputs, self.grad_outputs)
            if result is not None and not (isinstance(result, tuple) and
                                           all(r is None for r in result)):
                raise RuntimeError("Backward hook for Modules where no input requires "
                                   "gradient should always return None or None for all "
                                   "gradients.")
        self.grad_outputs = None
