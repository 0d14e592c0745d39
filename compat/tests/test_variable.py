import gc
import warnings

import pytest

import chainrule as cr
from chainrule import _legacy_slots
from chainrule._ops import _registry
from chainrule.autograd import Variable
from chainrule_compat import variable


def test_variable_is_a_tensor_sharing_memory():
    data = cr.zeros(3)
    v = Variable(data)
    v.data[0] = 5.0                        # through .data, as 0.2 code updated weights
    assert data.tolist() == [5.0, 0.0, 0.0]
    assert not v.requires_grad and v.grad is None


def test_old_code_recognises_tensors_as_variables():
    t = cr.ones(2)
    assert isinstance(t, Variable) and type(t) == Variable and issubclass(cr.Tensor, Variable)
    assert not isinstance(2.0, Variable) and type(2.0) != Variable
    assert cr.autograd.Variable is Variable
    from chainrule.autograd.variable import Variable as by_module
    assert by_module is Variable


def test_requires_grad_leaf_with_grad_data():
    w = Variable(cr.tensor([1.0, 2.0]), requires_grad=True)
    (w * w).sum().backward()
    assert w.is_leaf and w.grad.data.tolist() == [2.0, 4.0]


def test_contradictory_flags_and_bad_data():
    with pytest.raises(RuntimeError, match="can't be volatile and require_grad"):
        Variable(cr.ones(1), requires_grad=True, volatile=True)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1.0])


def test_volatile_propagates_and_records_nothing():
    w = cr.ones(2, requires_grad=True)
    with pytest.warns(DeprecationWarning, match=r"with chainrule.no_grad\(\):"):
        v = Variable(cr.tensor([1.0, 2.0]), volatile=True)
    out = (v * w).exp().sum()
    assert not out.requires_grad and out.grad_fn is None
    with pytest.warns(DeprecationWarning):
        assert out.volatile and v.volatile and not w.volatile
    recorded = (w * 2).sum()                 # other code records as usual
    assert recorded.requires_grad
    recorded.backward()
    assert w.grad.tolist() == [2.0, 2.0]


class _Scale(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        return g * w, None


def test_custom_function_with_a_volatile_input_records_nothing():
    w = cr.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = Variable(cr.tensor([1.0, 2.0]), volatile=True)
        out = _Scale.apply(v, w)
        assert out.grad_fn is None and not out.requires_grad and out.volatile
        assert _Scale.apply(cr.ones(2), w).grad_fn is not None   # the rest records


def test_dispatcher_only_while_a_volatile_tensor_lives():
    gc.collect()
    assert _registry._dispatch is None and _legacy_slots.FUNCTION_WRAPPER is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = Variable(cr.ones(2), volatile=True)
    assert _registry._dispatch is not None
    u = v * 2
    assert _legacy_slots.FUNCTION_WRAPPER is not None
    del v, u
    gc.collect()
    assert _registry._dispatch is None and not variable._LIVE
    assert _legacy_slots.FUNCTION_WRAPPER is None


def test_volatile_warns_once_per_call_site():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            Variable(cr.ones(1), volatile=True)
    assert len(caught) == 1 and caught[0].filename == __file__
