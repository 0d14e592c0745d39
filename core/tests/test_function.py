"""Custom autograd Functions: both styles, ctx features, errors, double backward."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import Function
from chainrule.autograd.function import once_differentiable


def leaf(*values):
    return cr.tensor(list(values), dtype=cr.float64, requires_grad=True)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class MulConstant(Function):
    """forward without ctx + setup_context; a non-tensor argument."""

    @staticmethod
    def forward(x, constant):
        return x * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.constant = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


def test_exp_example_from_reference():
    x = leaf(0.0, 1.0)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), np.exp([0.0, 1.0]))


def test_custom_node_repr_names_its_module_like_a_python_class():
    node = Exp.apply(leaf(0.0)).grad_fn
    assert repr(node) == f"<chainrule.autograd.function.ExpBackward object at {hex(id(node))}>"
    assert repr((leaf(0.0) * 2).grad_fn).startswith("<MulBackward0 object at 0x")


def test_exp_twice_differentiable():
    x = leaf(0.5)
    (g,) = cr.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (h,) = cr.autograd.grad(g.sum(), x)
    assert np.allclose(h.numpy(), np.exp(0.5))


def test_gradcheck_on_custom_function():
    assert cr.autograd.gradcheck(Exp.apply, (leaf(0.1, -0.3),))


def test_setup_context_style_and_non_tensor_input():
    x = leaf(1.0, 2.0)
    y = MulConstant.apply(x, 3.0)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert len(y.grad_fn.next_functions) == 1


def test_needs_input_grad_and_arbitrary_attributes():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["needs"] = ctx.needs_input_grad
            ctx.k = k
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None, None

    a, b = leaf(1.0), cr.tensor([2.0], dtype=cr.float64)
    Probe.apply(a, b, 5).sum().backward()
    assert seen["needs"] == (True, False, False) and a.grad.tolist() == [5.0]


def test_wrong_number_of_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients "
                                           r"\(expected 2, got 1\)"):
        Bad.apply(leaf(1.0), leaf(2.0)).sum().backward()


def test_gradient_of_wrong_shape_names_function_and_index():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return cr.ones(3, dtype=cr.float64)

    with pytest.raises(RuntimeError, match="Function BadBackward returned an invalid gradient at "
                                           "index 0 - got \\[3\\] but expected shape compatible "
                                           "with \\[2\\]"):
        Bad.apply(leaf(1.0, 2.0)).sum().backward()


def test_gradient_for_non_tensor_input_must_be_none():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match="returned a gradient different than None at position 2"):
        Bad.apply(leaf(1.0), 2.0).sum().backward()


def test_legacy_non_static_forward_errors():
    class Legacy(Function):
        def forward(self, x):
            return x

    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        Legacy()(leaf(1.0))
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        Legacy.apply(leaf(1.0))


def test_base_forward_and_backward_not_implemented():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError, match="You must implement either the backward"):
        NoBackward.apply(leaf(1.0)).sum().backward()

    class NoForward(Function):
        pass

    with pytest.raises(NotImplementedError, match="You must implement the forward"):
        NoForward.apply(leaf(1.0))


def test_mark_non_differentiable_and_tuple_outputs():
    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            values = x * 1
            index = cr.tensor([0.0, 1.0], dtype=cr.float64)
            ctx.mark_non_differentiable(index)
            return values, index

        @staticmethod
        def backward(ctx, g_values, g_index):
            assert g_index.tolist() == [0.0, 0.0]     # materialized
            return g_values

    x = leaf(1.0, 2.0)
    values, index = SortLike.apply(x)
    assert values.requires_grad and not index.requires_grad
    values.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_set_materialize_grads_false_passes_none():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g2)
            return g1

    x = leaf(1.0)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert seen == [None]


class TwoOutputs(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2 + g2 * 3


class NoGradient(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return None


def test_outputs_that_receive_no_gradient_at_all_get_zeros():
    # issue 9, wrong today 3: no gradient reached TwoOutputs' node, which was called
    # with one (undefined) gradient instead of one per output
    x = leaf(1.0, 2.0)
    a, b = TwoOutputs.apply(x)
    NoGradient.apply(b).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_outputs_that_are_not_tensors_get_none_not_zeros():
    seen = []

    class WithCount(Function):
        @staticmethod
        def forward(ctx, x):
            index = cr.tensor([0, 1])
            ctx.mark_non_differentiable(index)
            return x * 2, 3, index

        @staticmethod
        def backward(ctx, g, g_count, g_index):
            seen.append((g_count, g_index.dtype, g_index.tolist()))
            return g * 2
    x = leaf(1.0, 2.0)
    WithCount.apply(x)[0].sum().backward()
    assert seen == [(None, cr.int64, [0, 0])] and x.grad.tolist() == [2.0, 2.0]


def test_node_without_gradients_runs_its_pre_hook_with_one_none_per_output():
    x = leaf(1.0)
    a, b = TwoOutputs.apply(x)
    seen = []
    a.grad_fn.register_prehook(lambda grads: seen.append(len(grads)))
    NoGradient.apply(b).sum().backward()
    assert seen == [2]


def double_backward_tutorial_functions(lib):
    """The double-backward tutorial's MyCube (dx, a forward output, joins backward) and
    Sinh (intermediate results returned as outputs), for chainrule or torch."""
    class MyCube(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_output * dx + grad_dx * 6 * x

    class Sinh(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx, expnegx = x.exp(), (-x).exp()
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, grad_exp, grad_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += grad_exp * expx
            grad_input -= grad_negexp * expnegx
            return grad_input
    return {"MyCube": MyCube, "Sinh": Sinh}


def _first_output_and_derivatives(lib, name):
    function = double_backward_tutorial_functions(lib)[name]
    first = lambda t: function.apply(t)[0]                 # noqa: E731
    x = lib.tensor([0.3, -1.2, 2.0], dtype=lib.float64, requires_grad=True)
    g, = lib.autograd.grad(first(x).sum(), x, create_graph=True)
    return first, x, g, lib.autograd.grad(g.sum(), x)[0]


@pytest.mark.parametrize("name", ["MyCube", "Sinh"])
def test_gradgradcheck_of_functions_whose_extra_outputs_get_no_gradient(name):
    first, x, g, g2 = _first_output_and_derivatives(cr, name)
    assert cr.autograd.gradcheck(first, (x,))
    assert cr.autograd.gradgradcheck(first, (x,))
    expected = 6 * x.detach() if name == "MyCube" else first(x.detach())
    np.testing.assert_allclose(g2.numpy(), expected.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["MyCube", "Sinh"])
def test_torch_parity_of_functions_whose_extra_outputs_get_no_gradient(torch, name):
    ours, ref = (_first_output_and_derivatives(M, name) for M in (cr, torch))
    for a, b in zip(ours[2:], ref[2:]):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_mark_dirty_in_place_function():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf(1.0)
    y = x * 2
    version = y._version
    z = AddOneInPlace.apply(y)
    assert z is y and y._version == version + 2 and y.grad_fn.name() == "AddOneInPlaceBackward"
    z.sum().backward()
    assert x.grad.tolist() == [2.0] and y.tolist() == [3.0]


def test_input_returned_as_is_gets_alias():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = leaf(1.0)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn.name() == "IdentityBackward"
    y.sum().backward()
    assert x.grad.tolist() == [3.0]


def test_saved_tensor_version_check_in_function():
    x = leaf(1.0)
    h = x * 1
    y = Exp.apply(h)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_tensors_freed_after_backward():
    x = leaf(1.0)
    y = Exp.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors


def test_once_differentiable():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = leaf(3.0)
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [6.0]
    v = leaf(1.0)
    (g,) = cr.autograd.grad(Square.apply(x), x, grad_outputs=v, create_graph=True)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        g.sum().backward()
    # the error node leads to fresh leaves: grad() towards x or v never runs it
    assert g.grad_fn.name() == "torch::autograd::Error" and \
        g.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    assert cr.autograd.grad(g.sum(), (x, v), allow_unused=True) == (None, None)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        cr.autograd.grad(g.sum(), x)


def test_exception_in_backward_propagates_with_type_and_library_stays_usable():
    class Boom(Exception):
        pass

    class Fails(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise Boom("Some error in backward")

    x = leaf(1.0)
    (x * 2).sum().backward()
    with pytest.raises(Boom, match="Some error in backward"):
        (Fails.apply(x) + x * 5).sum().backward()
    assert x.grad.tolist() == [2.0]
    (x * 2).sum().backward()
    assert x.grad.tolist() == [4.0]


def test_no_graph_when_no_input_requires_grad():
    y = Exp.apply(cr.ones(2))
    assert y.grad_fn is None and not y.requires_grad
