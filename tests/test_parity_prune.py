"""Parity tier for ``nn.utils.prune`` against PyTorch (skips without torch): the same
scenario runs on both libraries (deterministic weights, many tied magnitudes, so the
tie-breaking of Note [topk ties in pruning] is exercised); masks, pruned values,
gradients, state_dict keys, hook bookkeeping and errors must agree."""
import importlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402

LIBS = {"torch": torch, "cr": cr}


def _prune(lib):
    return importlib.import_module(f"{lib.__name__}.nn.utils.prune")


def _linear(lib, n_in, n_out, modulus=5):
    """A Linear layer with small integer weights (many ties in magnitude)."""
    m = lib.nn.Linear(n_in, n_out)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(_tied(n_out * n_in, modulus).reshape(n_out, n_in)))
        m.bias.copy_(lib.tensor(_tied(n_out, modulus)))
    return m


def _tied(n, modulus):
    return (((np.arange(n) * 7) % (2 * modulus + 1)) - modulus).astype(np.float32)


def _conv(lib):
    m = lib.nn.Conv2d(3, 4, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(_tied(48, 3).reshape(4, 3, 2, 2)))
    return m


def _both(scenario):
    """Run ``scenario(lib, prune)`` on both libraries; return the two results."""
    return [scenario(lib, _prune(lib)) for lib in (torch, cr)]


def _np(x):
    if isinstance(x, (list, tuple)):
        return [_np(v) for v in x]
    return x.detach().numpy() if hasattr(x, "detach") else x


def _assert_same(scenario):
    expected, got = _both(scenario)
    for e, g in zip(_np(expected), _np(got)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


@pytest.mark.parametrize("amount", [0, 1, 7, 0.3, 0.5, 1.0, 40])
def test_l1_unstructured_masks_match_with_ties(amount):
    def scenario(lib, prune):
        m = prune.l1_unstructured(_linear(lib, 8, 5), "weight", amount=amount)
        return [m.weight_mask, m.weight]
    _assert_same(scenario)


@pytest.mark.parametrize("n,dim,amount", [(1, 0, 2), (2, 1, 0.5), (float("inf"), -1, 1),
                                          (float("-inf"), 0, 0.25), (1, 1, 3)])
def test_ln_structured_masks_match_with_ties(n, dim, amount):
    def scenario(lib, prune):
        m = prune.ln_structured(_conv(lib), "weight", amount=amount, n=n, dim=dim)
        return [m.weight_mask, m.weight]
    _assert_same(scenario)


def test_iterative_pruning_combines_on_unpruned_entries():
    def scenario(lib, prune):
        m = _conv(lib)
        prune.l1_unstructured(m, "weight", amount=0.3)
        prune.ln_structured(m, "weight", amount=1, n=2, dim=0)
        prune.l1_unstructured(m, "weight", amount=5)
        prune.ln_structured(m, "weight", amount=1, n=1, dim=1)
        hooks = list(m._forward_pre_hooks.values())
        names = [type(h).__name__ for h in hooks[0]]
        return [m.weight_mask, m.weight, len(hooks), names, list(m.state_dict())]
    _assert_same(scenario)


def test_forward_backward_through_pruned_weights():
    def scenario(lib, prune):
        m = prune.l1_unstructured(_linear(lib, 6, 4), "weight", amount=0.5)
        prune.l1_unstructured(m, "bias", amount=1)
        x = lib.tensor(_tied(12, 4).reshape(2, 6))
        out = m(x)
        (out * out).sum().backward()
        return [out, m.weight_orig.grad, m.bias_orig.grad,
                [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()]]
    _assert_same(scenario)


def test_importance_scores_and_remove():
    def scenario(lib, prune):
        m = _linear(lib, 4, 3)
        scores = lib.tensor(_tied(12, 2).reshape(3, 4)) * 3 + 1
        prune.l1_unstructured(m, "weight", amount=4, importance_scores=scores)
        prune.ln_structured(m, "weight", amount=1, n=2, dim=0, importance_scores=scores)
        mask = m.weight_mask.clone()
        prune.remove(m, "weight")
        return [mask, m.weight, list(m.state_dict()), prune.is_pruned(m),
                type(m.weight).__name__, m.weight.requires_grad]
    _assert_same(scenario)


def test_global_unstructured_and_custom_from_mask():
    def scenario(lib, prune):
        a, b = _linear(lib, 5, 3), _linear(lib, 3, 4, modulus=2)
        prune.custom_from_mask(a, "bias", mask=lib.tensor([1.0, 0.0, 1.0]))
        prune.l1_unstructured(b, "weight", amount=2)
        params = [(a, "weight"), (a, "bias"), (b, "weight")]
        prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=0.4)
        return [a.weight_mask, a.bias_mask, b.weight_mask, a.weight, b.weight]
    _assert_same(scenario)


