"""nn.utils.stateless.functional_call (Note [reparametrized call]): the module runs with
the given tensors and is left exactly as it was, also after an error."""
import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn.utils.stateless import _functional_call as functional_call


def linear():
    layer = nn.Linear(2, 1)
    with cr.no_grad():
        layer.weight.copy_(cr.tensor([[1.0, 2.0]]))
        layer.bias.fill_(0.5)
    return layer


def test_deprecated_alias_warns_and_calls():
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        out = nn.utils.stateless.functional_call(linear(), {"bias": cr.zeros(1)},
                                                 cr.tensor([[1.0, 1.0]]))
    assert out.tolist() == [[3.0]]


def test_given_tensors_are_recorded_and_the_module_is_restored():
    layer, w = linear(), cr.tensor([[3.0, -1.0]], requires_grad=True)
    out = functional_call(layer, {"weight": w}, (cr.tensor([[1.0, 2.0]]),))
    out.sum().backward()
    assert out.tolist() == [[1.5]] and w.grad.tolist() == [[1.0, 2.0]]
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.tolist() == [[1.0, 2.0]]
    assert layer.weight.grad is None


def test_restored_after_the_forward_raises():
    layer = linear()
    with pytest.raises(RuntimeError):
        functional_call(layer, {"weight": cr.zeros(1, 3), "extra": cr.ones(1)},
                        (cr.ones(1, 2),))
    assert layer.weight.shape == (1, 2) and not hasattr(layer, "extra")


def test_unknown_names_are_attributes_for_the_call_only():
    class UsesScale(nn.Module):
        def forward(self, x):
            return x * self.scale
    m = UsesScale()
    assert functional_call(m, {"scale": cr.tensor(3.0)}, cr.ones(2)).tolist() == [3.0, 3.0]
    assert not hasattr(m, "scale")


def test_buffers_given_are_updated_in_place_by_the_module():
    bn, running = nn.BatchNorm1d(2), cr.zeros(2)
    x = cr.tensor([[1.0, 2.0], [3.0, 6.0]])
    functional_call(bn, {"running_mean": running}, (x,))
    np.testing.assert_allclose(running.numpy(), [0.2, 0.4])
    assert bn.running_mean.tolist() == [0.0, 0.0]


def test_nested_names_kwargs_and_tied_weights():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Sequential(linear())
            self.alias = self.inner[0]

        def forward(self, x, scale=1.0):
            return self.inner(x) * scale + self.alias(x)
    m, w = Tied(), cr.tensor([[0.0, 1.0]])
    out = functional_call(m, {"inner.0.weight": w}, (cr.ones(1, 2),), {"scale": 2.0})
    assert out.tolist() == [[4.5]]           # both names see w: (1 + .5) * 2 + 1.5
    with pytest.raises(ValueError, match="which are tied"):
        functional_call(m, {"inner.0.weight": w, "alias.weight": w * 2}, cr.ones(1, 2))
    assert m.inner[0].weight.tolist() == [[1.0, 2.0]]


def test_strict_and_argument_errors():
    layer = linear()
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'foo'.\n\tMissing key"):
        functional_call(layer, {"weight": cr.ones(1, 2), "foo": cr.ones(1)}, cr.ones(1, 2),
                        strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(layer, ({"bias": cr.ones(1)}, {"bias": cr.ones(1)}), cr.ones(1, 2))
    with pytest.raises(ValueError, match="list/tuple of dicts"):
        functional_call(layer, [cr.ones(1)], cr.ones(1, 2))
    with pytest.raises(TypeError, match="expected a Tensor for 'bias'"):
        functional_call(layer, {"bias": 1.0}, cr.ones(1, 2))
