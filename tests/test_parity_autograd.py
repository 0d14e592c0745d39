"""Parity tier for autograd SEMANTICS: chainrule against PyTorch.

Each scenario is written once as a function of the library module (``torch`` or
``chainrule``) and returns a plain-Python record (see parity_support.py); the test
runs it on both libraries and compares the records. Per-op values and gradients are
tested elsewhere (tests/test_parity_ops.py); these scenarios exercise the autograd
model: leaves, backward/grad arguments, errors, grad_fn names and graph structure,
hooks, saved-tensor hooks, custom Functions, version counters, grad modes,
execution order and complex conventions.
"""
import sys
import threading
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

try:
    import chainrule as cr
except ImportError:  # running from a checkout without Bazel: use <repo>/core
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
    import chainrule as cr

from parity_support import (compare, dtype_name, name_of, raises, unmatched_phrases,  # noqa: E402
                            values, warns)

SCENARIOS = {}


def scenario(fn):
    """Register a scenario under its function name (the test id)."""
    SCENARIOS[fn.__name__] = fn
    return fn


def leaf(lib, data, dtype=None):
    """A float64 (or ``dtype``) leaf that requires grad."""
    return lib.tensor(data, dtype=dtype or lib.float64, requires_grad=True)


def const(lib, data, dtype=None):
    return lib.tensor(data, dtype=dtype or lib.float64)