def test_identity_prune_method_and_random_counts():
    def scenario(lib, prune):
        m = prune.identity(_linear(lib, 4, 2), "weight")
        prune.random_unstructured(m, "weight", amount=3)
        other = prune.random_structured(_linear(lib, 4, 2), "weight", amount=1, dim=1)
        kept_cols = int((other.weight_mask.sum(0) != 0).sum())
        t = lib.tensor([[1.0, -2.0], [0.5, 4.0]])
        pruned = prune.L1Unstructured(amount=1).prune(t)
        return [int(m.weight_mask.sum()), kept_cols, pruned, prune.is_pruned(m)]
    _assert_same(scenario)


def _error(lib, call):
    with pytest.raises(Exception) as info:
        call(_prune(lib))
    return type(info.value).__name__, str(info.value).replace("chainrule", "torch")


@pytest.mark.parametrize("call", [
    lambda prune: prune.L1Unstructured(amount=-1),
    lambda prune: prune.L1Unstructured(amount=1.5),
    lambda prune: prune.L1Unstructured(amount="a"),
    lambda prune: prune.L1Unstructured(amount=9).prune(torch.ones(3)
                                                       if prune.__name__.startswith("torch")
                                                       else cr.ones(3)),
    lambda prune: prune.LnStructured(amount=1, n=2).prune(
        (torch if prune.__name__.startswith("torch") else cr).ones(3)),
    lambda prune: prune.LnStructured(amount=1, n=2, dim=2).prune(
        (torch if prune.__name__.startswith("torch") else cr).ones(3, 2)),
    lambda prune: prune.global_unstructured(
        [(_linear(torch if prune.__name__.startswith("torch") else cr, 2, 2), "weight")],
        pruning_method=prune.LnStructured, amount=1, n=1),
    lambda prune: prune.global_unstructured(3, pruning_method=prune.L1Unstructured),
    lambda prune: prune.global_unstructured([], prune.L1Unstructured, importance_scores=[1]),
])
def test_errors_match(call):
    assert _error(cr, call) == _error(torch, call)


def test_remove_unpruned_and_container_errors_match():
    def messages(lib):
        prune = _prune(lib)
        m = _linear(lib, 2, 2)
        with pytest.raises(ValueError) as unpruned:
            prune.remove(m, "weight")
        method = prune.L1Unstructured(amount=1)
        method._tensor_name = "bias"
        container = prune.PruningContainer(method)
        other = prune.L1Unstructured(amount=1)
        other._tensor_name = "weight"
        with pytest.raises(ValueError) as wrong_name:
            container.add_pruning_method(other)
        with pytest.raises(TypeError) as not_method:
            container.add_pruning_method(3)
        return [str(e.value).replace(lib.__name__, "LIB").split(" PruningContainer")[0]
                for e in (unpruned, wrong_name, not_method)]
    assert messages(cr)[0] == messages(torch)[0]
    assert messages(cr)[1:] == messages(torch)[1:]
