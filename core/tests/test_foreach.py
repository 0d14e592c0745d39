"""_ops/foreach.py: chainrule._foreach_* apply the elementwise op to every tensor of a
list, with the reference's argument forms, return values and errors."""
import pytest

import chainrule as cr


def lists():
    return [cr.ones(2), cr.full((3,), 2.)], [cr.full((2,), 3.), cr.ones(3)]


def test_out_of_place_forms_take_numbers_lists_and_tensors():
    a, b = lists()
    assert [t.tolist() for t in cr._foreach_add(a, b, alpha=2)] == [[7., 7.], [4., 4., 4.]]
    assert [t.tolist() for t in cr._foreach_mul(a, [2., 3.])] == [[2., 2.], [6., 6., 6.]]
    assert [t.tolist() for t in cr._foreach_sub(a, cr.tensor(1.))] == [[0., 0.], [1., 1., 1.]]
    assert [t.tolist() for t in cr._foreach_maximum(a, 1.5)] == [[1.5, 1.5], [2., 2., 2.]]
    assert [t.tolist() for t in cr._foreach_pow(2., a)] == [[2., 2.], [4., 4., 4.]]
    assert [t.tolist() for t in cr._foreach_addcdiv(a, b, b, cr.tensor([0.5, 2.]))] == \
        [[1.5, 1.5], [4., 4., 4.]]
    assert [t.item() for t in cr._foreach_norm(a, 1)] == [2., 6.]
    assert isinstance(cr._foreach_sqrt(a), tuple)


def test_in_place_forms_write_each_tensor_and_return_the_list():
    a, b = lists()
    assert cr._foreach_mul_(a, 0.5) is a and a[1].tolist() == [1., 1., 1.]
    cr._foreach_lerp_(a, b, 0.5)
    cr._foreach_addcmul_(a, b, b, value=0.5)
    assert a[0].tolist() == [6.25, 6.25] and a[0]._version == 3
    assert cr._foreach_zero_(b) is b and b[0].tolist() == [0., 0.]


def test_out_of_place_forms_are_differentiable():
    x = cr.ones(2, requires_grad=True)
    cr._foreach_mul([x], 3.)[0].sum().backward()
    assert x.grad.tolist() == [3., 3.]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        cr._foreach_mul_([x], 3.)


@pytest.mark.parametrize("call,message", [
    (lambda a: cr._foreach_add(a, [cr.ones(2)]), "Tensor lists must have the same number of "
                                                 "tensors, got 2 and 1"),
    (lambda a: cr._foreach_add([], 1), "Tensor list must have at least one tensor."),
    (lambda a: cr._foreach_add(a, [1.]), "Tensor list must have same number of elements as "
                                         "scalar list."),
    (lambda a: cr._foreach_mul(a, cr.tensor([2., 3.])), "scalar tensor expected to be 0 dim "
                                                        "but it has 1 dimensions"),
    (lambda a: cr._foreach_mul_([cr.tensor([1, 2])], 0.5), "result type Float can't be cast "
                                                           "to the desired output type Long")])
def test_errors_are_the_references(call, message):
    with pytest.raises(RuntimeError, match=message):
        call(lists()[0])