def graph_nodes(root):
    """Every node reachable from ``root`` (iterative walk, first-seen order)."""
    seen, order, stack = set(), [], [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return order


def cube_function(lib):
    """x ** 3 as a custom Function whose backward is differentiable."""
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2
    return Cube


def node_name(node):
    """A node's name() without the library's C++ namespace
    ("torch::autograd::AccumulateGrad" -> "AccumulateGrad")."""
    return node.name().split("::")[-1]


def record_execution_order(roots, run):
    """Names of the op nodes under ``roots`` in the order the engine runs them
    (AccumulateGrad nodes are left out: accumulate_grad_node_hooks covers them)."""
    order = []
    for root in roots:
        for node in graph_nodes(root):
            if node_name(node) != "AccumulateGrad":
                node.register_prehook(lambda grads, node=node: order.append(node_name(node)))
    run()
    return order


# =====================================================================================
# Leaves, requires_grad, .grad
# =====================================================================================

@scenario
def leaf_and_requires_grad_flags(lib):
    x = leaf(lib, [1.0, 2.0])
    c = const(lib, [3.0, 4.0])
    y = x * c
    z = c * 2
    d = y.detach()
    return {name: [t.is_leaf, t.requires_grad, name_of(t.grad_fn)]
            for name, t in dict(x=x, c=c, y=y, z=z, d=d).items()}


@scenario
def grad_is_none_before_backward(lib):
    x = leaf(lib, [1.0, 2.0])
    before = x.grad is None
    (x * x).sum().backward()
    return [before, values(x.grad)]


@scenario
def leaf_without_requires_grad_gets_no_grad(lib):
    x = leaf(lib, [1.0, 2.0])
    c = const(lib, [3.0, 4.0])
    (x * c).sum().backward()
    return [values(x.grad), c.grad is None]


@scenario
def retain_grad_on_non_leaf(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    y = x * x
    flags = [y.retains_grad, x.retains_grad]
    y.retain_grad()
    flags += [y.retains_grad]
    x.retain_grad()  # a no-op on leaves
    flags += [x.retains_grad]
    (y * 3).sum().backward()
    return [flags, values(y.grad), values(x.grad)]


@scenario
def non_leaf_grad_access_warns(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    return warns(lambda: y.grad, "is not a leaf Tensor", "retain_grad")


@scenario
def leaf_grad_access_does_not_warn(lib):
    x = leaf(lib, [1.0, 2.0])
    return warns(lambda: x.grad)


@scenario
def grad_accumulates_across_backward_calls(lib):
    x = leaf(lib, [1.0, 2.0])
    seen = []
    for _ in range(3):
        (x * x).sum().backward()
        seen.append(values(x.grad))
    return seen


@scenario
def grad_accumulates_when_leaf_used_twice(lib):
    x = leaf(lib, [1.0, 2.0])
    (x * 3 + x.exp()).sum().backward()
    return values(x.grad)


@scenario
def grad_identity_kept_without_create_graph(lib):
    x = leaf(lib, [1.0, 2.0])
    (x * x).sum().backward()
    first = x.grad
    (x * x).sum().backward()
    return [x.grad is first, values(first), x.grad.requires_grad]


@scenario
def grad_replaced_with_create_graph(lib):
    x = leaf(lib, [1.0, 2.0])
    (x * x).sum().backward()
    first = x.grad
    (x * x).sum().backward(create_graph=True)
    return [x.grad is first, values(first), values(x.grad), x.grad.requires_grad,
            x.grad.grad_fn is not None]


@scenario
def grad_set_to_none_then_backward(lib):
    x = leaf(lib, [1.0, 2.0])
    (x * x).sum().backward()
    x.grad = None
    (x * 5).sum().backward()
    return values(x.grad)


@scenario
def grad_layout_contiguous_leaf(lib):
    x = leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (x * 2).sum().backward()
    return [list(x.stride()), list(x.grad.stride()), x.grad.is_contiguous()]


@scenario
def grad_layout_transposed_leaf(lib):
    base = const(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    w = base.t().detach().requires_grad_()
    (w * const(lib, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    return [list(w.stride()), list(w.grad.stride()), w.grad.is_contiguous(),
            values(w.grad)]


@scenario
def grad_layout_expanded_leaf_is_contiguous(lib):
    w = const(lib, [[1.0], [2.0], [3.0]]).expand(3, 4).detach().requires_grad_()
    (w * 2).sum().backward()
    return [list(w.stride()), list(w.grad.stride()), values(w.grad)]


@scenario
def grad_assignment_checks_shape(lib):
    x = leaf(lib, [1.0, 2.0])

    def assign():
        x.grad = const(lib, [1.0, 2.0, 3.0])
    return raises(assign, "attempting to assign a gradient of size")


@scenario
def requires_grad_on_non_leaf_cannot_be_cleared(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    return raises(lambda: y.requires_grad_(False),
                  "you can only change requires_grad flags of leaf variables")


@scenario
def requires_grad_on_integer_tensor_errors(lib):
    return [raises(lambda: lib.tensor([1, 2], requires_grad=True),
                   "Only Tensors of floating point and complex dtype can require gradients"),
            raises(lambda: lib.tensor([1, 2]).requires_grad_(),
                   "floating point", "can require gradients")]


@scenario
def detach_shares_data_and_version(lib):
    x = leaf(lib, [1.0, 2.0])
    d = x.detach()
    d.add_(1)
    return [d.requires_grad, d.is_leaf, x._version, d._version, values(x)]


@scenario
def requires_grad_propagates_through_ops(lib):
    x = leaf(lib, [1.0, 2.0])
    c = const(lib, [1.0, 1.0])
    return [(c + c).requires_grad, (c + x).requires_grad, (x.detach() * 2).requires_grad,
            x[0].requires_grad, (x > 1).requires_grad]


# =====================================================================================
# backward / grad arguments
# =====================================================================================

@scenario
def backward_with_gradient_argument(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    y = x * x
    y.backward(const(lib, [1.0, 10.0, 100.0]))
    return values(x.grad)


@scenario
def autograd_backward_with_grad_tensors_list(lib):
    x = leaf(lib, [1.0, 2.0])
    a, b = x * 2, x.exp()
    lib.autograd.backward([a, b], grad_tensors=[const(lib, [1.0, 1.0]), const(lib, [2.0, 3.0])])
    return values(x.grad)


@scenario
def backward_of_leaf_itself(lib):
    x = leaf(lib, [1.0, 2.0])
    x.backward(const(lib, [3.0, 4.0]))
    return values(x.grad)


@scenario
def retain_graph_allows_second_backward(lib):
    x = leaf(lib, [1.0, 2.0])
    y = (x * x.exp()).sum()
    y.backward(retain_graph=True)
    y.backward()
    return values(x.grad)


@scenario
def second_backward_errors(lib):
    x = leaf(lib, [1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    return raises(y.backward, "Trying to backward through the graph a second time",
                  "retain_graph=True")


@scenario
def saved_value_access_after_free_errors(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x.exp()
    before = values(y.grad_fn._saved_result)
    y.sum().backward()
    return [before, raises(lambda: y.grad_fn._saved_result,
                           "Trying to backward through the graph a second time")]


@scenario
def grad_does_not_populate_dot_grad(lib):
    x = leaf(lib, [1.0, 2.0])
    (g,) = lib.autograd.grad((x * x).sum(), x)
    return [values(g), x.grad is None, g.requires_grad]


@scenario
def grad_of_leaf_wrt_itself(lib):
    x = leaf(lib, [1.0, 2.0])
    (g,) = lib.autograd.grad(x, x, const(lib, [5.0, 6.0]))
    return values(g)


@scenario
def double_backward_values(lib):
    x = leaf(lib, [0.5, 1.5])
    y = (x ** 3 * x.sin()).sum()
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    return [values(g), g.requires_grad, name_of(g.grad_fn) is not None, values(gg)]


@scenario
def hessian_vector_product(lib):
    x = leaf(lib, [0.5, -1.0, 2.0])
    v = const(lib, [1.0, 2.0, 3.0])
    f = (x ** 2).sum() * x.exp().sum() + (x[0] * x[1] * x[2])
    (g,) = lib.autograd.grad(f, x, create_graph=True)
    (hv,) = lib.autograd.grad(g, x, grad_outputs=v)
    return values(hv)


@scenario
def create_graph_backward_then_backward_of_grad(lib):
    x = leaf(lib, [1.0, 2.0])
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.sum().backward()
    return [values(g), values(x.grad)]


@scenario
def create_graph_retains_graph_by_default(lib):
    x = leaf(lib, [1.0, 2.0])
    y = (x ** 2).sum()
    first = lib.autograd.grad(y, x, create_graph=True)[0]
    second = lib.autograd.grad(y, x)[0]
    return [values(first), values(second)]


@scenario
def third_derivative(lib):
    x = leaf(lib, [0.3, 0.7])
    y = (x.sin() * x ** 2).sum()
    g1 = lib.autograd.grad(y, x, create_graph=True)[0]
    g2 = lib.autograd.grad(g1.sum(), x, create_graph=True)[0]
    g3 = lib.autograd.grad(g2.sum(), x)[0]
    return [values(g1), values(g2), values(g3)]


@scenario
def backward_inputs_restricts_accumulation(lib):
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    (a * b).sum().backward(inputs=[a])
    return [values(a.grad), b.grad is None]


@scenario
def backward_inputs_single_tensor(lib):
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    (a * b).sum().backward(inputs=b)
    return [a.grad is None, values(b.grad)]


@scenario
def backward_inputs_non_leaf_accumulates_into_it(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    (y * y).sum().backward(inputs=[y])
    return [values(y.grad), x.grad is None]


@scenario
def backward_inputs_empty_errors(lib):
    x = leaf(lib, [1.0, 2.0])
    return raises(lambda: (x * 2).sum().backward(inputs=[]), "cannot be empty")


@scenario
def grad_multiple_inputs_and_outputs(lib):
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    out1, out2 = a * b, a.exp() + b
    ga, gb = lib.autograd.grad([out1, out2], [a, b],
                               grad_outputs=[const(lib, [1.0, 2.0]), const(lib, [3.0, 4.0])])
    return [values(ga), values(gb)]


@scenario
def grad_allow_unused_returns_none(lib):
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    ga, gb = lib.autograd.grad((a * 2).sum(), [a, b], allow_unused=True)
    return [values(ga), gb is None]


@scenario
def grad_unused_input_errors(lib):
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    return raises(lambda: lib.autograd.grad((a * 2).sum(), [a, b]),
                  "appears to not have been used in the graph",
                  "allow_unused=True")


@scenario
def grad_materialize_grads_gives_zeros(lib):
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    ga, gb = lib.autograd.grad((a * 2).sum(), [a, b], materialize_grads=True)
    return [values(ga), values(gb)]


@scenario
def grad_materialize_without_allow_unused_false_errors(lib):
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    return raises(lambda: lib.autograd.grad((a * 2).sum(), [a, b], allow_unused=False,
                                            materialize_grads=True),
                  "allow_unused")


@scenario
def grad_with_none_grad_output_for_scalar(lib):
    x = leaf(lib, [1.0, 2.0])
    (g,) = lib.autograd.grad([(x * x).sum()], [x], grad_outputs=[None])
    return values(g)


@scenario
def gradient_edge_as_grad_input(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 3
    z = (y * y).sum()
    edge = lib.autograd.graph.get_gradient_edge(y)
    (gy,) = lib.autograd.grad(z, edge)
    return [name_of(edge.node), edge.output_nr, values(gy)]


@scenario
def non_scalar_backward_without_gradient_errors(lib):
    x = leaf(lib, [1.0, 2.0])
    return raises(lambda: (x * 2).backward(),
                  "grad can be implicitly created only for scalar outputs")


@scenario
def grad_output_shape_mismatch_errors(lib):
    x = leaf(lib, [1.0, 2.0])
    return raises(lambda: (x * 2).backward(const(lib, [1.0, 2.0, 3.0])),
                  "Mismatch in shape", "grad_output[0]", "output[0]")


@scenario
def grad_output_complex_dtype_mismatch_errors(lib):
    z = leaf(lib, [1 + 1j, 2 - 1j], lib.complex128)
    return raises(lambda: (z * 2).backward(const(lib, [1.0, 1.0])), "Mismatch in dtype")


@scenario
def grad_output_other_float_dtype_is_cast(lib):
    x = leaf(lib, [1.0, 2.0], lib.float32)
    (x * 2).backward(const(lib, [1.0, 3.0], lib.float64))
    return [dtype_name(x.grad.dtype), values(x.grad)]


@scenario
def backward_without_grad_fn_errors(lib):
    c = const(lib, [1.0, 2.0])
    return raises(lambda: (c * 2).sum().backward(),
                  "element 0 of tensors does not require grad and does not have a grad_fn")


@scenario
def grad_without_grad_fn_errors(lib):
    x = leaf(lib, [1.0, 2.0])
    c = const(lib, [1.0, 2.0])
    return raises(lambda: lib.autograd.grad((c * 2).sum(), x),
                  "element 0 of tensors does not require grad and does not have a grad_fn")


@scenario
def grad_wrt_tensor_not_requiring_grad_errors(lib):
    x = leaf(lib, [1.0, 2.0])
    c = const(lib, [1.0, 2.0])
    return raises(lambda: lib.autograd.grad((x * c).sum(), c),
                  "does not require grad")


# =====================================================================================
# In-place operations, version counters
# =====================================================================================

@scenario
def in_place_on_leaf_requiring_grad_errors(lib):
    x = leaf(lib, [1.0, 2.0])
    return raises(lambda: x.add_(1),
                  "a leaf Variable that requires grad is being used in an in-place operation")


@scenario
def in_place_on_view_of_leaf_errors(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    return raises(lambda: x[0:2].mul_(2),
                  "a view of a leaf Variable that requires grad is being used in an "
                  "in-place operation")


@scenario
def in_place_on_leaf_allowed_under_no_grad(lib):
    x = leaf(lib, [1.0, 2.0])
    with lib.no_grad():
        x.mul_(3)
    return [values(x), x.requires_grad, x.is_leaf, x._version]


@scenario
def modified_saved_result_errors(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    y = x.exp()
    y.add_(1)
    return raises(lambda: y.sum().backward(),
                  "one of the variables needed for gradient computation has been modified "
                  "by an inplace operation",
                  "which is output 0 of Exp, is at version 1; expected version 0 instead")


@scenario
def modified_saved_input_errors(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    h = x * 2
    y = h.sin()
    h.mul_(3)
    h.mul_(3)
    return raises(lambda: y.sum().backward(),
                  "modified by an inplace operation",
                  "which is output 0 of Mul, is at version 2; expected version 0 instead")


@scenario
def modified_saved_plain_tensor_errors(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    w = const(lib, [4.0, 5.0, 6.0])
    y = x * w
    w.add_(1)
    return raises(lambda: y.sum().backward(),
                  "modified by an inplace operation", "is at version 1; expected version 0")


@scenario
def in_place_on_unsaved_tensor_is_fine(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    y = x * 2 + 1  # add saves nothing
    y.mul_(4)
    y.sum().backward()
    return [values(x.grad), name_of(y.grad_fn)]


@scenario
def version_counter_bumps(lib):
    t = const(lib, [1.0, 2.0, 3.0])
    seen = [t._version]
    t.add_(1)
    seen.append(t._version)
    t.mul_(2).sub_(1)
    seen.append(t._version)
    t[0] = 5.0
    seen.append(t._version)
    t.zero_()
    seen.append(t._version)
    _ = t + 1
    seen.append(t._version)
    return seen


@scenario
def version_counter_shared_with_views(lib):
    t = const(lib, [[1.0, 2.0], [3.0, 4.0]])
    v = t[0]
    w = t.t()
    d = t.detach()
    v.add_(1)
    w.mul_(2)
    d.sub_(1)
    return [t._version, v._version, w._version, d._version, values(t),
            t.clone()._version]


@scenario
def in_place_on_non_leaf_view_rebases_graph(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    y = x * 1
    y[0:2].mul_(const(lib, [10.0, 20.0]))
    names = [name_of(y.grad_fn)]
    (y * const(lib, [1.0, 2.0, 3.0])).sum().backward()
    return [names, values(y), values(x.grad)]


@scenario
def setitem_on_non_leaf_rebases_graph(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    a = leaf(lib, 7.0)
    y = x.exp()
    z = y * 1
    z[1] = a * 2
    z.sum().backward()
    return [name_of(z.grad_fn), values(x.grad), values(a.grad)]


@scenario
def view_sees_base_in_place_change_in_backward(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    y = x * 1
    v = y[1:]
    y.mul_(2)
    (v * v).sum().backward()
    return [values(v), values(x.grad)]


@scenario
def in_place_op_grad_fn_names(lib):
    x = leaf(lib, [0.5, 2.0])
    record = []
    for op in (lambda t: t.add_(1), lambda t: t.mul_(2), lambda t: t.exp_(),
               lambda t: t.sigmoid_(), lambda t: t.tanh_(), lambda t: t.clamp_(0.0, 1.0),
               lambda t: t.zero_(), lambda t: t.fill_(3.0), lambda t: t.relu_()):
        y = x * 1
        op(y)
        record.append([name_of(y.grad_fn), y._version])
        (y * const(lib, [1.0, 2.0])).sum().backward()
        record.append(values(x.grad))
    return record


# =====================================================================================
# grad_fn names, graph structure
# =====================================================================================

GRAD_FN_CASES = {
    "mul": lambda L, x, y, m: x * y,
    "mul_scalar": lambda L, x, y, m: x * 2,
    "add": lambda L, x, y, m: x + y,
    "add_scalar": lambda L, x, y, m: x + 2,
    "sub": lambda L, x, y, m: x - y,
    "rsub": lambda L, x, y, m: 2 - x,
    "div": lambda L, x, y, m: x / y,
    "neg": lambda L, x, y, m: -x,
    "pow_scalar": lambda L, x, y, m: x ** 2,
    "pow_tensor": lambda L, x, y, m: x ** y,
    "rpow": lambda L, x, y, m: 2 ** x,
    "exp": lambda L, x, y, m: x.exp(),
    "log": lambda L, x, y, m: x.log(),
    "sin": lambda L, x, y, m: x.sin(),
    "cos": lambda L, x, y, m: x.cos(),
    "tanh": lambda L, x, y, m: x.tanh(),
    "sigmoid": lambda L, x, y, m: x.sigmoid(),
    "relu": lambda L, x, y, m: x.relu(),
    "sqrt": lambda L, x, y, m: x.sqrt(),
    "abs": lambda L, x, y, m: x.abs(),
    "sum": lambda L, x, y, m: x.sum(),
    "sum_dim": lambda L, x, y, m: m.sum(0),
    "mean": lambda L, x, y, m: x.mean(),
    "mean_dim": lambda L, x, y, m: m.mean(1),
    "prod": lambda L, x, y, m: x.prod(),
    "max_all": lambda L, x, y, m: x.max(),
    "max_dim": lambda L, x, y, m: m.max(0).values,
    "amax": lambda L, x, y, m: m.amax(0),
    "t": lambda L, x, y, m: m.t(),
    "transpose": lambda L, x, y, m: m.transpose(0, 1),
    "permute": lambda L, x, y, m: m.permute(1, 0),
    "view": lambda L, x, y, m: m.view(6),
    "reshape_contiguous": lambda L, x, y, m: m.reshape(6),
    "reshape_copying": lambda L, x, y, m: m.t().reshape(6),
    "flatten": lambda L, x, y, m: m.flatten(),
    "unsqueeze": lambda L, x, y, m: x.unsqueeze(0),
    "squeeze_all": lambda L, x, y, m: x.unsqueeze(0).squeeze(),
    "squeeze_dim": lambda L, x, y, m: x.unsqueeze(0).squeeze(0),
    "expand": lambda L, x, y, m: x.expand(2, 3),
    "select": lambda L, x, y, m: m[0],
    "slice": lambda L, x, y, m: m[:, 1:],
    "index_tensor": lambda L, x, y, m: x[L.tensor([0, 2])],
    "index_select": lambda L, x, y, m: x.index_select(0, L.tensor([0, 2])),
    "mm": lambda L, x, y, m: m @ m.t(),
    "matmul_dot": lambda L, x, y, m: x @ y,
    "mv": lambda L, x, y, m: m @ x,
    "clone": lambda L, x, y, m: x.clone(),
    "cat": lambda L, x, y, m: L.cat([x, y]),
    "stack": lambda L, x, y, m: L.stack([x, y]),
    "where": lambda L, x, y, m: L.where(x > 1.5, x, y),
    "clamp": lambda L, x, y, m: x.clamp(0.0, 2.0),
    "softmax": lambda L, x, y, m: x.softmax(0),
    "log_softmax": lambda L, x, y, m: x.log_softmax(0),
    "logsumexp": lambda L, x, y, m: x.logsumexp(0),
    "cumsum": lambda L, x, y, m: x.cumsum(0),
    "maximum": lambda L, x, y, m: L.maximum(x, y),
    "masked_fill": lambda L, x, y, m: x.masked_fill(x > 1.5, 0.0),
    "contiguous_of_t": lambda L, x, y, m: m.t().contiguous(),
    "sum_keepdim": lambda L, x, y, m: m.sum(1, keepdim=True),
    "norm": lambda L, x, y, m: x.norm(),
}


def grad_fn_name_of_case(lib, case):
    x = leaf(lib, [1.0, 2.0, 3.0])
    y = leaf(lib, [0.5, 1.5, 2.5])
    m = leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    return name_of(GRAD_FN_CASES[case](lib, x, y, m).grad_fn)


@scenario
def next_functions_of_simple_graph(lib):
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    c = const(lib, [5.0, 6.0])
    out = (a * b + c).sum()
    add = out.grad_fn.next_functions[0][0]
    mul = add.next_functions[0][0]
    shape = lambda node: [(name_of(fn), nr) for fn, nr in node.next_functions]  # noqa: E731
    return [out.grad_fn.name(), shape(out.grad_fn), shape(add), shape(mul),
            mul.next_functions[0][0].variable is a, mul.next_functions[1][0].variable is b]


@scenario
def next_functions_of_multi_output_op(lib):
    x = leaf(lib, [1.0, 2.0, 3.0, 4.0])
    p, q = x.split(2)
    out = p * q
    return [[(name_of(fn), nr) for fn, nr in out.grad_fn.next_functions],
            out.grad_fn.next_functions[0][0] is out.grad_fn.next_functions[1][0]]


@scenario
def accumulate_grad_node_is_shared(lib):
    x = leaf(lib, [1.0, 2.0])
    y1, y2 = x * 2, x * 3
    acc1 = y1.grad_fn.next_functions[0][0]
    acc2 = y2.grad_fn.next_functions[0][0]
    return [node_name(acc1), name_of(acc1), acc1 is acc2, len(acc1.next_functions)]


@scenario
def node_metadata_is_a_dict(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    y.grad_fn.metadata["tag"] = 5
    return [type(y.grad_fn.metadata).__name__, y.grad_fn.metadata["tag"]]


@scenario
def saved_attributes_values(lib):
    x = leaf(lib, [1.0, 2.0])
    w = const(lib, [3.0, 4.0])
    e = x.exp()
    p = x ** 3
    return [values((x * w).grad_fn._saved_other), values(e.grad_fn._saved_result),
            values(p.grad_fn._saved_self), p.grad_fn._saved_exponent]


@scenario
def saved_attributes_return_saved_leaves_themselves(lib):
    x, w = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    m = x * w
    return [m.grad_fn._saved_self is x, m.grad_fn._saved_other is w]


@scenario
def saved_attribute_not_needed_is_none(lib):
    x = leaf(lib, [1.0, 2.0])
    w = const(lib, [3.0, 4.0])
    m = x * w  # w needs no grad, so x is not needed by backward
    return [m.grad_fn._saved_self is None, values(m.grad_fn._saved_other)]


@scenario
def accumulate_grad_node_hooks(lib):
    x = leaf(lib, [1.0, 2.0])
    y = (x * 2).sum()
    acc = lib.autograd.graph.get_gradient_edge(x).node
    log = []
    acc.register_prehook(lambda gouts: log.append(("pre", [values(g) for g in gouts],
                                                   x.grad is None)))
    acc.register_hook(lambda gins, gouts: log.append(
        ("post", [values(g) for g in gins], [values(g) for g in gouts], x.grad is None)))
    y.backward()
    return [node_name(acc), log, values(x.grad)]


@scenario
def inplace_on_a_view_whose_gradient_arrives_transposed(lib):
    x = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
    y = (x * 1.0).clone()
    y.view(-1)[2:5].mul_(0.5)
    (lib.ones(3, 3, dtype=lib.float64) @ y.t()).sum().backward()
    return values(x.grad)


@scenario
def inplace_on_views_of_a_transposed_root_double_backward(lib):
    x = leaf(lib, [[1.0, 2.0, 3.0], [0.5, -1.0, 2.5]])
    y = x.t() * 1.0                      # a root laid out transposed
    stale = y.t().view(-1)
    y.t().view(-1)[1:4].mul_(x.reshape(-1)[:3])
    loss = (y * y).sum() + (stale * stale.flip(0)).sum()
    g, = lib.autograd.grad(loss, x, create_graph=True)
    return [values(g), values(lib.autograd.grad((g * g).sum(), x)[0])]


# =====================================================================================
# Hooks
# =====================================================================================

@scenario
def tensor_hook_replaces_gradient(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 3
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    return values(x.grad)


@scenario
def tensor_hook_returning_none_keeps_gradient(lib):
    x = leaf(lib, [1.0, 2.0])
    seen = []
    y = x * 3
    y.register_hook(lambda g: seen.append(values(g)))
    (y * y).sum().backward()
    return [seen, values(x.grad)]


@scenario
def tensor_hooks_chain_in_registration_order(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 1
    log = []

    def hook(tag, factor):
        def fn(g):
            log.append((tag, values(g)))
            return g * factor
        return fn
    y.register_hook(hook("first", 2))
    y.register_hook(hook("second", 5))
    y.sum().backward()
    return [log, values(x.grad)]


@scenario
def leaf_hook_changes_accumulated_grad(lib):
    x = leaf(lib, [1.0, 2.0])
    x.register_hook(lambda g: g + 100)
    (x * 2).sum().backward()
    return values(x.grad)


@scenario
def hook_on_tensor_not_requiring_grad_errors(lib):
    c = const(lib, [1.0, 2.0])
    return raises(lambda: c.register_hook(lambda g: g),
                  "cannot register a hook on a tensor that doesn't require gradient")


@scenario
def handle_remove_stops_hook(lib):
    x = leaf(lib, [1.0, 2.0])
    calls = []
    handle = x.register_hook(lambda g: calls.append("hook"))
    y = (x * 2).sum()
    y.backward(retain_graph=True)
    handle.remove()
    y.backward()
    return [calls, values(x.grad)]


@scenario
def handle_remove_from_inside_hook(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    calls = []
    handles = {}

    def first(g):
        calls.append("first")
        handles["second"].remove()

    def second(g):
        calls.append("second")
        return g * 100

    y.register_hook(first)
    handles["second"] = y.register_hook(second)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    return [calls, values(x.grad)]


@scenario
def hook_removes_itself(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    calls = []
    handles = {}

    def once(g):
        calls.append("once")
        handles["once"].remove()
        return g * 3
    handles["once"] = y.register_hook(once)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    return [calls, values(x.grad)]


@scenario
def node_pre_and_post_hooks(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * const(lib, [3.0, 4.0])
    log = []
    y.grad_fn.register_prehook(lambda gouts: log.append(("pre", [values(g) for g in gouts])))
    y.grad_fn.register_hook(lambda gins, gouts: log.append(
        ("post", [values(g) for g in gins], [values(g) for g in gouts])))
    y.backward(const(lib, [1.0, 2.0]))
    return [log, values(x.grad)]


@scenario
def node_prehook_replaces_grad_outputs(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 3
    y.grad_fn.register_prehook(lambda gouts: (gouts[0] * 10,))
    y.sum().backward()
    return values(x.grad)


@scenario
def node_post_hook_replaces_grad_inputs(lib):
    x = leaf(lib, [1.0, 2.0])
    w = leaf(lib, [5.0, 6.0])
    y = x * w
    y.grad_fn.register_hook(lambda gins, gouts: (gins[0] * 0, gins[1] + 1))
    y.sum().backward()
    return [values(x.grad), values(w.grad)]


@scenario
def hook_kinds_run_in_documented_order(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    log = []
    y.grad_fn.register_hook(lambda gi, go: log.append("node post"))
    y.grad_fn.register_prehook(lambda go: log.append("node pre"))
    y.register_hook(lambda g: log.append("tensor hook"))
    x.register_post_accumulate_grad_hook(lambda t: log.append("post accumulate"))
    x.register_hook(lambda g: log.append("leaf hook"))
    y.sum().backward()
    return log


@scenario
def post_accumulate_grad_hook_sees_grad(lib):
    x = leaf(lib, [1.0, 2.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, values(t.grad))))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    return seen


@scenario
def post_accumulate_grad_hook_on_non_leaf_errors(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    return raises(lambda: y.register_post_accumulate_grad_hook(lambda t: None),
                  "post accumulate grad hooks cannot be registered on non-leaf tensors")


@scenario
def post_accumulate_grad_hook_not_called_for_autograd_grad(lib):
    x = leaf(lib, [1.0, 2.0])
    calls = []
    x.register_post_accumulate_grad_hook(lambda t: calls.append("called"))
    lib.autograd.grad((x * 3).sum(), x)
    return [calls, x.grad is None]


@scenario
def retain_grad_sees_hooked_gradient(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 7)  # registered after retain_grad, still seen by it
    y.sum().backward()
    return [values(y.grad), values(x.grad)]


@scenario
def retain_grad_with_hook_registered_first(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g * 7)
    y.retain_grad()
    y.sum().backward()
    return [values(y.grad), values(x.grad)]


@scenario
def hooks_run_for_autograd_grad_too(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    log = []
    y.register_hook(lambda g: log.append("y") or g * 2)
    x.register_hook(lambda g: log.append("x") or g + 1)
    (g,) = lib.autograd.grad(y.sum(), x)
    return [log, values(g)]


@scenario
def multi_grad_hook_docs_example(lib):
    a = lib.rand(2, 3, requires_grad=True)
    b = lib.rand(2, 3, requires_grad=True)
    c = a * b
    d = a * b
    printed = []
    lib.autograd.graph.register_multi_grad_hook(
        (a, b, c, d), lambda grads: printed.append([g is not None for g in grads]))
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    return printed


@scenario
def multi_grad_hook_all_receives_grads(lib):
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    seen = []
    handle = lib.autograd.graph.register_multi_grad_hook(
        (a, b), lambda grads: seen.append([values(g) for g in grads]))
    (a * b).sum().backward()
    handle.remove()
    (a * b).sum().backward()
    return seen


@scenario
def multi_grad_hook_any_runs_once(lib):
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    seen = []
    lib.autograd.graph.register_multi_grad_hook(
        (a, b), lambda grad: seen.append(values(grad)), mode="any")
    (a * 2 + b * 5).sum().backward()
    return seen


# =====================================================================================
# Saved-tensor hooks
# =====================================================================================

@scenario
def saved_tensors_hooks_docs_example(lib):
    log = []

    def describe(tag, t):
        return (tag, values(t), t.requires_grad, name_of(t.grad_fn))

    def pack_hook(x):
        log.append(describe("Packing", x))
        return x

    def unpack_hook(x):
        log.append(describe("Unpacking", x))
        return x

    a = lib.ones(5, requires_grad=True)
    b = lib.ones(5, requires_grad=True) * 2
    with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    packed = sorted(log, key=repr)
    log.clear()
    y.sum().backward()
    # The order within each phase is the op's own business (the docs print a first,
    # torch 2.13 packs and unpacks b first): compare each phase's contents.
    return [packed, sorted(log, key=repr), values(a.grad)]


@scenario
def saved_tensors_hooks_can_transform(lib):
    packed = []

    def pack(t):
        packed.append(1)
        return ("boxed", t.detach() * 1)

    def unpack(box):
        return box[1]
    x = leaf(lib, [1.0, 2.0, 3.0])
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sum()
    y.backward()
    return [len(packed), values(x.grad)]


@scenario
def saved_tensors_hooks_apply_to_custom_function(lib):
    log = []

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    x = leaf(lib, [1.0, 2.0])
    with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t,
                                                lambda t: log.append("unpack") or t):
        y = Square.apply(x)
    y.sum().backward()
    return [log, values(x.grad)]


@scenario
def disable_saved_tensors_hooks_errors(lib):
    def use():
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    return raises(use, "no hooks here")


@scenario
def save_on_cpu_gives_same_grads(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    with lib.autograd.graph.save_on_cpu():
        y = (x.sin() * x).sum()
    y.backward()
    return values(x.grad)


@scenario
def allow_mutation_on_saved_tensors_docs_example(lib):
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        a = lib.ones(2, 3, requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        out.sum().backward()
    return [values(a.grad), values(b)]


@scenario
def saved_tensors_hooks_unpack_reattaches_history(lib):
    """A pack that detaches still gives higher-order gradients: the unpacked value is
    attached to the saved tensor's history (leaf, non-leaf input, the node's output)."""
    x = leaf(lib, [1.0, 2.0, 0.5])
    hooks = lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t)
    with hooks:
        cube = x ** 3
        a = x * 2.0
        square = a ** 2
        e = x.exp()
    saved, result = cube.grad_fn._saved_self, e.grad_fn._saved_result
    record = [[saved is x, saved.requires_grad, saved.is_leaf],
              [result is e, name_of(result.grad_fn)]]
    for y in (cube, square, e):
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        record.append([name_of(g.grad_fn), values(lib.autograd.grad(g.sum(), x)[0])])
    return record


@scenario
def saved_tensors_hooks_identity_unpack_is_a_new_tensor(lib):
    x = leaf(lib, [1.0, 2.0])
    z = const(lib, [3.0, 4.0])
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x ** 3
        w = z * x
    return [y.grad_fn._saved_self is x, w.grad_fn._saved_other is x,
            w.grad_fn._saved_self is z, w.grad_fn._saved_self.requires_grad]


@scenario
def saved_tensors_hooks_skip_the_version_check(lib):
    """The hooks own the saved value: modifying the tensor afterwards is no error."""
    x = leaf(lib, [1.0, 2.0])
    a = x * 1.0
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = a ** 2
    a.add_(1.0)
    y.sum().backward()
    return values(x.grad)


@scenario
def saved_tensors_hooks_double_backward_of_custom_function(lib):
    x = leaf(lib, [1.0, -2.0])
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        y = cube_function(lib).apply(x)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    return [values(g), values(lib.autograd.grad(g.sum(), x)[0])]


@scenario
def save_on_cpu_double_backward(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    with lib.autograd.graph.save_on_cpu():
        y = (x.sin() * x).sum()
    g, = lib.autograd.grad(y, x, create_graph=True)
    return values(lib.autograd.grad(g.sum(), x)[0])


SAVED_COUNT_CASES = {
    "mul": lambda x, y: x * y,
    "mul_by_constant_tensor": lambda x, y: x * y.detach(),
    "add": lambda x, y: x + y,
    "div": lambda x, y: x / y,
    "exp": lambda x, y: x.exp(),
    "sin": lambda x, y: x.sin(),
    "pow_scalar": lambda x, y: x ** 2,
    "sigmoid": lambda x, y: x.sigmoid(),
    "tanh": lambda x, y: x.tanh(),
    "relu": lambda x, y: x.relu(),
    "log": lambda x, y: x.log(),
    "sqrt": lambda x, y: x.sqrt(),
    "sum": lambda x, y: x.sum(),
    "mean": lambda x, y: x.mean(),
    "matmul_dot": lambda x, y: x @ y,
    "softmax": lambda x, y: x.softmax(0),
    "abs": lambda x, y: x.abs(),
    "clone": lambda x, y: x.clone(),
    "neg": lambda x, y: -x,
}


def saved_counts_of_case(lib, case):
    """(packs, unpacks, grads) of one op under counting saved-tensor hooks."""
    counts = {"pack": 0, "unpack": 0}

    def pack(t):
        counts["pack"] += 1
        return t

    def unpack(t):
        counts["unpack"] += 1
        return t
    x, y = leaf(lib, [1.0, 2.0, 3.0]), leaf(lib, [0.5, 1.5, 2.5])
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = SAVED_COUNT_CASES[case](x, y)
    out.sum().backward()
    return counts["pack"], counts["unpack"], [values(x.grad), values(y.grad)]


@scenario
def raw_saved_tensor_register_hooks(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    log = []
    first = [raw.unpack() is x, raw.unpack_hook is None]
    raw.register_hooks(lambda t: log.append(["pack", t.requires_grad,
                                             lib.is_grad_enabled()]) or t * 10,
                       lambda t: log.append("unpack") or t)
    again = raises(lambda: raw.register_hooks(lambda t: t, lambda t: t),
                   "whose hooks have already been set")
    y.sum().backward()
    freed = raises(lambda: raw.register_hooks(lambda t: t, lambda t: t),
                   "after it has been freed")
    e = x.exp()
    e.grad_fn._raw_saved_result.register_hooks(lambda t: t.detach(), lambda t: t)
    g, = lib.autograd.grad(e.sum(), x, create_graph=True)
    return [first, log, again, values(x.grad), freed, values(lib.autograd.grad(g.sum(), x)[0])]


@scenario
def pack_hook_runs_without_grad_and_may_not_modify_its_input(lib):
    seen = []
    x = leaf(lib, [1.0, 2.0])
    with lib.autograd.graph.saved_tensors_hooks(
            lambda t: seen.append(lib.is_grad_enabled()) or t * 2, lambda t: t):
        y = x.exp() * x
    a = x * 1

    def modify():
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
            a.exp()
    return [seen, name_of(y.grad_fn), raises(modify, "pack hook is modifying its input")]


# =====================================================================================
# Custom Functions
# =====================================================================================

def exp_function(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result
    return Exp


@scenario
def custom_function_docs_exp(lib):
    x = leaf(lib, [0.0, 1.0])
    y = exp_function(lib).apply(x)
    y.sum().backward()
    return [values(y), values(x.grad), name_of(y.grad_fn), y.is_leaf, y.requires_grad]


@scenario
def custom_function_setup_context_style(lib):
    class Mul(lib.autograd.Function):
        @staticmethod
        def forward(x, w, scale):
            return x * w * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, scale = inputs
            ctx.save_for_backward(x, w)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w * ctx.scale, g * x * ctx.scale, None
    x, w = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    y = Mul.apply(x, w, 2.0)
    y.sum().backward()
    return [values(y), values(x.grad), values(w.grad), name_of(y.grad_fn)]


@scenario
def custom_function_needs_input_grad(lib):
    seen = []

    class Probe(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen.append(("forward", tuple(ctx.needs_input_grad)))
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            seen.append(("backward", tuple(ctx.needs_input_grad)))
            return g, g, None
    a, b = leaf(lib, [1.0]), const(lib, [2.0])
    Probe.apply(a, b, 3).sum().backward()
    return seen


@scenario
def custom_function_mark_dirty(lib):
    class DoubleInPlace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    x = leaf(lib, [1.0, 2.0])
    a = x * 1
    before = a._version
    out = DoubleInPlace.apply(a)
    record = [out is a, a._version - before, name_of(a.grad_fn), values(a)]
    (out * out).sum().backward()
    return record + [values(x.grad)]


@scenario
def custom_function_mark_dirty_on_leaf_errors(lib):
    class DoubleInPlace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    x = leaf(lib, [1.0, 2.0])
    return raises(lambda: DoubleInPlace.apply(x),
                  "a leaf Variable that requires grad has been used in an in-place operation")


@scenario
def custom_function_mark_non_differentiable(lib):
    class Reversed(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            order = lib.tensor([2, 1, 0])
            ctx.mark_non_differentiable(order)
            ctx.save_for_backward(order)
            return x[order], order

        @staticmethod
        def backward(ctx, g_values, g_order):
            (order,) = ctx.saved_tensors
            return g_values[order]
    x = leaf(lib, [3.0, 1.0, 2.0])
    v, i = Reversed.apply(x)
    (v * const(lib, [1.0, 10.0, 100.0])).sum().backward()
    return [v.requires_grad, i.requires_grad, name_of(i.grad_fn), values(i), values(x.grad)]


@scenario
def custom_function_non_differentiable_float_output(lib):
    class TwoOut(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            mask = (x > 0).to(x.dtype)
            ctx.mark_non_differentiable(mask)
            return x * 2, mask

        @staticmethod
        def backward(ctx, g, g_mask):
            return g * 2
    x = leaf(lib, [-1.0, 1.0])
    y, mask = TwoOut.apply(x)
    y.sum().backward()
    return [mask.requires_grad, name_of(mask.grad_fn), values(x.grad)]


@scenario
def custom_function_materialize_grads_default(lib):
    seen = []

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append([values(g1), values(g2)])
            return g1 * 2 + g2 * 3
    x = leaf(lib, [1.0, 2.0])
    a, _ = Two.apply(x)
    a.sum().backward()
    return [seen, values(x.grad)]


@scenario
def custom_function_set_materialize_grads_false(lib):
    seen = []

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append([g1 is None, g2 is None])
            grad = g1 * 2
            return grad if g2 is None else grad + g2 * 3
    x = leaf(lib, [1.0, 2.0])
    a, _ = Two.apply(x)
    a.sum().backward()
    return [seen, values(x.grad)]


@scenario
def custom_function_returning_none_grad(lib):
    class FirstOnly(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, None
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    FirstOnly.apply(a, b).sum().backward()
    return [values(a.grad), b.grad is None]


@scenario
def custom_function_wrong_number_of_grads_errors(lib):
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g
    a, b = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
    return raises(lambda: Bad.apply(a, b).sum().backward(),
                  "returned an incorrect number of gradients (expected 2, got 1)")


@scenario
def custom_function_extra_none_grads_allowed(lib):
    class Extra(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None
    a = leaf(lib, [1.0, 2.0])
    Extra.apply(a).sum().backward()
    return values(a.grad)


@scenario
def custom_function_wrong_grad_shape_errors(lib):
    class BadShape(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return lib.ones(3, dtype=g.dtype)
    a = leaf(lib, [1.0, 2.0])
    return raises(lambda: BadShape.apply(a).sum().backward(),
                  "BadShapeBackward", "invalid gradient at index 0")


def once_differentiable_cube(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2
    return Cube


@scenario
def custom_function_once_differentiable_double_backward_errors(lib):
    x = leaf(lib, [1.0, 2.0])
    (g,) = lib.autograd.grad((once_differentiable_cube(lib).apply(x) ** 2).sum(), x,
                             create_graph=True)
    return [values(g), g.requires_grad,
            raises(lambda: g.sum().backward(),
                   "trying to differentiate twice a function that was marked with "
                   "@once_differentiable")]


@scenario
def once_differentiable_error_node_is_skipped_by_grad_towards_inputs(lib):
    x, v = leaf(lib, [1.0, 2.0]), leaf(lib, [1.0, -1.0])
    (g,) = lib.autograd.grad(once_differentiable_cube(lib).apply(x), x, v, create_graph=True)
    unused = lib.autograd.grad(g.sum(), (x, v), allow_unused=True)
    return [values(g), name_of(g.grad_fn), unused == (None, None), g.output_nr,
            raises(lambda: lib.autograd.grad(g.sum(), x), "appears to not have been used")]


@scenario
def custom_function_twice_differentiable(lib):
    x = leaf(lib, [1.0, 2.0])
    (g,) = lib.autograd.grad(cube_function(lib).apply(x).sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    return [values(g), values(gg)]


@scenario
def custom_function_non_tensor_inputs_and_outputs(lib):
    class Scaled(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor, label):
            ctx.factor = factor
            return x * factor, label.upper(), 7

        @staticmethod
        def backward(ctx, g, g_label, g_int):
            return g * ctx.factor, None, None
    x = leaf(lib, [1.0, 2.0])
    y, label, number = Scaled.apply(x, 3.0, "tag")
    y.sum().backward()
    return [label, number, values(x.grad)]


@scenario
def custom_function_output_not_requiring_grad_when_inputs_dont(lib):
    x = const(lib, [1.0, 2.0])
    y = exp_function(lib).apply(x)
    return [y.requires_grad, name_of(y.grad_fn)]


@scenario
def custom_function_under_no_grad_records_nothing(lib):
    x = leaf(lib, [1.0, 2.0])
    with lib.no_grad():
        y = exp_function(lib).apply(x)
    return [y.requires_grad, name_of(y.grad_fn)]


@scenario
def custom_function_saved_input_modified_errors(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    x = leaf(lib, [1.0, 2.0])
    h = x * 1
    y = Square.apply(h)
    h.add_(1)
    return raises(lambda: y.sum().backward(), "modified by an inplace operation",
                  "is at version 1; expected version 0")


@scenario
def custom_function_exception_propagates_and_leaves_grad(lib):
    class Boom(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom from backward")
    x = leaf(lib, [1.0, 2.0])
    (x * 3).sum().backward()
    before = values(x.grad)
    err = raises(lambda: (Boom.apply(x) + x).sum().backward(), "boom from backward")
    after = values(x.grad)
    (x * 1).sum().backward()
    return [before, err, after, values(x.grad)]


@scenario
def hook_exception_propagates_with_its_type(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2

    def bad(g):
        raise KeyError("from hook")
    handle = y.register_hook(bad)
    err = raises(lambda: y.sum().backward(retain_graph=True), "from hook")
    handle.remove()
    y.sum().backward()
    return [err, values(x.grad)]


@scenario
def custom_function_outputs_that_get_no_gradient_see_zeros(lib):
    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    class NoGrad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None
    x = leaf(lib, [1.0, 2.0])
    a, b = Two.apply(x)
    seen = []
    a.grad_fn.register_prehook(lambda grads: seen.append(len(grads)))
    NoGrad.apply(b).sum().backward()
    return [values(x.grad), seen]


@scenario
def custom_function_non_tensor_output_gets_none(lib):
    seen = []

    class WithCount(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            index = lib.tensor([0, 1])
            ctx.mark_non_differentiable(index)
            return x * 2, 3, index

        @staticmethod
        def backward(ctx, g, g_count, g_index):
            seen.append([g_count, dtype_name(g_index.dtype), values(g_index)])
            return g * 2
    x = leaf(lib, [1.0, 2.0])
    WithCount.apply(x)[0].sum().backward()
    return [seen, values(x.grad)]


# =====================================================================================
# Grad modes
# =====================================================================================

@scenario
def no_grad_context(lib):
    x = leaf(lib, [1.0, 2.0])
    with lib.no_grad():
        y = x * 2
        inside = lib.is_grad_enabled()
        with lib.enable_grad():
            z = x * 2
    return [inside, lib.is_grad_enabled(), y.requires_grad, name_of(y.grad_fn),
            z.requires_grad, y.is_leaf]


@scenario
def grad_mode_decorators(lib):
    x = leaf(lib, [1.0, 2.0])

    @lib.no_grad()
    def off(t):
        return t * 2, lib.is_grad_enabled()

    @lib.enable_grad()
    def on(t):
        return t * 2, lib.is_grad_enabled()

    a, a_mode = off(x)
    with lib.no_grad():
        b, b_mode = on(x)
    return [a.requires_grad, a_mode, b.requires_grad, b_mode, lib.is_grad_enabled()]


@scenario
def grad_mode_bare_decorators(lib):
    x = leaf(lib, [1.0, 2.0])

    @lib.no_grad
    def off(t):
        return t * 2

    @lib.enable_grad
    def on(t):
        return t * 2
    with lib.no_grad():
        b = on(x)
    return [off(x).requires_grad, b.requires_grad, lib.is_grad_enabled()]


@scenario
def grad_mode_decorates_generators(lib):
    x = leaf(lib, [1.0, 2.0])

    @lib.no_grad()
    def gen():
        yield (x * 2).requires_grad, lib.is_grad_enabled()
        yield (x * 3).requires_grad, lib.is_grad_enabled()
    seen = []
    for item in gen():
        seen.append(list(item) + [lib.is_grad_enabled()])
    return seen


@scenario
def set_grad_enabled_as_function_and_context(lib):
    x = leaf(lib, [1.0, 2.0])
    with lib.set_grad_enabled(False):
        a = x * 2
    lib.set_grad_enabled(False)
    b = x * 2
    state = lib.is_grad_enabled()
    lib.set_grad_enabled(True)
    c = x * 2

    @lib.set_grad_enabled(False)
    def off(t):
        return t * 2
    d = off(x)
    return [a.requires_grad, b.requires_grad, state, c.requires_grad, d.requires_grad,
            lib.is_grad_enabled()]


@scenario
def requires_grad_can_be_set_under_no_grad(lib):
    with lib.no_grad():
        w = const(lib, [1.0, 2.0]).requires_grad_()
        y = w * 2
    return [w.requires_grad, w.is_leaf, y.requires_grad]


@scenario
def inference_mode_tensors(lib):
    x = leaf(lib, [1.0, 2.0])
    with lib.inference_mode():
        inside = lib.is_inference_mode_enabled()
        y = x * 2
        t = lib.ones(2)
        with lib.inference_mode(False):
            u = lib.ones(2)
            nested = lib.is_inference_mode_enabled()
    return [inside, nested, lib.is_inference_mode_enabled(), y.requires_grad, y.is_inference(),
            t.is_inference(), u.is_inference(), x.is_inference(), lib.is_grad_enabled()]


@scenario
def inference_mode_decorator(lib):
    @lib.inference_mode()
    def make(t):
        return t * 2

    x = leaf(lib, [1.0, 2.0])
    y = make(x)
    return [y.requires_grad, y.is_inference()]


@scenario
def inference_mode_false_turns_grad_mode_on(lib):
    x = leaf(lib, [1.0, 2.0])
    seen = []
    for outer in (lib.inference_mode(), lib.no_grad()):
        with outer, lib.inference_mode(False):
            y = x * 2
            seen += [lib.is_grad_enabled(), lib.is_inference_mode_enabled(), y.requires_grad]
    return seen + [lib.is_grad_enabled()]


@scenario
def inference_tensor_saved_for_backward_errors(lib):
    with lib.inference_mode():
        t = lib.ones(2, dtype=lib.float64)
    x = leaf(lib, [1.0, 2.0])
    return raises(lambda: x * t, "Inference tensors cannot be saved for backward")


@scenario
def inference_tensor_in_place_outside_errors(lib):
    with lib.inference_mode():
        t = lib.ones(2)
    return raises(lambda: t.add_(1),
                  "Inplace update to inference tensor outside InferenceMode is not allowed")


@scenario
def grad_mode_is_thread_local(lib):
    seen = []

    def probe():
        seen.append(lib.is_grad_enabled())
    with lib.no_grad():
        worker = threading.Thread(target=probe)
        worker.start()
        worker.join()
        seen.append(lib.is_grad_enabled())
    return seen


@scenario
def numpy_of_a_tensor_that_requires_grad_needs_grad_mode_off(lib):
    x = leaf(lib, [1.0, 2.0])
    record = [raises(x.numpy, "Can't call numpy() on Tensor that requires grad")]
    for mode in (lib.no_grad, lib.inference_mode, lambda: lib.set_grad_enabled(False)):
        with mode():
            record.append(x.numpy().tolist())
    return record


@scenario
def inference_tensor_version_raises(lib):
    with lib.inference_mode():
        t = lib.ones(2)
        inside = raises(lambda: t._version, "Inference tensors do not track version counter")
    made_outside = [t[:1], t.t(), t.split(1)[0], t.detach(), t * 2, t.clone()]
    return [inside, raises(lambda: t[:1]._version, "Inference tensors do not track version"),
            [v.is_inference() for v in made_outside], lib.ones(2)._version]


@scenario
def mark_dirty_docs_example_with_numpy_under_no_grad(lib):
    class Inplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x_npy = x.numpy()            # forward runs with grad mode off
            x_npy += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, grad_output):
            return grad_output
    a = lib.tensor(1.0, requires_grad=True, dtype=lib.double).clone()
    b = a * a
    out = Inplace.apply(a)
    return [values(out), name_of(out.grad_fn),
            raises(b.backward, "modified by an inplace operation", "is at version 1")]


# =====================================================================================
# Execution order of the engine
# =====================================================================================

@scenario
def execution_order_diamond(lib):
    x = leaf(lib, [0.5, 1.5])
    a = x * 2
    b = x.exp()
    c = a + b
    out = c.sum()
    return record_execution_order([out.grad_fn], out.backward)


@scenario
def execution_order_branches_of_unequal_depth(lib):
    x = leaf(lib, [0.5, 1.5])
    y = x * 2
    long_branch = y.sin().cos().exp()
    short_branch = y.tanh()
    out = (long_branch + short_branch).sum()
    return record_execution_order([out.grad_fn], out.backward)


@scenario
def execution_order_follows_creation_not_position(lib):
    x = leaf(lib, [0.5, 1.5])
    late_first = x.sin()
    early = x.cos()
    late = late_first.exp()
    out = (early * late).sum()
    return record_execution_order([out.grad_fn], out.backward)


@scenario
def execution_order_shared_subgraph(lib):
    x = leaf(lib, [0.5, 1.5])
    shared = x.sigmoid()
    p = shared * 3
    q = shared.sqrt()
    r = p * q + shared
    out = r.sum()
    return record_execution_order([out.grad_fn], out.backward)


@scenario
def execution_order_multiple_roots(lib):
    x = leaf(lib, [0.5, 1.5])
    a = (x * 2).sum()
    b = x.exp().sum()
    order = record_execution_order([a.grad_fn, b.grad_fn],
                                   lambda: lib.autograd.backward([a, b]))
    return [order, values(x.grad)]


@scenario
def leaf_hooks_order_across_leaves(lib):
    a, b, c = leaf(lib, [1.0]), leaf(lib, [2.0]), leaf(lib, [3.0])
    order = []
    for tag, t in (("a", a), ("b", b), ("c", c)):
        t.register_post_accumulate_grad_hook(lambda t, tag=tag: order.append(tag))
    (c * b + a * b).sum().backward()
    return order


# =====================================================================================
# Complex autograd conventions
# =====================================================================================

@scenario
def complex_abs_squared(lib):
    z = leaf(lib, [1 + 2j, -0.5 + 0.25j], lib.complex128)
    (z.abs() ** 2).sum().backward()
    return [values(z.grad), dtype_name(z.grad.dtype)]


@scenario
def complex_z_times_conj(lib):
    z = leaf(lib, [1 + 2j, -0.5 + 0.25j], lib.complex128)
    lib.real(z * z.conj()).sum().backward()
    return values(z.grad)


@scenario
def complex_angle(lib):
    z = leaf(lib, [1 + 2j, -0.5 + 0.25j], lib.complex128)
    z.angle().sum().backward()
    return values(z.grad)


@scenario
def complex_real_and_imag(lib):
    z = leaf(lib, [1 + 2j, -0.5 + 0.25j], lib.complex128)
    w = leaf(lib, [3 - 1j, 2 + 2j], lib.complex128)
    (lib.real(z) * 2 + lib.imag(w) * 3).sum().backward()
    return [values(z.grad), values(w.grad)]


@scenario
def complex_real_and_imag_are_attributes(lib):
    z = leaf(lib, [1 + 2j, -0.5 + 0.25j], lib.complex128)
    r, i = z.real, z.imag
    (r * 2 + i * 3).sum().backward()
    return [values(r), values(i), r.requires_grad, values(z.grad)]


@scenario
def complex_holomorphic_chain(lib):
    z = leaf(lib, [0.3 + 0.4j, -0.2 + 0.1j], lib.complex128)
    lib.real((z * z).exp()).sum().backward()
    return values(z.grad)


@scenario
def complex_backward_with_complex_gradient(lib):
    z = leaf(lib, [0.3 + 0.4j, -0.2 + 0.1j], lib.complex128)
    (z * z).backward(const(lib, [1 + 1j, 2 - 1j], lib.complex128))
    return values(z.grad)


@scenario
def complex_scalar_backward_without_gradient_errors(lib):
    z = leaf(lib, [1 + 2j, -0.5 + 0.25j], lib.complex128)
    return raises(lambda: (z * z).sum().backward(),
                  "grad can be implicitly created only for real scalar outputs")


@scenario
def complex64_grad_dtype(lib):
    z = leaf(lib, [1 + 2j], lib.complex64)
    (z.abs() ** 2).sum().backward()
    return [dtype_name(z.grad.dtype), values(z.grad)]


@scenario
def real_to_complex_gradient_is_real(lib):
    x = leaf(lib, [1.0, 2.0])
    w = const(lib, [1 + 1j, 2 - 3j], lib.complex128)
    (x * w).abs().sum().backward()
    return [dtype_name(x.grad.dtype), values(x.grad)]


# =====================================================================================
# More: .data, detach_, threads, anomaly mode, retained grads
# =====================================================================================

@scenario
def data_has_its_own_version_counter(lib):
    x = leaf(lib, [1.0, 2.0])
    d = x.data
    d.add_(1)
    return [x._version, d.requires_grad, values(x), x.requires_grad_() is x]


@scenario
def detach_in_place_makes_a_leaf(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 2
    y.detach_()
    return [y.is_leaf, y.requires_grad, name_of(y.grad_fn), values(y)]


@scenario
def retained_grad_accumulates(lib):
    x = leaf(lib, [1.0, 2.0])
    y = x * 3
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    first = values(y.grad)
    z.backward()
    return [first, values(y.grad), values(x.grad)]


@scenario
def leaf_hook_called_once_with_summed_grad(lib):
    x = leaf(lib, [1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(values(g)))
    (x * 2 + x * 5 + x.exp()).sum().backward()
    return [seen, values(x.grad)]


@scenario
def hook_on_one_output_of_multi_output_op(lib):
    x = leaf(lib, [1.0, 2.0, 3.0, 4.0])
    p, q = x.split(2)
    q.register_hook(lambda g: g * 100)
    (p * 2 + q * 3).sum().backward()
    return values(x.grad)


@scenario
def grad_returns_a_tuple(lib):
    x = leaf(lib, [1.0, 2.0])
    result = lib.autograd.grad((x * x).sum(), [x])
    return [type(result).__name__, len(result)]


@scenario
def threads_run_backward_on_independent_graphs(lib):
    results = [None] * 4

    def work(i):
        x = leaf(lib, [float(i), float(i) + 1.0])
        for _ in range(20):
            (x * x * i).sum().backward()
        results[i] = values(x.grad)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@scenario
def threads_sharing_a_leaf_accumulate(lib):
    x = leaf(lib, [1.0, 2.0])

    def work():
        for _ in range(10):
            (x * 3).sum().backward()
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return values(x.grad)


@scenario
def anomaly_mode_reports_nan_in_backward(lib):
    x = leaf(lib, [0.0, 1.0])

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                (x / x).sum().backward()
    return [raises(run, "Function 'DivBackward0' returned nan values in its 1th output"),
            x.grad is None]


@scenario
def anomaly_mode_warns_on_enter(lib):
    def enter():
        with lib.autograd.detect_anomaly():
            pass
    return warns(enter, "Anomaly Detection has been enabled")


@scenario
def anomaly_mode_flags(lib):
    before = lib.is_anomaly_enabled()
    with lib.autograd.set_detect_anomaly(True):
        inside = lib.is_anomaly_enabled()
    return [before, inside, lib.is_anomaly_enabled()]


@scenario
def is_view_of_views_copies_and_detached_tensors(lib):
    y = leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]) * 1
    made = [y[1:], y.t(), y.view(6), y.reshape(6), y.t().reshape(6), y[[0]], y.detach(),
            y.split(1)[0], y.expand(2, 2, 3), y.contiguous(), y[range(1, 2)]]
    with lib.inference_mode():
        inference_view = lib.ones(2)[1:]
    return [[t._is_view() for t in made], inference_view._is_view()]


@scenario
def indexing_with_a_range(lib):
    x = leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    out = x[range(1, 3), range(0, 3, 2)]
    (out * 2).sum().backward()
    y = lib.zeros(4)
    y[range(1, 3)] = 5.0
    return [values(out), name_of(out.grad_fn), values(x.grad), values(y),
            values(x[range(0)]), values(x[:, range(2)])]


# =====================================================================================
# The tests
# =====================================================================================

def _check(record_torch, record_cr):
    wrong_scenario = unmatched_phrases(record_torch)
    assert not wrong_scenario, "scenario expects phrases torch lacks:\n" + "\n".join(wrong_scenario)
    problems = compare(record_cr, record_torch)
    assert not problems, "\n".join(problems)


def _run(fn, lib):
    # enable_grad restores grad mode on exit, so a scenario that fails while it has
    # grad mode off cannot leak that state into the next test.
    with lib.enable_grad():
        return fn(lib)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_autograd_semantics(name):
    fn = SCENARIOS[name]
    _check(_run(fn, torch), _run(fn, cr))


@pytest.mark.parametrize("case", list(GRAD_FN_CASES))
def test_grad_fn_name(case):
    assert grad_fn_name_of_case(cr, case) == grad_fn_name_of_case(torch, case)


@pytest.mark.parametrize("case", list(SAVED_COUNT_CASES))
def test_saved_tensor_hook_counts(case):
    """Gradients under counting hooks must match; torch may save different tensors for
    an op than chainrule does, so a differing count is reported, not failed."""
    t_pack, t_unpack, t_grads = saved_counts_of_case(torch, case)
    c_pack, c_unpack, c_grads = saved_counts_of_case(cr, case)
    problems = compare(c_grads, t_grads)
    assert not problems, "\n".join(problems)
    if (c_pack, c_unpack) != (t_pack, t_unpack):
        warnings.warn(f"saved-tensor counts differ for {case}: chainrule packs {c_pack} / "
                      f"unpacks {c_unpack}, torch packs {t_pack} / unpacks {t_unpack}")
