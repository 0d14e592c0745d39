"""The method slot (Note [method slot] in chainrule/_ops/_method_slot.py): an upper
layer may replace core's hot Tensor methods; None restores the Python functions."""
import pytest

import chainrule as cr
from chainrule import _torch_function
from chainrule._ops import _method_slot
from chainrule._tensor import Tensor


@pytest.fixture
def slot():
    """set_method_accelerator, with whatever was installed put back afterwards."""
    previous = _method_slot.set_method_accelerator(None)
    yield _method_slot.set_method_accelerator
    _method_slot.set_method_accelerator(previous)


def counting(calls):
    """A make that wraps each method's Python function and counts its calls."""
    def make(kind, op, attrs, fn):
        def method(*args, **kwargs):
            calls.append((kind, op.name))
            return fn(*args, **kwargs)
        return method
    return make


def test_lists_the_one_op_methods():
    entries = {name: (kind, op.name, attrs) for name, kind, op, attrs, _ in
               _method_slot.ACCELERABLE}
    assert entries["sin"] == ("unary", "sin", {})
    assert entries["__add__"] == entries["__radd__"] == ("binary", "add", {"alpha": 1})
    assert entries["__sub__"] == ("binary", "sub", {"alpha": 1})
    assert entries["__mul__"] == entries["__rmul__"] == ("binary", "mul", {})
    assert entries["__rsub__"] == ("binary", "rsub", {"alpha": 1})
    assert entries["__truediv__"] == ("binary", "div", {})
    assert entries["__pow__"] == entries["pow"] == ("scalar", "pow_scalar", {"exponent": None})
    assert entries["sum"] == ("unary", "sum", {"dim": None, "keepdim": False, "dtype": None})
    assert "__rtruediv__" not in entries and "__matmul__" not in entries


def test_python_functions_by_default(slot):
    for name, _, _, _, fn in _method_slot.ACCELERABLE:
        method = _torch_function.METHODS.get(name, fn)   # Note [torch function slot]
        assert method.__wrapped__ is fn and Tensor.__dict__[name] is method
        assert not _method_slot.method_accelerated(name)


def test_installs_and_restores(slot):
    calls = []
    slot(counting(calls))
    x = cr.tensor([0.5, 1.0], requires_grad=True)
    y = (2.0 * x).sin() + x
    assert calls == [("binary", "mul"), ("unary", "sin"), ("binary", "add")]
    assert type(y.grad_fn).__name__ == "AddBackward0" and _method_slot.method_accelerated("sin")
    assert slot(None) is not None
    x.sin()
    assert len(calls) == 3 and not _method_slot.method_accelerated("sin")


def test_none_keeps_the_python_function(slot):
    slot(lambda kind, op, attrs, fn: None if kind == "unary" else lambda *a: fn(*a))
    python = {name: fn for name, _, _, _, fn in _method_slot.ACCELERABLE}
    assert Tensor.__dict__["sin"] is _torch_function.METHODS["sin"]
    assert Tensor.__dict__["sin"].__wrapped__ is python["sin"]
    assert _method_slot.method_accelerated("__mul__")
    assert (cr.ones(2) * 3.0).tolist() == [3.0, 3.0]


def test_a_method_replaced_since_is_left_alone(slot, monkeypatch):
    mine = lambda self: "mine"     # noqa: E731
    monkeypatch.setattr(Tensor, "tanh", mine)
    slot(counting([]))
    assert Tensor.__dict__["tanh"] is mine
    slot(None)
    assert Tensor.__dict__["tanh"] is mine

