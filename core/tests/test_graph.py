"""chainrule.autograd.graph: saved-tensor hooks, save_on_cpu, disabling hooks,
multi-grad hooks, allow_mutation_on_saved_tensors, gradient edges; with the
reference documentation's examples and their printed output."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import graph


def test_saved_tensors_hooks_reference_example(capsys):
    def pack_hook(x):
        print("Packing", x)
        return x

    def unpack_hook(x):
        print("Unpacking", x)
        return x

    a = cr.ones(5, requires_grad=True)
    b = cr.ones(5, requires_grad=True) * 2
    with graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    assert capsys.readouterr().out.splitlines() == [
        "Packing tensor([1., 1., 1., 1., 1.], requires_grad=True)",
        "Packing tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)"]
    y.sum().backward()
    assert sorted(capsys.readouterr().out.splitlines()) == [
        "Unpacking tensor([1., 1., 1., 1., 1.], requires_grad=True)",
        "Unpacking tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)"]
    assert a.grad.tolist() == [2.0] * 5


def test_saved_tensors_hooks_can_offload_to_numpy_copies():
    store = {}

    def pack(t):
        key = len(store)
        store[key] = t.detach().numpy().copy()
        return key

    def unpack(key):
        return cr.from_numpy(store[key])

    x = cr.tensor([1.0, 2.0], dtype=cr.float64, requires_grad=True)
    with graph.saved_tensors_hooks(pack, unpack):
        y = x.exp()
    (g,) = cr.autograd.grad(y.sum(), x, create_graph=True)   # result rebuilt with graph
    (h,) = cr.autograd.grad(g.sum(), x)
    assert np.allclose(h.numpy(), np.exp([1.0, 2.0]))


def test_innermost_hooks_win_and_custom_function_saves_use_hooks():
    seen = []
    x = cr.ones(2, requires_grad=True)

    class Square(cr.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 2 * t * g

    with graph.saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda t: t):
        with graph.saved_tensors_hooks(lambda t: seen.append("inner") or t, lambda t: t):
            y = Square.apply(x)
    y.sum().backward()
    assert seen == ["inner"] and x.grad.tolist() == [2.0, 2.0]


def test_a_pack_that_detaches_keeps_higher_order_gradients():
    # issue 9, wrong today 4: the unpacked tensor is re-attached to the saved tensor's
    # history (Note [unpacking re-attaches history])
    x = cr.tensor([1.0, 2.0, -0.5], dtype=cr.float64, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        y = x ** 3                       # saves the leaf x
        a = x * 2.0
        z = a ** 3                       # saves a, a non-leaf input
    g, = cr.autograd.grad(y.sum(), x, create_graph=True)
    assert g.grad_fn is not None
    np.testing.assert_allclose(cr.autograd.grad(g.sum(), x)[0].numpy(), 6 * x.detach().numpy())
    g, = cr.autograd.grad(z.sum(), x, create_graph=True)
    np.testing.assert_allclose(cr.autograd.grad(g.sum(), x)[0].numpy(),
                               48 * x.detach().numpy())


def test_unpacked_tensor_is_a_new_tensor_with_the_saved_history():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    z = cr.tensor([3.0, 4.0])
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x ** 3
        w = z * x
        e = x.exp()
    saved = y.grad_fn._saved_self
    assert saved is not x and saved.requires_grad and saved.grad_fn is None
    assert w.grad_fn._saved_self is z                    # required no grad: as unpacked
    result = e.grad_fn._saved_result
    assert result is not e and result.grad_fn is e.grad_fn
    (saved * 2).sum().backward()                         # into x's accumulator
    assert x.grad.tolist() == [2.0, 2.0]


def test_versions_are_not_checked_through_hooks():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1.0
    with graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = a ** 2
    a.add_(1.0)                          # the hooks kept the value as it was
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_pack_hooks_run_with_grad_mode_off_and_may_not_modify_their_input():
    seen = []
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: seen.append(cr.is_grad_enabled()) or t * 2,
                                   lambda t: t):
        y = x.exp() * x                  # t * 2 inside pack records nothing, saves nothing
    assert seen == [False, False, False]

    def modifies(t):
        return t.mul_(2)
    a = x * 1
    with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input "
                                           "in place"):
        with graph.saved_tensors_hooks(modifies, lambda t: t):
            a.exp()


def test_raw_saved_tensor_register_hooks():
    # issue 9, wrong today 7: grad_fn._raw_saved_<name>
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    assert raw.unpack() is x and raw.unpack_hook is None
    log = []
    raw.register_hooks(lambda t: log.append(("pack", t.requires_grad)) or t * 10,
                       lambda t: log.append("unpack") or t)
    assert log == [("pack", False)] and raw.data.tolist() == [10.0, 20.0]
    with pytest.raises(RuntimeError, match="whose hooks have already been set"):
        raw.register_hooks(lambda t: t, lambda t: t)
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 40.0] and log[-1] == "unpack"
    with pytest.raises(RuntimeError, match="Calling register_hooks on a saved tensor after "
                                           "it has been freed"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(TypeError, match="register_hooks\\(\\): incompatible function arguments"
                       ". The following argument types are supported:\n    1. \\(self: ") as e:
        x.exp().grad_fn._raw_saved_result.register_hooks(1, 2)
    assert str(e.value).endswith(", 1, 2")


def test_raw_saved_output_with_a_detaching_pack_keeps_higher_order_gradients():
    x = cr.tensor([0.5, 1.5], dtype=cr.float64, requires_grad=True)
    y = x.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: t.detach(), lambda t: t)
    g, = cr.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(cr.autograd.grad(g.sum(), x)[0].numpy(), np.exp([0.5, 1.5]))


def test_raw_saved_tensors_of_a_custom_function():
    class Scale(cr.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, None)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            a, _ = ctx.saved_tensors
            return g * a
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = Scale.apply(x)
    raw = y.grad_fn._raw_saved_tensors
    assert len(raw) == 2 and raw[1] is None
    raw[0].register_hooks(lambda t: t + 1, lambda t: t)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn._raw_saved_tensors


def test_unpack_hook_must_return_tensor():
    x = cr.ones(2, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: 5):
        y = x.exp()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        y.sum().backward()


def test_python_numbers_in_saved_products_are_not_packed():
    # the reference's wrapped numbers skip the hooks; a 0-d tensor of the user's does not
    x = cr.randn(3, requires_grad=True)
    packed = []
    with graph.saved_tensors_hooks(lambda t: packed.append(tuple(t.shape)) or t, lambda t: t):
        ys = [x * 2, 3.5 * x, x / 4, x * cr.tensor(2.0)]
    assert packed == [()]
    sum(y.sum() for y in ys).backward()
    assert x.grad.tolist() == [7.75] * 3


def test_absent_optional_inputs_are_not_packed():
    # Note [absent tensor input]: like the reference's undefined tensors
    x, w = cr.randn(2, 3, 5, requires_grad=True), cr.randn(4, 3, 3, requires_grad=True)
    z = cr.randn(4, 3, requires_grad=True)
    packed = []
    with graph.saved_tensors_hooks(lambda t: packed.append(tuple(t.shape)) or t, lambda t: t):
        cr.nn.functional.conv1d(x, w)
        cr.nn.functional.binary_cross_entropy_with_logits(z, cr.ones(4, 3))
    assert packed == [(2, 3, 5), (4, 3, 3), (4, 3), (4, 3)]


def test_save_on_cpu_keeps_values():
    a = cr.randn(5, dtype=cr.float64, requires_grad=True)
    b = cr.randn(5, dtype=cr.float64, requires_grad=True)
    c = cr.randn(5, dtype=cr.float64, requires_grad=True)
    prod_1 = a * b
    with graph.save_on_cpu():
        prod_2 = prod_1 * c
    (prod_2 * a).sum().backward()
    assert np.allclose(c.grad.numpy(), (a * b * a).detach().numpy())


def test_disable_saved_tensors_hooks_reference_example():
    message = "saved tensors default hooks are disabled"
    with graph.disable_saved_tensors_hooks(message):
        with pytest.raises(RuntimeError, match=message):
            with graph.save_on_cpu():
                pass
    with graph.save_on_cpu():
        pass


def test_multi_grad_hook_reference_example(capsys):
    a = cr.rand(2, 3, requires_grad=True)
    b = cr.rand(2, 3, requires_grad=True)
    c = a * b
    d = a * b

    def fn(grads):
        print([g is not None for g in grads])

    handle = graph.register_multi_grad_hook((a, b, c, d), fn)
    c.sum().backward(retain_graph=True)
    assert capsys.readouterr().out == "[True, True, True, False]\n"
    c.sum().backward(inputs=(a,), retain_graph=True)
    assert capsys.readouterr().out == "[True, False, True, False]\n"
    handle.remove()
    c.sum().backward(retain_graph=True)
    assert capsys.readouterr().out == ""


def test_multi_grad_hook_any_mode_fires_once():
    calls = []
    a = cr.ones(2, requires_grad=True)
    b = cr.ones(2, requires_grad=True)
    graph.register_multi_grad_hook((a, b), lambda g: calls.append(g.tolist()), mode="any")
    (a * 2 + b * 3).sum().backward()
    assert len(calls) == 1
    with pytest.raises(ValueError, match="mode"):
        graph.register_multi_grad_hook((a,), print, mode="some")


def test_allow_mutation_on_saved_tensors_reference_example():
    with graph.allow_mutation_on_saved_tensors() as context:
        a = cr.ones(2, 3, requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        out.sum().backward()
    assert a.grad.tolist() == [[2.0] * 3] * 2
    assert np.allclose(b.detach().numpy(), np.sin(1.0))
    assert context.saved_by_counter == {}


def test_mutation_without_context_still_errors():
    a = cr.ones(2, 3, requires_grad=True)
    b = a.clone()
    out = (b ** 2).sum()
    b.sin_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_modified_error_names_tensor_node_and_versions():
    a = cr.ones(3, requires_grad=True)
    b = a.exp()
    c = b.exp()        # saves b's result... and ExpBackward0 of c saves its own result
    b.mul_(2)
    with pytest.raises(RuntimeError) as info:
        c.sum().backward()
    message = str(info.value)
    assert "[chainrule.FloatTensor [3]], which is output 0 of Exp," in message
    assert "is at version 1; expected version 0 instead" in message
    assert "Hint: enable anomaly detection" in message


def test_modified_error_for_a_saved_leaf_names_no_node():
    a = cr.ones(3, requires_grad=True)
    y = a.sin()
    a.detach().add_(1)
    with pytest.raises(RuntimeError, match=r"inplace operation: \[chainrule.FloatTensor \[3\]\] "
                                           "is at version 1; expected version 0 instead."):
        y.sum().backward()


def test_gradient_edge_named_tuple():
    x = cr.ones(2, requires_grad=True)
    y = x * 2
    edge = graph.get_gradient_edge(y)
    assert edge.node is y.grad_fn and edge.output_nr == 0
    leaf_edge = graph.get_gradient_edge(x)
    assert leaf_edge.node.name() == "torch::autograd::AccumulateGrad"
    with pytest.raises(RuntimeError, match="does not require gradients"):
        graph.get_gradient_edge(cr.ones(1))


def test_anomaly_mode_reports_forward_trace():
    class MyFunc(cr.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("Some error in backward")

    def run_fn(a):
        out = MyFunc.apply(a)
        return out.sum()

    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with cr.autograd.detect_anomaly():
            inp = cr.rand(10, 10, requires_grad=True)
            out = run_fn(inp)
            with pytest.warns(UserWarning, match="Traceback of forward call that caused the "
                                                 "error:(.|\\n)*run_fn"):
                with pytest.raises(RuntimeError, match="Some error in backward"):
                    out.backward()
    assert not cr.autograd.anomaly_mode.is_anomaly_enabled()


def test_anomaly_mode_nan_check_names_node():
    x = cr.tensor([0.0], requires_grad=True)
    with cr.autograd.set_detect_anomaly(True):
        y = x.sqrt() * 0      # d sqrt at 0 is inf; inf * 0 = nan in backward
        with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in "
                                               "its 0th output"):
            with np.errstate(all="ignore"):
                y.sum().backward()
    x.grad = None
    with cr.autograd.set_detect_anomaly(True, check_nan=False):
        y = x.sqrt() * 0
        with np.errstate(all="ignore"):
            y.sum().backward()
    assert np.isnan(x.grad.item())
