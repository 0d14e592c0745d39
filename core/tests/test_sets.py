"""_ops/sets.py: unique, unique_consecutive, bincount, bucketize, searchsorted, isin,
mode (values against NumPy's definitions; torch parity in tests/programs)."""
import numpy as np
import pytest

import chainrule as cr


def test_unique_and_its_extras():
    x = cr.tensor([3.0, 1.0, 3.0, 2.0], requires_grad=True)
    values, inverse, counts = cr.unique(x, return_inverse=True, return_counts=True)
    assert values.tolist() == [1.0, 2.0, 3.0] and not values.requires_grad
    assert inverse.tolist() == [2, 0, 2, 1] and counts.tolist() == [1, 1, 2]
    rows, inv = cr.tensor([[1, 2], [1, 2], [0, 1]]).unique(dim=0, return_inverse=True)
    assert rows.tolist() == [[0, 1], [1, 2]] and inv.tolist() == [1, 1, 0]
    assert cr.unique(cr.tensor([[2, 1], [2, 5]])).tolist() == [1, 2, 5]


def test_unique_consecutive():
    v, inv, c = cr.unique_consecutive(cr.tensor([1, 1, 2, 2, 3, 1, 1]), return_inverse=True,
                                      return_counts=True)
    assert (v.tolist(), inv.tolist(), c.tolist()) == ([1, 2, 3, 1], [0, 0, 1, 1, 2, 3, 3],
                                                      [2, 2, 1, 2])
    rows, c = cr.unique_consecutive(cr.tensor([[1, 1], [1, 1], [2, 3]]), dim=0,
                                    return_counts=True)
    assert rows.tolist() == [[1, 1], [2, 3]] and c.tolist() == [2, 1]


def test_bincount():
    assert cr.bincount(cr.tensor([0, 1, 1, 3])).tolist() == [1, 2, 0, 1]
    w = cr.bincount(cr.tensor([0, 1, 1]), weights=cr.tensor([0.5, 1.0, 2.0]), minlength=4)
    assert w.tolist() == [0.5, 3.0, 0.0, 0.0] and w.dtype == cr.float32
    assert cr.bincount(cr.tensor([], dtype=cr.int64)).shape == (0,)
    for bad in (cr.tensor([-1]), cr.tensor([[1]])):
        with pytest.raises(RuntimeError, match="1-d non-negative integral"):
            cr.bincount(bad)
    with pytest.raises(NotImplementedError, match="\"bincount_cpu\" not implemented for 'Float'"):
        cr.bincount(cr.tensor([1.0]))


def test_searchsorted_and_bucketize():
    b = cr.tensor([1, 3, 5, 7, 9])
    assert cr.searchsorted(b, cr.tensor([3, 6, 9])).tolist() == [1, 3, 4]
    assert cr.searchsorted(b, cr.tensor([3, 6, 9]), side="right").tolist() == [2, 3, 5]
    assert cr.searchsorted(b, cr.tensor([3]), out_int32=True).dtype == cr.int32
    rows = cr.searchsorted(cr.tensor([[1, 3, 5], [2, 4, 6]]), cr.tensor([[3], [5]]), right=True)
    assert rows.tolist() == [[2], [2]]
    unsorted = cr.tensor([5, 1, 3])
    assert cr.searchsorted(unsorted, cr.tensor([2, 4]), sorter=unsorted.argsort()).tolist() \
        == [1, 2]
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        cr.searchsorted(b, cr.tensor([1]), right=True, side="left")
    assert cr.bucketize(cr.tensor([1, 5, 9]), b).tolist() == [0, 2, 4]
    with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
        cr.bucketize(cr.tensor([1]), cr.ones(2, 2))


def test_isin():
    assert cr.isin(cr.tensor([1, 2, 3, 4]), cr.tensor([2, 4])).tolist() == [False, True,
                                                                              False, True]
    assert cr.isin(cr.tensor([1, 2]), 2, invert=True).tolist() == [True, False]


def test_mode_values_indices_and_gradient():
    x = cr.tensor([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 1.0]], dtype=cr.float64,
                  requires_grad=True)
    values, indices = cr.mode(x, dim=1)
    assert values.tolist() == [2.0, 1.0] and indices.tolist() == [2, 3]
    values.sum().backward()
    assert x.grad.tolist() == [[0, 0, 1, 0], [0, 0, 0, 1]]
    kept = x.detach().mode(0, keepdim=True)
    assert kept.values.shape == (1, 4) and kept.indices.tolist() == [[0, 0, 1, 1]]
    scalar = cr.mode(cr.tensor(3.0))
    assert scalar.values.item() == 3.0 and scalar.indices.shape == ()
    assert cr.autograd.gradcheck(lambda t: cr.mode(t, 0).values,
                                 (cr.tensor(np.random.default_rng(0).random((5, 3)),
                                            requires_grad=True),))
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        cr.mode(cr.ones(0))


def test_under_vmap_they_run_per_entry():
    out = cr.vmap(lambda r: cr.bincount(r, minlength=4))(cr.tensor([[0, 1, 1], [3, 3, 2]]))
    assert out.tolist() == [[1, 2, 0, 0], [0, 0, 1, 2]]


def test_searchsorted_and_bucketize_write_their_out_tensor():
    out = cr.full((3,), 7, dtype=cr.int64)
    assert cr.searchsorted(cr.tensor([1., 2., 3.]), cr.tensor([2.5, 0., 9.]), out=out) is out
    assert out.tolist() == [2, 0, 3]
    assert cr.bucketize(cr.tensor([0., 9., 2.5]), cr.tensor([1., 2., 3.]), out=out) is out
    assert out.tolist() == [0, 3, 2]
