"""chainrule.autograd.backward / grad and Tensor.backward: every argument, the leaf
rules, and the reference's error messages."""
import os
import sys

import numpy as np
import pytest

import chainrule as cr


def leaf(*values):
    return cr.tensor(list(values), dtype=cr.float64, requires_grad=True)


def test_scalar_backward_accumulates_into_leaves():
    x = leaf(1.0, 2.0)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_grad_is_none_before_backward_and_for_no_grad_leaves():
    x, c = leaf(1.0), cr.tensor([2.0])
    assert x.grad is None
    (x * c).sum().backward()
    assert c.grad is None


def test_non_leaf_grad_is_none_and_warns():
    x = leaf(1.0)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert y.grad is None


def test_retain_grad_populates_non_leaf():
    x = leaf(1.0, 2.0)
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    assert y.retains_grad
    assert y.grad.tolist() == [6.0, 12.0]


def test_retain_grad_under_create_graph_clones_then_adds():
    # the reference: a contiguous clone of the first gradient (CloneBackward0 over the
    # gradient's own graph), then out-of-place sums
    x = leaf(1.0, 2.0)
    y = x * 3
    y.retain_grad()
    with pytest.warns(UserWarning, match="reference cycle"):
        (y ** 2).sum().backward(create_graph=True)
        first = y.grad
        (y ** 2).sum().backward(create_graph=True)
    assert first.grad_fn.name() == "CloneBackward0"
    assert first.grad_fn.next_functions[0][0].name() == "MulBackward0"
    assert y.grad.grad_fn.name() == "AddBackward0" and y.grad.tolist() == [12.0, 24.0]


def test_non_scalar_needs_gradient():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(cr.tensor([1.0, 10.0], dtype=cr.float64))
    assert x.grad.tolist() == [2.0, 20.0]


def test_gradient_shape_mismatch():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        (x * 2).backward(cr.ones(3, dtype=cr.float64))


def test_gradient_complex_mismatch():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="For complex Tensors, both grad_output and output"):
        (x * 2).backward(cr.ones(2, dtype=cr.complex128))


def test_gradient_of_other_float_dtype_is_cast():
    x = leaf(1.0, 2.0)
    (x * 2).backward(cr.ones(2, dtype=cr.float32))
    assert x.grad.dtype == cr.float64


def test_gradient_wrong_type():
    x = leaf(1.0)
    with pytest.raises(TypeError, match="gradients can be either Tensors or None"):
        cr.autograd.backward([x * 2], [3])


def test_backward_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does "
                                           "not have a grad_fn"):
        cr.ones(1).sum().backward()


def test_second_backward_fails_without_retain_graph():
    x = leaf(1.0, 2.0)
    y = (x.exp()).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = leaf(1.0, 2.0)
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    assert np.allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))


def _scalar_backward_record(run, dtype):
    """Run ``run(loss)`` on a 0-d loss of ``dtype``; what its hook saw and x.grad."""
    x = cr.tensor([1.0, 2.0], dtype=dtype, requires_grad=True)
    loss = (x * x).sum()
    seen = []
    loss.register_hook(lambda g: seen.append((g.dtype, g.shape, g.tolist(),
                                              cr.is_grad_enabled())))
    run(loss)
    return seen, x.grad.dtype, x.grad.tolist()


@pytest.mark.parametrize("dtype", [cr.float16, cr.bfloat16, cr.float32, cr.float64])
def test_scalar_backward_fast_path_matches_general_path(dtype):
    # Note [scalar backward fast path]: a list of tensors takes the general path.
    fast = _scalar_backward_record(lambda loss: loss.backward(), dtype)
    general = _scalar_backward_record(lambda loss: cr.autograd.backward([loss]), dtype)
    assert fast == general == ([(dtype, cr.Size([]), 1.0, False)], dtype, [2.0, 4.0])


def test_scalar_backward_skips_the_general_path(monkeypatch):
    backward_module = sys.modules["chainrule.autograd.backward"]
    monkeypatch.setattr(backward_module, "_make_grads", None)
    x = leaf(3.0)
    (x * x).sum().backward()
    assert x.grad.tolist() == [6.0]
    with pytest.raises(TypeError):                   # a list: the general path
        cr.autograd.backward([(x * x).sum()])
    y = (x * x).sum()
    y._data = y._data.view(type("OtherArray", (np.ndarray,), {}))
    with pytest.raises(TypeError):                   # not an ndarray: the general path
        y.backward()


