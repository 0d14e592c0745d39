"""Note [untracked forward-over-reverse] (chainrule_forward_ad/_over_reverse.py): the
gradient's tangent equals the recorded forward-over-reverse, nothing of the backward
is recorded, and the level's dispatcher comes back."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD
from chainrule._ops import _registry
from chainrule_forward_ad import _over_reverse
from chainrule_forward_ad._tangents import CURRENT, dispatch

A = cr.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], dtype=cr.float64)


def f(x):
    return (cr.tanh(A @ x) ** 2).sum() + x.clone().exp_().sum()


def _recorded(x, v):
    """The recorded forward-over-reverse: a create_graph backward run on duals."""
    with fwAD.dual_level():
        d = fwAD.make_dual(x.detach().requires_grad_(), v)
        (g,) = cr.autograd.grad(f(d), d, create_graph=True)
        return g.detach().numpy(), fwAD.unpack_dual(g).tangent.detach().numpy()


def test_the_gradient_and_its_tangent_equal_the_recorded_pass():
    x = cr.tensor([0.3, -0.2, 0.7], dtype=cr.float64)
    v = cr.tensor([1.0, 0.5, -2.0], dtype=cr.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        assert _over_reverse.applies([d])
        with _over_reverse.tangents_untracked():
            leaf = d.view_as(d).requires_grad_()
            out = f(leaf)
        (g,) = _over_reverse.gradient_with_tangents(out, [leaf])
        assert g.grad_fn is None and not g.requires_grad       # nothing recorded
        got = g.numpy(), CURRENT[0].get(g).numpy()
    for a, b in zip(got, _recorded(x, v)):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_applies_only_where_nothing_else_differentiates():
    x = cr.ones(2, dtype=cr.float64)
    assert not _over_reverse.applies([x])                      # no level
    with fwAD.dual_level():
        assert not _over_reverse.applies([x.requires_grad_()])
        d = fwAD.make_dual(cr.ones(2, dtype=cr.float64),
                           cr.ones(2, dtype=cr.float64, requires_grad=True))
        assert not _over_reverse.applies([d])                 # a differentiable tangent
        with _registry.add_dispatcher(lambda run, *a: run(*a)):
            assert not _over_reverse.applies([cr.ones(2)])   # another dispatcher


def test_the_level_gets_its_dispatcher_back_also_after_an_error():
    with fwAD.dual_level():
        with pytest.raises(ValueError):
            with _over_reverse.tangents_untracked():
                assert list(_registry._DISPATCHERS.values()) == \
                    [_over_reverse.recording_dispatch]
                raise ValueError
        assert list(_registry._DISPATCHERS.values()) == [dispatch]
    assert not _registry._DISPATCHERS
