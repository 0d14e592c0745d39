"""Argument checks and writes of the index ops (_ops/indexing.py) at their edges; the
table-generated tests cover their values and gradients."""
import pytest

import chainrule as cr


def test_index_ops_into_a_0d_self_check_and_write_as_the_reference():
    s = cr.tensor(1.0)
    # index_add: the source must be 0-d too
    for source in (cr.tensor([5.0]), cr.tensor([5.0, 6.0])):
        with pytest.raises(RuntimeError, match=r"Got self.shape = \[\] source.shape = \["):
            s.index_add(0, cr.zeros(source.numel(), dtype=cr.int64), source)
    assert s.index_add(0, cr.tensor([0]), cr.tensor(5.0)).item() == 6.0
    # index_copy with repeated index 0: the last write stays
    assert s.index_copy(0, cr.tensor([0, 0]), cr.tensor([5.0, 6.0])).item() == 6.0
    # scatter/scatter_add: a 0-d src counts as one element
    for scatter in (s.scatter, s.scatter_add, cr.zeros(1).scatter):
        with pytest.raises(RuntimeError, match=r"Expected index \[2\] to be no larger than self "
                                               r"\[1?\] apart from dimension 0 and to be no "
                                               r"larger size than src \[\]"):
            scatter(0, cr.tensor([0, 0]), cr.tensor(5.0))
    assert s.scatter_add(0, cr.tensor(0), cr.tensor(5.0)).item() == 6.0
    assert s.scatter(0, cr.tensor([0, 0]), cr.tensor([5.0, 6.0])).item() in (5.0, 6.0)