def test_scalar_backward_of_a_leaf_gets_a_fresh_gradient():
    x = cr.tensor(2.0, requires_grad=True)
    x.backward()
    x.backward()
    assert x.grad.item() == 2.0


def test_scalar_backward_restores_grad_mode():
    x = leaf(1.0)
    y = (x * 2).sum()
    with cr.no_grad():
        y.backward()
        assert not cr.is_grad_enabled()
    y = (x * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward(retain_graph=None)
    assert cr.is_grad_enabled() and x.grad.tolist() == [4.0]


def test_scalar_backward_leaves_other_cases_to_the_general_path():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        cr.tensor(1.0).backward()
    z = cr.tensor(1.0 + 1.0j, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar "
                                           "outputs but got chainrule.complex64"):
        (z * 2).backward()
    x = leaf(1.0)
    (x * 3).backward()                               # shape (1,): size 1, not 0-d
    with pytest.raises(TypeError, match="argument 'mode' must be bool, not int"):
        (x * 3).sum().backward(create_graph=0)
    assert x.grad.tolist() == [3.0]


def test_backward_inputs_restricts_accumulation():
    x, w = leaf(1.0), leaf(2.0)
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None and w.grad.tolist() == [1.0]


def test_backward_inputs_empty_is_error():
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="'inputs' argument to backward\\(\\) cannot be empty"):
        (x * 2).sum().backward(inputs=[])


def test_grad_variables_deprecated_alias():
    x = leaf(1.0)
    with pytest.warns(DeprecationWarning):
        cr.autograd.backward([(x * 2).sum()], grad_variables=[cr.tensor(1.0, dtype=cr.float64)])
    assert x.grad.tolist() == [2.0]
    with pytest.raises(RuntimeError, match="both passed"):
        cr.autograd.backward([(x * 2).sum()], grad_tensors=[None], grad_variables=[None])


def test_grad_returns_without_touching_dot_grad():
    x = leaf(1.0, 2.0)
    (g,) = cr.autograd.grad((x ** 3).sum(), x)
    assert g.tolist() == [3.0, 12.0] and x.grad is None


def test_grad_of_non_leaf_input():
    x = leaf(1.0, 2.0)
    y = x * 2
    z = (y * y).sum()
    (gy,) = cr.autograd.grad(z, y)
    assert gy.tolist() == [4.0, 8.0]


def test_grad_unused_input():
    x, unused = leaf(1.0), leaf(2.0)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to "
                                           "not have been used in the graph"):
        cr.autograd.grad(y, [x, unused], retain_graph=True)
    gx, gu = cr.autograd.grad(y, [x, unused], allow_unused=True, retain_graph=True)
    assert gu is None
    gx, gu = cr.autograd.grad(y, [x, unused], materialize_grads=True)
    assert gu.tolist() == [0.0]


def test_grad_materialize_with_allow_unused_false_is_error():
    x = leaf(1.0)
    with pytest.raises(ValueError, match="materialize_grads=True"):
        cr.autograd.grad(x.sum(), x, allow_unused=False, materialize_grads=True)


def test_grad_input_not_requiring_grad():
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        cr.autograd.grad((x * 2).sum(), cr.ones(1))


def test_grad_outputs_vector_jacobian_product():
    x = leaf(1.0, 2.0)
    (g,) = cr.autograd.grad(x * x, x, grad_outputs=cr.tensor([1.0, -1.0], dtype=cr.float64))
    assert g.tolist() == [2.0, -4.0]


def test_grad_multiple_outputs_sum():
    x = leaf(3.0)
    (g,) = cr.autograd.grad([x * 2, x * x], [x], [cr.ones(1, dtype=cr.float64)] * 2)
    assert g.tolist() == [8.0]


def test_create_graph_double_backward():
    x = leaf(2.0)
    (g,) = cr.autograd.grad(x ** 3, x, create_graph=True)
    assert g.requires_grad
    (h,) = cr.autograd.grad(g, x)
    assert h.tolist() == [12.0]


