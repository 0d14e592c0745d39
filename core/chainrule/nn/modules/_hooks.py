"""A module call with hooks: forward pre-hooks, forward, forward hooks, and the
identity Functions that catch the gradients w.r.t. the module's outputs and inputs
for the full backward hooks.

Note [full backward hooks]
    The module's tensor outputs pass through an identity Function whose backward sees
    every ``grad_output`` at once (it runs the backward pre-hooks, which may replace
    them); its tensor inputs pass through another whose backward sees every
    ``grad_input`` at once and runs the backward hooks with both. If no input
    requires grad, the hooks run at the outputs' node with ``grad_input`` all None.
    Both nodes pass gradients through unchanged unless a hook returns new ones.
"""
import warnings

from ..._grad_mode import is_grad_enabled
from ..._tensor import Tensor
from ...autograd.function import Function
from . import module as _module


class _State:
    """What the two identity nodes of one call share."""

    def __init__(self, module, n_inputs):
        self.module = module
        self.n_inputs = n_inputs
        self.grad_output = None


def _backward_hooks(module):
    """The full backward hooks of one call: the global ones first (Note [global
    module hooks])."""
    return [*_module._global_backward_hooks.values(), *module._backward_hooks.values()]


def _backward_pre_hooks(module):
    return [*_module._global_backward_pre_hooks.values(),
            *module._backward_pre_hooks.values()]


def _run_backward_hooks(state, grad_input):
    for hook in _backward_hooks(state.module):
        result = hook(state.module, grad_input, state.grad_output)
        if result is not None:
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grad_input):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(result)}, but expected {len(grad_input)}")
            grad_input = result
    return grad_input


class _OutputHook(Function):
    @staticmethod
    def forward(ctx, state, inputs_need_grad, *outputs):
        ctx.state, ctx.inputs_need_grad = state, inputs_need_grad
        return outputs if len(outputs) > 1 else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        state = ctx.state
        for hook in _backward_pre_hooks(state.module):
            result = hook(state.module, grads)
            if result is not None:
                grads = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        state.grad_output = grads
        if not ctx.inputs_need_grad and _backward_hooks(state.module):
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=2)
            _run_backward_hooks(state, (None,) * state.n_inputs)
        return (None, None) + tuple(grads)


class _InputHook(Function):
    @staticmethod
    def forward(ctx, state, *inputs):
        ctx.state = state
        return inputs if len(inputs) > 1 else inputs[0]

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(_run_backward_hooks(ctx.state, grads))


# the reference names both hook nodes BackwardHookFunctionBackward (grad_fn.name())
for _hook_function in (_OutputHook, _InputHook):
    _hook_function._backward_cls.__name__ = "BackwardHookFunctionBackward"
    _hook_function._backward_cls.__qualname__ = "BackwardHookFunctionBackward"


def _wrap_tensors(values, wrap):
    """Apply ``wrap`` to the tensors among ``values`` (a tuple), others unchanged."""
    positions = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    if not positions:
        return values
    wrapped = wrap(*[values[i] for i in positions])
    wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
    out = list(values)
    for i, w in zip(positions, wrapped):
        out[i] = w
    return tuple(out)


def _run_pre_hooks(module, args, kwargs):
    for hook_id, hook in [*_module._global_forward_pre_hooks.items(),
                          *module._forward_pre_hooks.items()]:
        if hook_id in module._forward_pre_hooks_with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    return args, kwargs


def _run_forward_hooks(module, args, kwargs, output, only_always=False):
    for hook_id, hook in [*_module._global_forward_hooks.items(),
                          *module._forward_hooks.items()]:
        if only_always and not _always_called(module, hook_id):
            continue
        if hook_id in module._forward_hooks_with_kwargs or \
                hook_id in _module._global_forward_hooks_with_kwargs:
            result = hook(module, args, kwargs, output)
        else:
            result = hook(module, args, output)
        if result is not None:
            output = result
    return output


def _always_called(module, hook_id):
    return hook_id in module._forward_hooks_always_called or \
        hook_id in _module._global_forward_hooks_always_called


def call_with_hooks(module, args, kwargs):
    """``module(*args, **kwargs)`` with its hooks (Note [full backward hooks])."""
    args, kwargs = _run_pre_hooks(module, args, kwargs)
    full = (_backward_hooks(module) or _backward_pre_hooks(module)) and is_grad_enabled()
    state = None
    if full:
        state = _State(module, sum(isinstance(a, Tensor) for a in args))
        needs = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        if needs:
            args = _wrap_tensors(args, lambda *ts: _InputHook.apply(state, *ts))
    try:
        output = module.forward(*args, **kwargs)
    except Exception:
        if module._forward_hooks_always_called or _module._global_forward_hooks_always_called:
            _run_forward_hooks(module, args, kwargs, None, only_always=True)
        raise
    output = _run_forward_hooks(module, args, kwargs, output)
    if full:
        output = _wrap_output(output, state, needs)
    return output


def _wrap_output(output, state, inputs_need_grad):
    def wrap(*ts):
        if not any(t.requires_grad for t in ts):
            return ts if len(ts) > 1 else ts[0]
        return _OutputHook.apply(state, inputs_need_grad, *ts)
    if isinstance(output, Tensor):
        return wrap(output)
    if isinstance(output, tuple):
        return _wrap_tensors(output, wrap)
    return output
