"""``chainrule.autograd.functional``: vjp, jvp, jacobian, hessian, vhp, hvp of a
user function (Note [functional nesting] in _common.py for the result shapes)."""
import numpy as np

import chainrule as cr

from . import _forward_jacobian as _one_pass
from ._common import (as_tuple, check_requires_grad, check_v, finish, forward_ad,
                      fresh_inputs, grad_of, scalar_grad, untuple, zeros_for_none)

_OUTPUTS = "outputs of the user-provided function"


def _prepare_v(v, others, others_are_tuple, fn_name, create_graph, none_message):
    if v is None:
        if len(others) != 1 or others[0].numel() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = as_tuple(v, "v", fn_name)
    v = fresh_inputs(v, create_graph, need_graph=False)
    check_v(v, others, others_are_tuple)
    return v


_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a "
                  "single Tensor with a single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is "
                 "a single Tensor with a single element.")


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """The function's outputs and the vector-Jacobian product ``v^T J``.

    >>> import chainrule as cr
    >>> from chainrule.autograd.functional import vjp
    >>> out, g = vjp(lambda x: x ** 2, cr.tensor([1.0, 2.0]), cr.tensor([1.0, 1.0]))
    >>> g.tolist()
    [2.0, 4.0]
    """
    with cr.enable_grad():
        inputs_are_tuple, inputs = as_tuple(inputs, "inputs", "vjp")
        inputs = fresh_inputs(inputs, create_graph, need_graph=True)
        outputs_are_tuple, outputs = as_tuple(func(*inputs), _OUTPUTS, "vjp")
        check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, outputs_are_tuple, "vjp", create_graph, _V_NONE_OUTPUT)
    with cr.set_grad_enabled(create_graph or cr.is_grad_enabled()):
        grads = grad_of(outputs, inputs, v, create_graph=create_graph)
        grads = zeros_for_none(grads, inputs, strict, create_graph, "back")
    return (untuple(finish(outputs, create_graph), outputs_are_tuple),
            untuple(finish(grads, create_graph), inputs_are_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """The function's outputs and the Jacobian-vector product ``J v``: forward mode
    when the forward_ad layer is installed (and no dual level is active), else the
    double-backward trick (also used for ``strict=True``, whose checks it needs).

    >>> import chainrule as cr
    >>> from chainrule.autograd.functional import jvp
    >>> out, t = jvp(lambda x: x ** 2, cr.tensor([1.0, 2.0]), cr.tensor([1.0, 0.0]))
    >>> t.tolist()
    [2.0, 0.0]
    """
    fwAD = forward_ad()
    with cr.enable_grad():
        inputs_are_tuple, inputs = as_tuple(inputs, "inputs", "jvp")
        forward = fwAD is not None and not strict and not _dual_level_active(fwAD)
        inputs = fresh_inputs(inputs, create_graph, need_graph=not forward)
        v = _prepare_v(v, inputs, inputs_are_tuple, "jvp", create_graph, _V_NONE_INPUT)
        if v is None:
            v = (cr.ones_like(inputs[0]),)
        if forward:
            return _jvp_forward(fwAD, func, inputs, v, create_graph)
        return _jvp_double_backward(func, inputs, v, create_graph, strict)


def _dual_level_active(fwAD):
    from chainrule_forward_ad._tangents import CURRENT
    return CURRENT[0] is not None


def _jvp_forward(fwAD, func, inputs, v, create_graph):
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, t) for x, t in zip(inputs, v)]
        outputs_are_tuple, outputs = as_tuple(func(*duals), _OUTPUTS, "jvp")
        tangents = [fwAD.unpack_dual(o).tangent for o in outputs]
    # the outputs themselves (their tangents left with the level), not unpack_dual's
    # aliases: with create_graph they keep their own nodes, as the reference's do
    tangents = [cr.zeros_like(o) if t is None else t for o, t in zip(outputs, tangents)]
    return (untuple(finish(outputs, create_graph), outputs_are_tuple),
            untuple(finish(tangents, create_graph), outputs_are_tuple))


def _jvp_double_backward(func, inputs, v, create_graph, strict):
    """J v as the gradient, with respect to a dummy output gradient u, of u^T J."""
    outputs_are_tuple, outputs = as_tuple(func(*inputs), _OUTPUTS, "jvp")
    check_requires_grad(outputs, "outputs", strict)
    dummies = tuple(cr.zeros_like(o, requires_grad=True) for o in outputs)
    grad_inputs = grad_of(outputs, inputs, dummies, create_graph=True)
    check_requires_grad(grad_inputs, "grad_inputs", strict)
    with cr.set_grad_enabled(create_graph or cr.is_grad_enabled()):
        result = grad_of(grad_inputs, dummies, v, create_graph=create_graph)
        result = zeros_for_none(result, outputs, strict, create_graph, "back_trick")
    return (untuple(finish(outputs, create_graph), outputs_are_tuple),
            untuple(finish(result, create_graph), outputs_are_tuple))


