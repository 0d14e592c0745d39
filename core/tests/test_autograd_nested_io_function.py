"""chainrule.autograd.NestedIOFunction (legacy): nested forward/backward through the
*_extended methods, nested saving and marking, and the call that fails as in torch."""
import pytest

import chainrule as cr
from chainrule.autograd import NestedIOFunction


class Scale(NestedIOFunction):
    def forward_extended(self, pair, k):
        return [pair[0] * k, (pair[1] * 3,)]

    def backward_extended(self, grad_first, grad_rest):
        return [grad_first * 2, None, grad_rest[0] * 3]


def test_forward_and_backward_flatten_nested_structures():
    a = cr.ones(2, requires_grad=True)
    f = Scale()
    f._nested_input = ([a, cr.ones(1)], 2.0)
    out = f.forward()
    assert [t.tolist() for t in out] == [[2.0, 2.0], [3.0]] and not out[0].requires_grad
    assert not hasattr(f, "_nested_input")
    grads = f.backward(cr.ones(2), cr.ones(1))
    assert [None if g is None else g.tolist() for g in grads] == [[2.0, 2.0], None, [3.0]]


def test_nested_saving_and_marking():
    f = Scale()
    a, b, c = cr.ones(1), cr.zeros(2), cr.ones(3)
    f.save_for_backward(a, [b, (c,)])
    assert f.to_save == (a, b, c)
    saved = f.saved_tensors
    assert saved[0] is a and saved[1][0] is b and saved[1][1][0] is c
    f.mark_dirty(a, other=[b])
    f.mark_non_differentiable([c], d={"x": a})
    assert f.dirty_tensors == (a, b) and f.non_differentiable == (c, a)


def test_calling_an_instance_fails_as_in_torch():
    with pytest.raises(AttributeError, match="'super' object has no attribute '_do_forward'"):
        Scale()(cr.ones(1))
    assert cr.autograd.function.NestedIOFunction is NestedIOFunction
    with pytest.raises(NotImplementedError):
        NestedIOFunction().forward_extended()


def test_saved_tensor_class():
    x = cr.ones(2, requires_grad=True)
    raw = x.exp().grad_fn._raw_saved_result
    assert isinstance(raw, cr.autograd.SavedTensor)
    with pytest.raises(RuntimeError, match="Trying to create a SavedTensor object from Python"):
        cr.autograd.SavedTensor()
