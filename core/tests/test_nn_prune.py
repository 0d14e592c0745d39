"""nn.utils.prune: the reparametrization (Note [pruning reparametrization]), iterative
pruning, rollback, removal, and the reference's topk tie-breaking (Note [topk ties in
pruning]; expected index sets recorded from the reference)."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.nn.utils import prune
from chainrule.nn.utils._torch_select import topk_index_set


def _layer(values):
    m = cr.nn.Linear(len(values[0]), len(values), bias=False)
    with cr.no_grad():
        m.weight.copy_(cr.tensor(values))
    return m


def test_tied_selection_follows_the_reference():
    x = np.array([1., 0., 1., 0., 1., 0., 1., 2., 0., 1.], np.float32)
    assert sorted(topk_index_set(x, 3, largest=False)) == [1, 5, 8]
    assert sorted(topk_index_set(x, 5, largest=True)) == [0, 2, 4, 6, 7]
    # k * 64 <= n: the heap-select path
    assert sorted(topk_index_set(np.full(200, 3.0), 3, largest=False)) == [0, 1, 2]


def test_untied_selection_is_by_value():
    x = np.array([5., 1., 4., 2.])
    assert sorted(topk_index_set(x, 2, largest=False)) == [1, 3]
    assert topk_index_set(x, 0, largest=True).size == 0


def test_reparametrization_and_hook_recomputes():
    m = prune.l1_unstructured(_layer([[1., -3.], [0.5, 2.]]), "weight", amount=2)
    assert [n for n, _ in m.named_parameters()] == ["weight_orig"]
    assert list(m.state_dict()) == ["weight_orig", "weight_mask"]
    assert m.weight_mask.tolist() == [[0., 1.], [0., 1.]]
    with cr.no_grad():
        m.weight_orig.mul_(2)
    out = m(cr.ones(1, 2))
    assert m.weight.tolist() == [[0., -6.], [0., 4.]]
    out.sum().backward()
    assert m.weight_orig.grad.tolist() == [[0., 1.], [0., 1.]]


def test_second_pruning_acts_on_kept_entries():
    m = prune.l1_unstructured(_layer([[1., 2., 3., 4.]]), "weight", amount=1)
    prune.l1_unstructured(m, "weight", amount=1)
    assert m.weight_mask.tolist() == [[0., 0., 1., 1.]]
    container = next(iter(m._forward_pre_hooks.values()))
    assert isinstance(container, prune.PruningContainer) and len(container) == 2
    assert len(m._forward_pre_hooks) == 1


def test_structured_after_unstructured_skips_empty_channels():
    m = prune.custom_from_mask(_layer([[1., 1.], [5., 5.], [2., 2.]]), "weight",
                               mask=cr.tensor([[1., 1.], [0., 0.], [1., 1.]]))
    prune.ln_structured(m, "weight", amount=1, n=1, dim=0)
    assert m.weight_mask.tolist() == [[0., 0.], [0., 0.], [1., 1.]]


def test_failed_pruning_rolls_back():
    m = _layer([[1., 2.]])
    with pytest.raises(ValueError, match="should be smaller than the number"):
        prune.l1_unstructured(m, "weight", amount=3)
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert not prune.is_pruned(m) and list(m.buffers()) == []


def test_remove_makes_pruning_permanent():
    m = prune.l1_unstructured(_layer([[1., -3.], [0.5, 2.]]), "weight", amount=0.5)
    weight = prune.remove(m, "weight").weight
    assert isinstance(weight, cr.nn.Parameter) and weight.requires_grad
    assert weight.tolist() == [[0., -3.], [0., 2.]]
    assert list(m.state_dict()) == ["weight"] and not prune.is_pruned(m)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(m, "weight")


def test_state_dict_loads_into_pruned_module():
    source = prune.l1_unstructured(_layer([[1., -3.], [0.5, 2.]]), "weight", amount=1)
    target = prune.identity(_layer([[0., 0.], [0., 0.]]), "weight")
    target.load_state_dict(source.state_dict())
    target(cr.ones(1, 2))
    assert target.weight.tolist() == [[1., -3.], [0., 2.]]


@pytest.mark.parametrize("amount,error", [(-1, ValueError), (1.5, ValueError),
                                          ("0.5", TypeError)])
def test_amount_validation(amount, error):
    with pytest.raises(error, match="amount"):
        prune.RandomUnstructured(amount)


def test_float_amount_rounds_and_random_methods_count():
    m = prune.random_unstructured(_layer([[1.] * 5] * 2), "weight", amount=0.25)
    assert int((m.weight_mask == 0).sum()) == 2  # round(2.5) == 2
    m = prune.random_structured(_layer([[1.] * 5] * 3), "weight", amount=0.4, dim=-1)
    assert int((m.weight_mask.sum(0) == 0).sum()) == 2


def test_container_rejects_other_tensors():
    first, second = prune.Identity(), prune.Identity()
    first._tensor_name, second._tensor_name = "weight", "bias"
    with pytest.raises(ValueError, match="acting on the parameter named 'weight'"):
        prune.PruningContainer(first).add_pruning_method(second)
