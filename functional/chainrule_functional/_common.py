"""Argument handling shared by the functional API: tuples in and out, the inputs'
fresh copies, ``v`` checks, strict-mode checks and zeros for unused inputs.

Note [functional nesting]
    Each function takes ``inputs`` as a Tensor or a tuple of Tensors (likewise the
    user function's outputs and ``v``) and answers in the same shape: a tuple where
    a tuple was given, a bare Tensor where a Tensor was. ``jacobian`` nests two
    levels (outputs, then inputs); ``hessian`` (inputs, inputs).
"""
import numpy as np

import chainrule as cr
from chainrule._batched import LEVELS as VMAP_LEVELS
from chainrule.autograd.engine import get_engine
from chainrule.autograd.node import gradient_edge


def as_tuple(value, arg_name, fn_name):
    """(whether ``value`` was a tuple, ``value`` as a tuple), checking that it holds
    Tensors only."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, cr.Tensor):
            where = f"the value at index {i} has type" if is_tuple else \
                f"the given {arg_name} has type"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where} {type(item)}.")
    return is_tuple, items


def untuple(result, was_tuple):
    """Note [functional nesting]: ``was_tuple`` is one flag, or (outer, inner)."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(r[0] for r in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def fresh_inputs(inputs, create_graph, need_graph):
    """New Tensor objects for the inputs, so the function's own uses of them are told
    apart from tensors it captured: a differentiable alias when the caller's graph
    must reach them (create_graph), else detached copies (requiring grad when we
    differentiate with respect to them)."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def finish(tensors, create_graph):
    """Results without history unless the caller asked for a graph."""
    if create_graph:
        return tuple(tensors)
    return tuple(t.detach() for t in tensors)


def check_v(v, others, others_are_tuple):
    if len(v) != len(others):
        if others_are_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(others)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, others)):
        if a._data.shape != b._data.shape:       # (Size objects only for the message)
            where = f"Entry {i} in " if others_are_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got "
                               f"{a.size()}.")


_STRICT_MESSAGES = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
               "outputs must be computed in a differentiable manner from the input when "
               "running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of "
                   "the user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should "
               "ensure that your function is thrice differentiable and that the hessian "
               "depends on the inputs.",
}


def check_requires_grad(tensors, kind, strict):
    """strict mode: every tensor must be differentiable (``kind`` picks the message)."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT_MESSAGES[kind].format(i=i))


def scalar_grad(output, inputs):
    """``grad_of((output,), inputs)`` for one scalar ``output`` without create_graph:
    the engine directly, with a root gradient of one (autograd.grad's argument
    handling is for general calls); None for unused inputs, and for every input
    when ``output`` does not require grad."""
    if output is None or not output.requires_grad:
        return (None,) * len(inputs)
    if VMAP_LEVELS.stack:               # batched tensors: autograd.grad's vmap path
        return grad_of((output,), inputs)
    with cr.no_grad():
        captured = get_engine().execute([gradient_edge(output)],
                                        [np.ones(output._data.shape, output._data.dtype)],
                                        False, False, [gradient_edge(x) for x in inputs],
                                        accumulate_grad=False)
    return tuple(None if g is None else cr.Tensor._wrap(g) for g in captured)


def grad_of(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
            is_grads_batched=False):
    """autograd.grad over the outputs that require grad (None for every input when
    none does); unused inputs give None."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    used, used_grads = [], []           # (a loop: no comprehension frames on this path)
    for o, g in zip(outputs, grad_outputs):
        if o is not None and o.requires_grad:
            used.append(o)
            used_grads.append(g)
    if not used:
        return (None,) * len(inputs)
    return cr.autograd.grad(used, inputs, used_grads, retain_graph=retain_graph,
                            create_graph=create_graph, allow_unused=True,
                            is_grads_batched=is_grads_batched)


_ZERO_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def zeros_for_none(grads, refs, strict, create_graph, stage):
    """Replace None gradients by zeros shaped like ``refs`` (strict mode raises,
    naming the ``stage`` of the computation, instead)."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_MESSAGES[stage].format(i=i))
            g = cr.zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)


def forward_ad():
    """The forward_ad layer, or None when its wheel is not installed."""
    try:
        import chainrule_forward_ad
    except ImportError:
        return None
    return chainrule_forward_ad
