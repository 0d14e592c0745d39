"""The pdist table op (Note [pdist pairs])."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._ops import distance


def test_one_pdist_node_over_the_input():
    x = cr.ones(4, 3, requires_grad=True)
    y = F.pdist(x)
    assert type(y.grad_fn).__name__ == "PdistBackward0"
    assert [type(f).__name__ for f, _ in y.grad_fn.next_functions] == ["AccumulateGrad"]


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_segment_sums_equal_scattering_each_pair(n, rng):
    part = rng.standard_normal((2, n * (n - 1) // 2, 3))
    i, j = np.triu_indices(n, 1)
    expected = np.zeros((2, n, 3))
    np.add.at(expected, (slice(None), i), part)
    np.add.at(expected, (slice(None), j), -part)
    np.testing.assert_allclose(distance._segment_sums(part, n), expected, atol=1e-12)


def test_inf_norm_ties_each_get_the_whole_gradient():
    x = cr.tensor([[0.0, 0.0], [1.0, -1.0]], requires_grad=True)
    F.pdist(x, float("inf")).backward()
    assert x.grad.tolist() == [[-1.0, 1.0], [1.0, -1.0]]


def test_double_backward_works_where_the_reference_has_none(rng):
    x = cr.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    assert cr.autograd.gradgradcheck(lambda a: F.pdist(a, 1.5), (x,))


@pytest.mark.parametrize("call,error,match", [
    (lambda: F.pdist(cr.ones(3)), RuntimeError, "pdist only supports 2D tensors, got: 1D"),
    (lambda: F.pdist(cr.ones(3, 2, dtype=cr.int64)), RuntimeError,
     "pdist only supports floating-point dtypes"),
    (lambda: F.pdist(cr.ones(3, 2), -1), RuntimeError, "pdist only supports non-negative p"),
    (lambda: F.pdist(cr.ones(3, 2, dtype=cr.float16)), NotImplementedError,
     "\"pdist\" not implemented for 'Half'"),
])
def test_the_reference_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
