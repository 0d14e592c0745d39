"""Tests generated from the derivative table (``chainrule._ops._registry.OPS``).

Every Sample of every family (``samples/<family>.py``) runs through gradcheck and
gradgradcheck in float64 (complex128 for complex samples); every op of the table must
have a sample, every sample must reach the op it names, and every formula may use
only names that exist in both formula namespaces (Note [one formula, two namespaces]).
"""
import dis
import types

import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import ARRAY_NS, TENSOR_NS, _registry
from chainrule._ops._formula_helpers import HELPERS
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.autograd.node import Node

from samples import all_samples
from samples._inputs import make_inputs

SAMPLES = all_samples()
IDS = [s.id() for s in SAMPLES]
GRADGRAD = [s for s in SAMPLES if s.gradgrad]
# Above this many differentiated elements, the Jacobian is compared through random
# projections (fast_mode): the full one costs two evaluations per element.
FAST_MODE_NUMEL = 48


def _fast_mode(inputs):
    return sum(t.numel() for t in inputs
               if isinstance(t, cr.Tensor) and t.requires_grad) > FAST_MODE_NUMEL


def _check(check, sample):
    """Run gradcheck or gradgradcheck on a sample. An op whose table entry declares a
    derivative NOT_IMPLEMENTED may raise for it: that is its documented behaviour
    (test_not_implemented_derivatives_raise_naming_the_op checks the message)."""
    inputs = make_inputs(sample)
    try:
        return check(sample.call, inputs, atol=sample.atol, rtol=sample.rtol,
                     fast_mode=_fast_mode(inputs))
    except RuntimeError as e:
        op = _registry.OPS.get(sample.op)
        if op is not None and _registry.raised_by_marker(op, e):
            return True
        raise


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_gradcheck(sample):
    assert _check(gradcheck, sample)


@pytest.mark.parametrize("sample", GRADGRAD, ids=[s.id() for s in GRADGRAD])
def test_gradgradcheck(sample):
    cr.manual_seed(0)                     # the random grad_outputs
    assert _check(gradgradcheck, sample)


# --- the table and its samples ----------------------------------------------------------
def test_every_op_has_a_sample():
    covered = {s.op for s in SAMPLES}
    missing = sorted(set(_registry.OPS) - covered)
    assert not missing, f"ops of the derivative table without a Sample: {missing}"


def test_every_sample_names_an_op_of_the_table():
    unknown = sorted({s.op for s in SAMPLES} - set(_registry.OPS))
    assert not unknown, f"Samples name ops that are not in the table: {unknown}"


def _reachable_ops(outputs):
    """Names of the table ops in the graph behind ``outputs`` (iterative walk; nodes
    that wrap another node, e.g. for in-place ops on views, are looked into)."""
    stack = [o.grad_fn for o in outputs if isinstance(o, cr.Tensor) and o.grad_fn]
    seen, names = set(), set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        op = getattr(type(node), "_op", None)
        if op is not None:
            names.add(op.name)
        stack.extend(edge[0] for edge in node._next if edge is not None)
        stack.extend(_wrapped_nodes(node))
    return names


def _wrapped_nodes(node):
    for cls in type(node).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            value = getattr(node, slot, None)
            if isinstance(value, Node):
                yield value


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_sample_records_its_op(sample):
    out = sample.call(*make_inputs(sample))
    outputs = out if isinstance(out, (tuple, list)) else (out,)
    found = _reachable_ops(outputs)
    assert sample.op in found, f"the graph of {sample.id()} holds {sorted(found)}"


# --- formulas use only names of both namespaces -------------------------------------
_LOADS = {"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST"}
_ATTRS = {"LOAD_ATTR", "LOAD_METHOD"}