_STRATEGY_MESSAGE = ('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If '
                     'your function has more outputs than inputs, "forward-mode" tends to be '
                     'more performant. Otherwise, prefer to use "reverse-mode".')


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: entry [i][j] has shape
    ``outputs[i].shape + inputs[j].shape`` (Note [functional nesting]).

    >>> import chainrule as cr
    >>> from chainrule.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, cr.tensor([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY_MESSAGE)
    if strategy == "forward-mode":
        return _jacobian_forward(func, inputs, create_graph, strict, vectorize)
    given = inputs
    with cr.enable_grad():
        inputs_are_tuple, inputs = as_tuple(inputs, "inputs", "jacobian")
        inputs = fresh_inputs(inputs, create_graph, need_graph=True)
        outputs_are_tuple, outputs = as_tuple(func(*inputs), _OUTPUTS, "jacobian")
        check_requires_grad(outputs, "outputs", strict)
        if vectorize and not create_graph and not strict and \
                _one_pass.worth_it(outputs, inputs):
            one_pass = _jacobian_one_pass(func, given)
            if one_pass is not None:
                return one_pass
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                                   "`vectorized=True` are not supported together. Please "
                                   "either set `strict=False` or `vectorize=False`.")
            rows = _jacobian_batched(outputs, inputs, create_graph)
        else:
            rows = [_jacobian_rows(i, out, inputs, create_graph, strict)
                    for i, out in enumerate(outputs)]
    return untuple(tuple(finish(row, create_graph) for row in rows),
                   (outputs_are_tuple, inputs_are_tuple))


def _jacobian_rows(i, out, inputs, create_graph, strict):
    """Output ``i``'s Jacobian blocks, one backward pass per element of the output."""
    columns = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(out.numel()):
        grads = grad_of((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (g, x) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {j}. This is not allowed in "
                                       "strict mode.")
                g = cr.zeros_like(x)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is "
                                   f"independent of input {i}. This is not allowed in strict "
                                   "mode when create_graph=True.")
            columns[j].append(g)
    return tuple(_stack_rows(col, out, x) for col, x in zip(columns, inputs))


def _stack_rows(rows, out, x):
    if not rows:
        return cr.zeros(*(tuple(out.shape) + tuple(x.shape)), dtype=x.dtype)
    return cr.stack(rows).reshape(tuple(out.shape) + tuple(x.shape))


def _jacobian_batched(outputs, inputs, create_graph):
    """All outputs' Jacobians from one batched gradient call: the grad_outputs are the
    rows of an identity over the outputs' concatenated elements."""
    numels = [o.numel() for o in outputs]
    total = sum(numels)
    flat = [o.reshape(-1) for o in outputs]
    # output k's rows of one identity over every output element (made on the arrays)
    eyes, start = [], 0
    for o, n in zip(outputs, numels):
        eyes.append(cr.Tensor._wrap(np.eye(total, n, -start, dtype=o._data.dtype)))
        start += n
    grads = grad_of(flat, inputs, eyes, create_graph=create_graph, is_grads_batched=True) \
        if total else (None,) * len(inputs)
    grads = [cr.zeros(total, *x.shape, dtype=x.dtype) if g is None else g
             for g, x in zip(grads, inputs)]
    rows, start = [], 0
    for o, n in zip(outputs, numels):
        rows.append(tuple((g if n == total else g[start:start + n]).reshape(
            tuple(o.shape) + tuple(x.shape)) for g, x in zip(grads, inputs)))
        start += n
    return rows


def _jacobian_forward(func, inputs, create_graph, strict, vectorize):
    if create_graph:
        raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                  '`strategy="forward-mode"` are not supported together (yet). '
                                  "Please either set `create_graph=False` or "
                                  '`strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    given = inputs
    inputs_are_tuple, inputs = as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    fwAD = forward_ad()
    if fwAD is None:
        raise ImportError("jacobian(strategy=\"forward-mode\") needs the chainrule-forward-ad "
                          "wheel (pip install chainrule-forward-ad)")
    one_pass = _jacobian_one_pass(func, given, as_lists=True)
    if one_pass is not None:
        return one_pass
    outputs_are_tuple, columns = _forward_columns(fwAD, func, inputs)
    # lists, not tuples, when both are tuples: the reference answers so in forward mode
    rows = [[_columns_to_block(columns[j][i], x) for j, x in enumerate(inputs)]
            for i in range(len(columns[0]))]
    return untuple(rows, (outputs_are_tuple, inputs_are_tuple))


