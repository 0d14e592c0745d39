"""Ties: the reference's CPU indices (chainrule/_ops/_cpu_select.py, Note [ties on the
CPU]). The expected lists are what torch 2.13 returns on the CPU."""
import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import _cpu_select

ALTERNATING = cr.tensor([1., 0.] * 10)
SMALL = cr.tensor([2., 2., 1., 2., 1.])


def test_sort_of_more_than_sixteen_ties_is_gccs_introsort():
    assert cr.sort(ALTERNATING).indices.tolist() == \
        [1, 19, 17, 15, 13, 11, 9, 7, 5, 3, 8, 6, 10, 12, 4, 14, 16, 2, 18, 0]
    assert cr.argsort(ALTERNATING, descending=True).tolist() == \
        [0, 2, 18, 4, 6, 16, 8, 10, 14, 12, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1]
    stable = cr.sort(ALTERNATING, stable=True).indices.tolist()
    assert stable == list(range(1, 20, 2)) + list(range(0, 20, 2))


def test_topk_kthvalue_and_mode_pick_the_references_indices():
    assert cr.topk(ALTERNATING, 3).indices.tolist() == [10, 16, 8]
    assert cr.topk(ALTERNATING, 3, largest=False, sorted=False).indices.tolist() == [11, 13, 15]
    assert cr.kthvalue(ALTERNATING, 10).indices.item() == 5
    assert cr.mode(ALTERNATING).indices.item() == 3
    assert cr.topk(SMALL, 5).indices.tolist() == [1, 0, 3, 4, 2]
    assert cr.kthvalue(SMALL, 3).indices.item() == 3 and cr.mode(SMALL).indices.item() == 3


def test_rows_without_ties_and_large_inputs_keep_numpys_order():
    x = cr.tensor([[3., 1., 2.], [1., 1., 0.]])
    assert cr.sort(x).indices.tolist() == [[1, 2, 0], [2, 0, 1]]
    big = np.zeros(_cpu_select.EMULATION_LIMIT + 1, np.float32)
    assert cr.sort(cr.tensor(big)).indices[:3].tolist() == [0, 1, 2]


def test_dense_ranks_put_nan_above_everything():
    ranks, tied = _cpu_select.dense_ranks(np.array([[2., np.nan, 1., np.nan], [3., 2., 1., 0.]]))
    assert ranks.tolist() == [[1, 2, 0, 2], [3, 2, 1, 0]] and tied.tolist() == [True, False]


@pytest.mark.parametrize("n", [2, 17, 100, 1000])
def test_the_algorithms_sort_and_select(n):
    keys = np.random.default_rng(n).integers(0, 5, n)
    v = [(int(k), i) for i, k in enumerate(keys)]
    _cpu_select.std_sort(v, 0, n)
    assert [k for k, _ in v] == sorted(keys.tolist()) and sorted(i for _, i in v) == list(range(n))
    w = [(int(k), i) for i, k in enumerate(keys)]
    _cpu_select.partial_sort(w, 0, n // 2, n)
    assert [k for k, _ in w[:n // 2]] == sorted(keys.tolist())[:n // 2]
    for select in (lambda u, m: _cpu_select.nth_element(u, 0, m, n), _cpu_select.quick_select):
        u = [(int(k), i) for i, k in enumerate(keys)]
        select(u, n // 3)
        assert u[n // 3][0] == sorted(keys.tolist())[n // 3]
