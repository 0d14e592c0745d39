"""Core's legacy slots (chainrule/_legacy_slots.py): empty, modern code gets the
modern errors; filled (as the compat layer does), the legacy forms reach them."""
import pytest

import chainrule as cr
from chainrule import _legacy_slots


@pytest.fixture
def empty_slots(monkeypatch):
    installed = dict(_legacy_slots.LEGACY_ATTRIBUTES)
    for name in installed:
        _legacy_slots.remove_legacy_attribute(name)
    yield from _empty_other_slots(monkeypatch)
    for name in list(_legacy_slots.LEGACY_ATTRIBUTES):
        _legacy_slots.remove_legacy_attribute(name)
    for name, getter in installed.items():
        _legacy_slots.add_legacy_attribute(name, getter)


def _empty_other_slots(monkeypatch):
    monkeypatch.setattr(_legacy_slots, "LEGACY_MODULE_ATTRIBUTES", {})
    for slot in ("DEPRECATED_KWARGS", "ZERO_DIM_INDEX", "LEGACY_FUNCTION", "SCALAR_FIRST"):
        monkeypatch.setattr(_legacy_slots, slot, None)
    yield


class Old(cr.autograd.Function):
    def forward(self, x):
        return x

    def backward(self, g):
        return g


def test_empty_slots_give_the_modern_errors(empty_slots):
    x = cr.ones(2, requires_grad=True)
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'volatile'"):
        x.volatile
    with pytest.raises(AttributeError, match="has no attribute 'FloatTensor'"):
        cr.FloatTensor
    with pytest.raises(TypeError, match="unexpected keyword argument 'retain_variables'"):
        x.sum().backward(retain_variables=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'retain_variables'"):
        cr.autograd.backward(x.sum(), retain_variables=True)
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        cr.tensor(1.0)[0]
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        Old()
    with pytest.raises(TypeError, match="takes 2 positional arguments"):
        cr.ones(2).add_(2, cr.ones(2))


def test_filled_slots_are_reached(empty_slots, monkeypatch):
    calls = []
    _legacy_slots.add_legacy_attribute("volatile", lambda t: "v")
    monkeypatch.setattr(_legacy_slots, "DEPRECATED_KWARGS",
                        lambda api, kw, up: calls.append((api, kw, up)) or {"retain_graph": True})
    monkeypatch.setattr(_legacy_slots, "ZERO_DIM_INDEX", lambda t, key, up: ("item", key, up))
    monkeypatch.setattr(_legacy_slots, "LEGACY_FUNCTION", lambda fn, args: ("call", args))
    monkeypatch.setattr(_legacy_slots, "SCALAR_FIRST", lambda name, args, up: (args[1], args[0]))
    x = cr.ones(2, requires_grad=True)
    y = (x * x).sum()
    monkeypatch.setitem(_legacy_slots.LEGACY_MODULE_ATTRIBUTES, "FloatTensor", "F")
    assert x.volatile == "v" and cr.FloatTensor == "F"
    y.backward(retain_variables=1)
    y.backward()                                          # the graph was retained
    assert calls == [("backward", {"retain_variables": 1}, 3)]
    assert cr.tensor(1.0)[0, 0] == ("item", (0, 0), 2)
    assert Old()(x) == ("call", (x,))
    assert cr.zeros(2).add_(3, cr.ones(2)).tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="only one of retain_graph"):
        (x * 2).sum().backward(retain_graph=True, retain_variables=True)


def test_a_legacy_attribute_never_replaces_a_modern_one(empty_slots):
    with pytest.raises(ValueError, match="already has an attribute 'grad_fn'"):
        _legacy_slots.add_legacy_attribute("grad_fn", lambda t: None)
    assert cr.ones(1).grad_fn is None


def test_tensor_has_no_getattr():
    # Note [legacy attribute slot]: a __getattr__ on Tensor slows every method lookup.
    assert "__getattr__" not in vars(cr.Tensor)