def _jacobian_one_pass(func, inputs, as_lists=False):
    """Note [one-pass jacobians]: the Jacobian from one batched forward pass, or None
    where that pass does not apply."""
    inputs_are_tuple, inputs = as_tuple(inputs, "inputs", "jacobian")
    if not _one_pass.usable(inputs):
        return None
    flags = []

    def call(*duals):
        outputs_are_tuple, outputs = as_tuple(func(*duals), _OUTPUTS, "jacobian")
        flags.append(outputs_are_tuple)
        return outputs
    try:
        _, blocks = _one_pass.forward_jacobian(call, inputs, history=as_lists)
    except NotImplementedError:
        return None
    if as_lists:        # strategy="forward-mode": lists, with any history, like the reference
        return untuple([list(b) for b in blocks], (flags[0], inputs_are_tuple))
    rows = tuple(finish(b, False) for b in blocks)
    return untuple(rows, (flags[0], inputs_are_tuple))


def _forward_columns(fwAD, func, inputs):
    """columns[j][i]: output i's tangents, one per element of input j (its basis
    tangents), stacked along a leading dimension."""
    columns, outputs_are_tuple = [], False
    with fwAD.dual_level():
        for j, x in enumerate(inputs):
            per_output = None
            for k in range(x.numel()):
                basis = cr.zeros(x.numel(), dtype=x.dtype)
                basis[k] = 1
                args = [fwAD.make_dual(a, basis.reshape(a.shape)) if n == j else a
                        for n, a in enumerate(inputs)]
                outputs_are_tuple, outs = as_tuple(func(*args), _OUTPUTS, "jacobian")
                tangents = [_tangent_or_zeros(fwAD, o) for o in outs]
                per_output = [[] for _ in outs] if per_output is None else per_output
                for lst, t in zip(per_output, tangents):
                    lst.append(t)
            if per_output is None:          # an empty input: evaluate once for the shapes
                outputs_are_tuple, outs = as_tuple(func(*inputs), _OUTPUTS, "jacobian")
                per_output = [(o, []) for o in outs]
            columns.append(per_output)
    return outputs_are_tuple, columns


def _tangent_or_zeros(fwAD, out):
    tangent = fwAD.unpack_dual(out).tangent
    return cr.zeros_like(out).detach() if tangent is None else tangent


