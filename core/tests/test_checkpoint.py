"""chainrule.utils.checkpoint: both variants give the gradients of the plain run,
recompute in backward (once), replay random draws, and refuse/allow autograd.grad as
torch does; checkpoint_sequential."""
import gc
import weakref

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

VARIANTS = [True, False]


class Counted:
    """A function that counts its calls."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


def block(x, w):
    return (x @ w).tanh().sin() * x.sum()


def grads_of(run, x, w):
    x.grad = w.grad = None
    run(x, w).sum().backward()
    return x.grad.numpy().copy(), w.grad.numpy().copy()


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_same_gradients_as_without_checkpoint_and_recomputes_once(reentrant, rng):
    x = cr.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = cr.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    plain = grads_of(block, x, w)
    fn = Counted(block)
    out = checkpoint(fn, x, w, use_reentrant=reentrant)
    assert fn.calls == 1
    x.grad = w.grad = None
    out.sum().backward()
    assert fn.calls == 2
    assert np.allclose(x.grad.numpy(), plain[0]) and np.allclose(w.grad.numpy(), plain[1])


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_module_parameters_get_gradients(reentrant):
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    x = cr.randn(4, 3, requires_grad=True)
    model(x).pow(2).sum().backward()
    expected = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    checkpoint(model, x, use_reentrant=reentrant).pow(2).sum().backward()
    for p, e in zip(model.parameters(), expected):
        assert np.allclose(p.grad.numpy(), e, atol=1e-6)


@pytest.mark.parametrize("reentrant", VARIANTS)
@pytest.mark.parametrize("preserve", [True, False])
def test_rng_state_is_replayed(reentrant, preserve):
    x = cr.ones(200, requires_grad=True)
    masks = []

    def noisy(t):
        out = F.dropout(t, 0.5, training=True)
        masks.append((out != 0).numpy().copy())
        return out * 3

    checkpoint(noisy, x, use_reentrant=reentrant, preserve_rng_state=preserve).sum().backward()
    assert len(masks) == 2
    assert np.array_equal(masks[0], masks[1]) == preserve
    if preserve:
        assert np.array_equal(x.grad.numpy() != 0, masks[0])


def test_reentrant_refuses_autograd_grad_and_inputs():
    x = cr.randn(3, requires_grad=True)
    out = checkpoint(lambda t: t.sin(), x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="When use_reentrant=True, torch.utils.checkpoint is "
                                           "incompatible with .grad\\(\\)"):
        cr.autograd.grad(out.sum(), x)


def test_non_reentrant_supports_grad_inputs_and_kwargs():
    x = cr.randn(3, requires_grad=True, dtype=cr.float64)
    out = checkpoint(lambda t, scale=1.0: t.sin() * scale, x, use_reentrant=False, scale=2.0)
    (g,) = cr.autograd.grad(out.sum(), x)
    assert np.allclose(g.numpy(), 2 * np.cos(x.detach().numpy()))
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda t, scale=1.0: t, x, use_reentrant=True, scale=2.0)


def test_non_reentrant_keeps_no_intermediate():
    x = cr.randn(1000, requires_grad=True)
    kept = []

    def fn(t):
        mid = t.sin()
        kept.append(weakref.ref(mid))
        return mid.exp()

    out = checkpoint(fn, x, use_reentrant=False)
    gc.collect()
    assert kept[0]() is None            # sin's output is not held by the graph
    out.sum().backward()
    assert np.allclose(x.grad.numpy(), np.cos(x.detach().numpy()) *
                       np.exp(np.sin(x.detach().numpy())), rtol=1e-5)


def test_recomputation_mismatch_raises_checkpoint_error():
    x = cr.randn(3, requires_grad=True)
    calls = []

    def fn(t):
        calls.append(1)
        return t.sin().cos() if len(calls) == 1 else t.sin()

    out = checkpoint(fn, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="A different number of tensors was saved"):
        out.sum().backward()


def test_warnings_and_no_input_requires_grad():
    x = cr.randn(2, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda t: t * 2, x)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        checkpoint(lambda t: t * 2, cr.randn(2), use_reentrant=True)


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_checkpoint_sequential(reentrant):
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(5)], nn.Tanh())
    x = cr.randn(3, 4, requires_grad=True)
    model(x).sum().backward()
    expected = x.grad.numpy().copy(), model[0].weight.grad.numpy().copy()
    x.grad = None
    model.zero_grad()
    out = checkpoint_sequential(model, 3, x, use_reentrant=reentrant)
    out.sum().backward()
    assert np.allclose(x.grad.numpy(), expected[0], atol=1e-6)
    assert np.allclose(model[0].weight.grad.numpy(), expected[1], atol=1e-6)


def test_non_reentrant_backward_twice_with_retain_graph():
    x = cr.randn(4, requires_grad=True, dtype=cr.float64)
    fn = Counted(lambda t: t.sin().exp())
    out = checkpoint(fn, x, use_reentrant=False).sum()
    out.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    out.backward()
    assert fn.calls == 3 and np.allclose(x.grad.numpy(), 2 * first)


def test_non_reentrant_inputs_are_saved_through_the_callers_hooks():
    # Note [checkpoint recomputation]: the tensor inputs are packed by the hooks around
    # the call and unpacked for the recomputation (torch 2.13 packs and unpacks both)
    x = cr.randn(3, requires_grad=True)
    w = cr.randn(3)
    log = []
    with cr.autograd.graph.saved_tensors_hooks(
            lambda t: log.append(("pack", t.requires_grad)) or t,
            lambda t: log.append("unpack") or t):
        y = checkpoint(lambda a, b, s: (a.sin() * b * s).sum(), x * 2, w, 3.0,
                       use_reentrant=False)
    y.backward()
    assert log == [("pack", True), ("pack", False), "unpack", "unpack"]
    assert np.allclose(x.grad.numpy(), 6 * np.cos(2 * x.detach().numpy()) * w.numpy())


def test_non_reentrant_input_modified_in_place_is_caught():
    h = cr.randn(3, requires_grad=True) * 2
    y = checkpoint(lambda a: a.sin().sum(), h, use_reentrant=False)
    with cr.no_grad():
        h.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_non_reentrant_under_no_grad_saves_nothing():
    log = []
    with cr.no_grad(), cr.autograd.graph.saved_tensors_hooks(lambda t: log.append(t) or t,
                                                             lambda t: t):
        out = checkpoint(lambda a: a.sin(), cr.ones(2, requires_grad=True), use_reentrant=False)
    assert log == [] and not out.requires_grad
