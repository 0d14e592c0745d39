"""The embedding_bag table op (Note [bags as weighted lookups])."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._ops import embedding_bag as bag_op

IDX, OFFSETS = cr.tensor([1, 2, 4, 5, 4, 3]), cr.tensor([0, 2, 2])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_one_node_listing_the_weight_and_per_sample_weights(mode):
    w = cr.ones(6, 3, requires_grad=True)
    y = F.embedding_bag(IDX, w, OFFSETS, mode=mode)
    assert type(y.grad_fn).__name__ == "EmbeddingBagBackward0"
    assert [type(f).__name__ if f else None for f, _ in y.grad_fn.next_functions] == \
        ["AccumulateGrad", None]


def test_max_gives_the_gradient_to_the_first_lookup_reaching_the_max():
    w = cr.tensor([[1.0, 5.0], [1.0, 2.0], [0.0, 5.0]], requires_grad=True)
    y = F.embedding_bag(cr.tensor([1, 0, 2]), w, cr.tensor([0, 3]), mode="max")
    assert y.tolist() == [[1.0, 5.0], [0.0, 0.0]]                  # the empty bag: zeros
    y.backward(cr.tensor([[10.0, 20.0], [1.0, 1.0]]))
    assert w.grad.tolist() == [[0.0, 20.0], [10.0, 0.0], [0.0, 0.0]]


def test_padding_lookups_leave_their_bag_and_its_mean():
    w = cr.arange(12.0).reshape(6, 2).requires_grad_()
    y = F.embedding_bag(IDX, w, OFFSETS, mode="mean", padding_idx=4)
    assert y[1].tolist() == [0.0, 0.0] and y[2].tolist() == [8.0, 9.0]   # rows 5 and 3
    y.sum().backward()
    assert w.grad[4].tolist() == [0.0, 0.0] and w.grad[5].tolist() == [0.5, 0.5]


def test_segment_reductions_match_scattering(rng):
    rows, ids = rng.standard_normal((7, 2)), np.array([0, 0, 2, 2, 2, 3, 3])
    expected = np.zeros((5, 2))
    np.add.at(expected, ids, rows)
    np.testing.assert_allclose(bag_op._bag_reduce(rows, ids, 5, np.add, 0), expected)


def test_double_backward_works_where_the_reference_has_none(rng):
    w = cr.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    psw = cr.tensor(rng.uniform(0.5, 2, 6), requires_grad=True)
    fn = lambda a, b: F.embedding_bag(IDX, a, OFFSETS, mode="sum", per_sample_weights=b)  # noqa
    assert cr.autograd.gradgradcheck(fn, (w, psw))


def test_max_mode_refuses_frequency_scaling_like_the_reference():
    with pytest.raises(ValueError, match="max mode does not support scaling the gradient"):
        F.embedding_bag(IDX, cr.ones(6, 2), OFFSETS, mode="max", scale_grad_by_freq=True)