def _columns_to_block(tangents, x):
    """Stacked basis-tangent outputs (numel(x), *out_shape) -> out_shape + x.shape."""
    if isinstance(tangents, tuple):                      # empty input
        out, _ = tangents
        return cr.zeros(*(tuple(out.shape) + tuple(x.shape)), dtype=out.dtype)
    stacked = cr.stack(tangents, dim=-1)
    return stacked.reshape(tuple(stacked.shape[:-1]) + tuple(x.shape))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: entry [i][j] has shape
    ``inputs[i].shape + inputs[j].shape``.

    >>> import chainrule as cr
    >>> from chainrule.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), cr.tensor([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    inputs_are_tuple, inputs = as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_output(*args):
        out = func(*args)
        out_is_tuple, outs = as_tuple(out, _OUTPUTS, "hessian")
        check_requires_grad(outs, "outputs", strict)
        if out_is_tuple or not isinstance(out, cr.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def gradient(*args):
        # the outer jacobian differentiates this gradient: in forward mode (or the
        # one-pass forward of Note [one-pass jacobians]) its inputs are duals that
        # must stay attached, which the inner jacobian's fresh inputs do for inputs
        # that require grad
        args = tuple(a if a.requires_grad else a.requires_grad_(True) for a in args)
        jac = jacobian(scalar_output, args, create_graph=True)
        check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return untuple(result, (inputs_are_tuple, inputs_are_tuple))


def _scalar_function_prologue(func, inputs, v, create_graph, strict, name):
    inputs_are_tuple, inputs = as_tuple(inputs, "inputs", name)
    inputs = fresh_inputs(inputs, create_graph, need_graph=True)
    v = _prepare_v(v, inputs, inputs_are_tuple, name, create_graph, _V_NONE_INPUT)
    return inputs_are_tuple, inputs, v


def _scalar_output(out, strict, name):
    out_is_tuple, outs = as_tuple(out, _OUTPUTS, name)
    check_requires_grad(outs, "outputs", strict)
    if out_is_tuple or not isinstance(out, cr.Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if out.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                           "contain a single element")
    return outs


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """The function's output and the vector-Hessian product ``v^T H``.

    >>> import chainrule as cr
    >>> from chainrule.autograd.functional import vhp
    >>> out, p = vhp(lambda x: (x ** 3).sum(), cr.tensor([1.0, 2.0]), cr.tensor([1.0, 1.0]))
    >>> p.tolist()
    [6.0, 12.0]
    """
    grad_mode = cr.is_grad_enabled()
    with cr.enable_grad():
        inputs_are_tuple, inputs, v = _scalar_function_prologue(func, inputs, v, create_graph,
                                                                strict, "vhp")
        outputs, result = _reverse_over_reverse(func, inputs, v, create_graph, strict, "vhp",
                                                grad_mode)
    return (finish(outputs, create_graph)[0],
            untuple(finish(result, create_graph), inputs_are_tuple))


def _reverse_over_reverse(func, inputs, v, create_graph, strict, name, grad_mode):
    """(outputs, v^T H): the gradient with create_graph, then its vector-Jacobian
    product with v; two backward passes whose steps run on the engine's fast paths
    (Note [table-node fast path] covers the create_graph pass too).

    Note [hvp by reverse-over-reverse]
        hvp wants ``H v``; for a real function the Hessian is symmetric, so it is
        ``v^T H``, which this pass gives directly. Measured (bench/functional.py,
        callgrind) it costs less than reverse-over-forward (a forward pass whose
        tangent formulas are recorded, then one backward) and than the
        double-backward trick (three passes), which hvp keeps for strict=True and
        complex inputs, where the reference's messages or conjugations differ."""
    outputs, jac = _output_and_gradient(func, inputs, strict, name)
    with cr.set_grad_enabled(create_graph or grad_mode):      # the caller's grad mode
        result = grad_of(jac, inputs, v, create_graph=create_graph)
        result = zeros_for_none(result, inputs, strict, create_graph, "double_back")
    return outputs, result


def _output_and_gradient(func, inputs, strict, name):
    """The function's scalar output and its gradient with a graph (the first pass of
    hvp's and vhp's second-order products)."""
    outputs = _scalar_output(func(*inputs), strict, name)
    jac = grad_of(outputs, inputs, create_graph=True)
    check_requires_grad(jac, "jacobian", strict)
    return outputs, jac


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """The function's output and the Hessian-vector product ``H v``: reverse-over-
    reverse for real inputs (Note [hvp by reverse-over-reverse]), else (and with
    strict=True) the reference's double-backward trick.

    >>> import chainrule as cr
    >>> from chainrule.autograd.functional import hvp
    >>> out, p = hvp(lambda x: (x ** 3).sum(), cr.tensor([1.0, 2.0]), cr.tensor([1.0, 0.0]))
    >>> p.tolist()
    [6.0, 0.0]
    """
    with cr.enable_grad():
        inputs_are_tuple, inputs, v = _scalar_function_prologue(func, inputs, v, create_graph,
                                                                strict, "hvp")
        if v is None:
            v = (cr.ones_like(inputs[0]),)
        if strict or any(x._data.dtype.kind == "c" for x in inputs):
            output, result = _hvp_double_backward(func, inputs, v, create_graph, strict)
        else:                           # Note [hvp by reverse-over-reverse]
            outputs, result = _reverse_over_reverse(func, inputs, v, create_graph, strict,
                                                    "hvp", True)
            output = outputs[0]
    return (finish((output,), create_graph)[0],
            untuple(finish(result, create_graph), inputs_are_tuple))


def _hvp_double_backward(func, inputs, v, create_graph, strict):
    """H v as the gradient, with respect to a dummy u, of (u^T H)."""
    outputs, jac = _output_and_gradient(func, inputs, strict, "hvp")
    dummies = tuple(cr.zeros_like(x, requires_grad=True) for x in inputs)
    double_back = grad_of(jac, inputs, dummies, create_graph=True)
    check_requires_grad(jac, "hessian", strict)
    with cr.set_grad_enabled(create_graph or cr.is_grad_enabled()):
        result = grad_of(double_back, dummies, v, create_graph=create_graph)
        result = zeros_for_none(result, inputs, strict, create_graph, "double_back_trick")
    return outputs[0], result