def test_create_graph_backward_builds_graph_on_dot_grad():
    x = leaf(2.0)
    with pytest.warns(UserWarning, match="reference cycle"):
        (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    (h,) = cr.autograd.grad(x.grad.sum(), x)
    assert h.tolist() == [12.0]


def test_create_graph_first_gradient_is_copied_in_the_leafs_layout():
    # like the reference: .grad is a new tensor, copy_'d from the incoming gradient
    # (so its graph starts with the copy node), with the leaf's strides
    x = cr.tensor(np.arange(6.0).reshape(3, 2), dtype=cr.float64).t().requires_grad_()
    with pytest.warns(UserWarning, match="reference cycle"):
        (x * 2).pow(2).sum().backward(create_graph=True)
    copy = x.grad.grad_fn
    assert [type(n).__name__ if n else None for n, _ in copy.next_functions] == \
        [None, "MulBackward0"]
    assert x.grad.stride() == x.stride() and x.grad.tolist() == (8 * x).tolist()


def test_plain_backward_adds_in_place_into_a_grad_that_has_a_graph():
    x = leaf(1.0, 2.0)
    with pytest.warns(UserWarning, match="reference cycle"):
        (x * 2).pow(2).sum().backward(create_graph=True)
        (x * 3).pow(2).sum().backward(create_graph=True)
    g, node = x.grad, x.grad.grad_fn
    (x * 3).pow(2).sum().backward()
    assert x.grad is g and g.grad_fn is node and g.tolist() == [44.0, 88.0]


def test_accumulation_in_place_keeps_identity():
    x = leaf(1.0)
    (x * 2).sum().backward()
    g = x.grad
    version = g._version
    (x * 2).sum().backward()
    assert x.grad is g and g.tolist() == [4.0] and g._version > version


def test_gradient_layout_follows_parameter_strides():
    base = cr.tensor(np.arange(6.0).reshape(2, 3).T.copy(order="F"), dtype=cr.float64)
    x = base.detach().requires_grad_()
    assert x.stride() != (2, 1) or not x.is_contiguous()
    (x * 2).sum().backward()
    assert x.grad.stride() == x.stride()


def test_grad_setter_checks():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient of size '\\[3\\]' to "
                                           "a tensor of size '\\[2\\]'"):
        x.grad = cr.zeros(3, dtype=cr.float64)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'float32'"):
        x.grad = cr.zeros(2, dtype=cr.float32)
    x.grad = cr.ones(2, dtype=cr.float64)
    (x * 1).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_requires_grad_on_integer_tensor_is_error():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        cr.tensor([1, 2], requires_grad=True)


def test_requires_grad_of_non_leaf_cannot_be_cleared():
    y = leaf(1.0) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad = False


def test_detach_shares_memory_and_version():
    x = leaf(1.0, 2.0)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf
    with cr.no_grad():
        x.mul_(2)
    assert d.tolist() == [2.0, 4.0] and d._version == x._version


def test_detach_in_place():
    y = leaf(1.0) * 2
    y.detach_()
    assert y.is_leaf and not y.requires_grad


def test_shared_subexpression_gets_summed_gradient():
    x = leaf(2.0)
    y = x * x
    z = y + y * y
    z.sum().backward()
    assert x.grad.tolist() == [2 * 2.0 + 4 * 2.0 ** 3]


def test_broadcast_gradient_is_reduced():
    x = cr.ones(3, 1, dtype=cr.float64, requires_grad=True)
    b = cr.ones(4, dtype=cr.float64, requires_grad=True)
    (x * b).sum().backward()
    assert x.grad.shape == (3, 1) and x.grad.tolist() == [[4.0]] * 3
    assert b.grad.tolist() == [3.0] * 4


def test_library_usable_after_error():
    x = leaf(1.0)
    with pytest.raises(RuntimeError):
        (x * 2).backward(cr.ones(5, dtype=cr.float64))
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0]


def test_is_grads_batched_gives_jacobian_rows():
    x = leaf(1.0, 2.0, 3.0)
    y = x ** 2
    (jac,) = cr.autograd.grad(y, x, cr.eye(3, dtype=cr.float64), is_grads_batched=True)
    assert jac.tolist() == [[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 6.0]]


def test_is_grads_batched_shape_error():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="we interpret the first dimension of each grad_output "
                                           "as the batch dimension"):
        cr.autograd.grad(x * 2, x, cr.ones(3, 3, dtype=cr.float64), is_grads_batched=True)


def test_is_grads_batched_unused_input_names_its_index():
    x, unused = leaf(1.0), leaf(2.0)
    y = x * cr.ones(2, dtype=x.dtype)
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears"):
        cr.autograd.grad(y, [x, unused], cr.eye(2, dtype=y.dtype), is_grads_batched=True)


