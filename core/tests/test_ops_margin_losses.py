"""The margin-loss table ops (Note [margin losses by their direction])."""
import pytest

import chainrule as cr
import chainrule.nn.functional as F

X = cr.tensor([[0.1, 0.2, 0.4, 0.8], [0.5, -0.3, 0.9, 0.0]], requires_grad=True)


@pytest.mark.parametrize("call,node", [
    (lambda: F.soft_margin_loss(X, cr.ones(2, 4)), "SoftMarginLossBackward0"),
    (lambda: F.multilabel_margin_loss(X, cr.tensor([[3, 0, -1, 1], [2, -1, 0, 0]])),
     "MultilabelMarginLossBackward0"),
    (lambda: F.multi_margin_loss(X, cr.tensor([3, 2]), p=2), "MultiMarginLossBackward0"),
])
def test_one_node_over_the_input(call, node):
    y = call()
    assert type(y.grad_fn).__name__ == node
    assert [type(f).__name__ for f, _ in y.grad_fn.next_functions] == ["AccumulateGrad"]


def test_multilabel_margin_gradient_pairs_targets_with_non_targets():
    x = cr.tensor([0.1, 0.2, 0.4, 0.8], requires_grad=True)
    loss = F.multilabel_margin_loss(x, cr.tensor([3, 0, -1, 1]))   # targets 3 and 0
    assert loss.item() == pytest.approx(0.85)
    loss.backward()             # each of the 4 active (target, non-target) pairs: -/+ 1/4
    assert x.grad.tolist() == pytest.approx([-0.5, 0.5, 0.5, -0.5])


def test_multi_margin_p2_second_derivative_is_not_zero():
    x = cr.tensor([[0.1, 0.2, 0.4]], dtype=cr.float64, requires_grad=True)
    g, = cr.autograd.grad(F.multi_margin_loss(x, cr.tensor([2]), p=2), x, create_graph=True)
    assert cr.autograd.gradcheck(lambda a: F.multi_margin_loss(a, cr.tensor([2]), p=2), (x,))
    assert cr.autograd.grad(g[0, 0], x)[0][0].tolist() == pytest.approx([2 / 3, 0.0, -2 / 3])


@pytest.mark.parametrize("call,name,argument", [
    (lambda: F.soft_margin_loss(X, cr.ones(2, 4, requires_grad=True)), "soft_margin_loss",
     "target"),
    (lambda: F.multi_margin_loss(X, cr.tensor([3, 2]), weight=cr.ones(4, requires_grad=True)),
     "multi_margin_loss", "weight"),
])
def test_a_target_or_weight_requiring_grad_is_refused(call, name, argument):
    with pytest.raises(RuntimeError, match=f"The function '{name}' is not differentiable with "
                                           f"respect to argument '{argument}'"):
        call()
