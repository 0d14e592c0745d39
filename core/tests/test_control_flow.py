"""cond and while_loop in eager mode (_ops/control_flow.py): the branch or iterations
that run are recorded like any Python code. (Against torch: tests/test_parity_aten_surface.py.)"""
import pytest

import chainrule as cr


def test_cond_runs_one_branch_and_records_it():
    x = cr.ones(2, requires_grad=True)
    out = cr.cond(cr.tensor(1.0) > 0, lambda a: a * 3, lambda a: a - 1, (x,))
    out.sum().backward()
    assert out.tolist() == [3.0, 3.0] and x.grad.tolist() == [3.0, 3.0]
    assert cr.cond(False, lambda: 1, lambda: 2) == 2


@pytest.mark.parametrize("pred, message", [
    (cr.tensor([True, False]), "Expected pred to be bool or single-element tensor"),
    ("x", "Expected pred to be bool or tensor, but got x.")])
def test_cond_refuses_predicates(pred, message):
    with pytest.raises(RuntimeError, match=message):
        cr.cond(pred, lambda: 1, lambda: 2)


def test_while_loop_carries_values_as_the_body_returns_them():
    assert cr.while_loop(lambda a: a.sum() < 10, lambda a: [a * 2], [cr.ones(2)])[0].tolist() \
        == [8.0, 8.0]
    out = cr.while_loop(lambda a: a.sum() < 10, lambda a: a * 2, (cr.ones(2),))
    assert out.tolist() == [8.0, 8.0]
    i, x = cr.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a.exp()), (0, cr.zeros(1)))
    assert i == 2 and x.item() == pytest.approx(2.718281828)