# --- Note [grad fast path] ----------------------------------------------------------------
def test_grad_common_case_equals_the_general_path():
    bw = sys.modules["chainrule.autograd.backward"]
    x = cr.tensor([0.5, -1.0, 2.0], dtype=cr.float64, requires_grad=True)
    w = cr.tensor([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]], dtype=cr.float64, requires_grad=True)
    y = (w @ x).tanh()
    v = cr.tensor([1.0, -2.0], dtype=cr.float64)
    fast = bw._grad_common_case((y,), (x, w), (v,), True, True, False)
    general = bw._run_grad((y,), (x, w), [v], True, True, False, False)
    for a, b in zip(fast, general):
        assert a.requires_grad and np.array_equal(a.detach().numpy(), b.detach().numpy())
    total = y.sum()
    (g,) = bw._grad_common_case(total, x, None, True, False, False)
    (want,) = bw._run_grad((total,), (x,), [cr.ones((), dtype=cr.float64)], False, False,
                           False, False)
    assert not g.requires_grad and np.array_equal(g.numpy(), want.numpy())


@pytest.mark.parametrize("case", [
    lambda x, y: (y, x, None),                          # non-scalar output, no gradient
    lambda x, y: (y, x, cr.ones(2, dtype=cr.float64)),  # a gradient of another shape
    lambda x, y: (y, cr.ones(3), cr.ones(3, dtype=cr.float64)),  # input needs no grad
    lambda x, y: (y.detach(), x, None),                 # output needs no grad
])
def test_grad_uncommon_cases_take_the_general_path(case):
    bw = sys.modules["chainrule.autograd.backward"]
    x = cr.tensor([0.5, -1.0, 2.0], dtype=cr.float64, requires_grad=True)
    outputs, inputs, grads = case(x, x * 2)
    assert bw._grad_common_case(outputs, inputs, grads, None, False, False) is None
    with pytest.raises(RuntimeError):                   # the general path's error
        cr.autograd.grad(outputs, inputs, grads)


def test_grad_with_a_gradient_of_another_dtype_takes_the_general_path():
    bw = sys.modules["chainrule.autograd.backward"]
    x = cr.tensor([0.5, -1.0, 2.0], dtype=cr.float64, requires_grad=True)
    g = cr.ones(3, dtype=cr.float32)
    assert bw._grad_common_case(x * 2, x, g, None, False, False) is None
    assert cr.autograd.grad(x * 2, x, g)[0].dtype == cr.float64     # cast, as the reference


def _python_calls(fn, where=""):
    """fn()'s result and the names of the Python functions it ran (those whose file
    name ends with ``where``)."""
    names = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.endswith(where):
            names.append(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        return fn(), names
    finally:
        sys.setprofile(None)


def test_grad_common_case_runs_no_context_manager_or_comprehension():
    # Note [grad fast path]: the grad mode is set and restored inline, the edges built
    # by loops (frames a second-order step pays on every call)
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    (g,), names = _python_calls(lambda: cr.autograd.grad([y], [x], create_graph=True),
                                os.path.join("autograd", "backward.py"))
    assert g.tolist() == [2.0, 4.0] and g.requires_grad
    assert "_grad_common_case" in names
    assert not {"<genexpr>", "<listcomp>", "_is_gradient_edge"} & set(names)
    (g,), names = _python_calls(lambda: cr.autograd.grad(y, x, create_graph=True),
                                "_grad_mode.py")
    assert names == [] and cr.is_grad_enabled()


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_common_case_restores_grad_mode_when_the_backward_raises(create_graph):
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: 1 / 0)
    total = y.sum()
    for enabled in (False, True):
        with cr.set_grad_enabled(enabled):
            with pytest.raises(ZeroDivisionError):
                cr.autograd.grad(total, x, create_graph=create_graph, retain_graph=True)
            assert cr.is_grad_enabled() is enabled


def test_create_graph_backward_imports_nothing():
    # a saved tensor rebuilt for a create_graph backward (SavedTensor.as_tensor) names
    # Tensor through its module: a function-level import ran the import system's
    # Python frames on every call
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    cr.autograd.grad((x * x).sum(), x)       # (the first backward may import the engine)
    y = (cr.tanh(x) ** 2).sum()              # tanh's saved result is rebuilt
    (g,), names = _python_calls(lambda: cr.autograd.grad(y, x, create_graph=True))
    assert g.requires_grad
    assert not {"parent", "_handle_fromlist", "_calc___package__"} & set(names)