def _namespace_uses(code, namespace_arg="F"):
    """Names ``F.<name>`` used in a code object and the code nested in it."""
    names = set()
    instructions = list(dis.get_instructions(code))
    for first, second in zip(instructions, instructions[1:]):
        if first.opname in _LOADS and first.argval == namespace_arg and second.opname in _ATTRS:
            names.add(second.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _namespace_uses(const, namespace_arg)
    return names


def _formulas():
    for op in _registry.OPS.values():
        for index, formula in enumerate(op.vjps):
            if isinstance(formula, _registry.Formula):
                yield f"{op.name} vjp[{op.inputs[index]}]", formula.fn
        if isinstance(op.jvp, _registry.Formula):
            yield f"{op.name} jvp", op.jvp.fn
    for name, fn in HELPERS.items():
        yield f"helper {name}", fn


def test_formula_name_extraction_sees_namespace_uses():
    uses = _namespace_uses((lambda F, g, x: F.where(x > 0, F.exp(g), g.sum())).__code__)
    assert uses == {"where", "exp"}


def test_formulas_use_only_names_of_both_namespaces():
    problems = []
    for where, fn in _formulas():
        for name in sorted(_namespace_uses(fn.__code__)):
            missing = [ns for ns, obj in (("ARRAY_NS", ARRAY_NS), ("TENSOR_NS", TENSOR_NS))
                       if not hasattr(obj, name)]
            if missing:
                problems.append(f"{where}: F.{name} missing from {', '.join(missing)}")
    assert not problems, "\n".join(problems)


# --- NOT_IMPLEMENTED entries raise a clear error ----------------------------------------
def _not_implemented_ops():
    return [op for op in _registry.OPS.values()
            if _registry.NOT_IMPLEMENTED in op.vjps]


def _requiring_grad(value):
    """A float input as is, or a copy that requires grad (to reach every formula)."""
    if isinstance(value, cr.Tensor) and (value.is_floating_point() or value.is_complex()):
        return value if value.requires_grad else value.detach().clone().requires_grad_()
    return value


def test_not_implemented_derivatives_raise_naming_the_op():
    by_op = {}
    for s in SAMPLES:
        by_op.setdefault(s.op, s)
    for op in _not_implemented_ops():
        sample = by_op.get(op.name)
        assert sample is not None, f"{op.name} has no sample"
        inputs = [_requiring_grad(v) for v in make_inputs(sample)]
        out = sample.call(*inputs)
        outputs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                   if isinstance(o, cr.Tensor) and o.requires_grad]
        diff = [t for t in inputs if isinstance(t, cr.Tensor) and t.requires_grad]
        grads = [cr.ones_like(o) for o in outputs]
        with pytest.raises(RuntimeError, match="derivative for") as raised:
            cr.autograd.grad(outputs, diff, grads, allow_unused=True)
        assert _registry.raised_by_marker(op, raised.value), raised.value


def test_not_implemented_messages_are_the_reference_s():
    """Note [derivatives the reference does not implement]"""
    floor_divide, igamma = _registry.OPS["floor_divide"], _registry.OPS["igamma"]
    err = floor_divide.vjps[0].backward_error(floor_divide)
    assert type(err) is RuntimeError
    assert str(err) == "derivative for aten::floor_divide is not implemented"
    assert str(floor_divide.jvp.forward_error(floor_divide)) == \
        "Trying to use forward AD with aten::floor_divide that does not support it."
    err = igamma.vjps[0].backward_error(igamma)
    assert type(err) is NotImplementedError
    assert str(err) == "the derivative for 'igamma: input' is not implemented."
    assert str(igamma.jvp.forward_error(igamma)).startswith(
        "Trying to use forward AD with igamma that does not support it because")
    scatter = _registry.OPS["scatter_multiply"].vjps[0]
    assert "aten::scatter is" in str(scatter.backward_error(_registry.OPS["scatter_multiply"]))


def test_not_implemented_marker_raises_in_backward():
    op = _registry.defop("_test_half_implemented", lambda a, b: a * b,
                         inputs=("self", "other"),
                         vjp=(lambda F, g, other: g * other,
                              _registry.not_implemented("_test_half_implemented: other")))
    try:
        a = cr.ones(2, dtype=cr.float64, requires_grad=True)
        b = cr.full((2,), 3.0, dtype=cr.float64)
        (ga,) = cr.autograd.grad(_registry.apply_op(op, (a, b), {}).sum(), a)
        assert np.array_equal(ga.numpy(), [3.0, 3.0])
        b.requires_grad_()
        out = _registry.apply_op(op, (a, b), {})
        with pytest.raises(NotImplementedError,
                           match="the derivative for '_test_half_implemented: other' is not "
                                 "implemented."):
            cr.autograd.grad(out.sum(), b)
    finally:
        del _registry.OPS["_test_half_implemented"]
