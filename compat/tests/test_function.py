import pytest

import chainrule as cr
from chainrule.autograd import Function


class Square(Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x * x

    def backward(self, grad_output):
        x, = self.saved_tensors
        return grad_output * 2 * x


class AddInPlace(Function):
    def forward(self, x, y):
        x.add_(y)
        self.mark_dirty(x)
        self.seen = self.needs_input_grad
        return x

    def backward(self, g):
        return g, g


def test_old_style_function_runs_with_a_warning():
    import chainrule_compat  # noqa: F401
    x = cr.tensor([1.0, 3.0], requires_grad=True)
    with pytest.warns(DeprecationWarning, match=r"static.*MyFn.apply") as caught:
        y = Square()(x)
    assert caught[0].filename == __file__
    assert y.grad_fn.name() == "SquareBackward"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 6.0]


def test_mark_dirty_and_needs_input_grad():
    import chainrule_compat  # noqa: F401
    a = cr.ones(2, requires_grad=True).clone()
    b = cr.ones(2)
    fn = AddInPlace()
    out = fn(a, b)
    assert out is a and a._version == 2 and fn.seen == (True, False)     # as new-style


def test_gradcheck_through_the_bridge():
    import chainrule_compat  # noqa: F401
    x = cr.tensor([0.5, -1.5], dtype=cr.float64, requires_grad=True)
    assert cr.autograd.gradcheck(lambda t: Square()(t), (x,))
