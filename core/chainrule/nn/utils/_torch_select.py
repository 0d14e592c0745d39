"""Which ``k`` entries the reference's CPU ``topk`` picks from a 1-D array when values
tie at the boundary.

Note [topk ties in pruning]: the reference's CPU topk selects with the C++ standard
library's ``nth_element`` (introselect) or, for ``k * 64 <= n``, ``partial_sort``
(heap select) over (value, index) pairs compared by value only, so among equal values
the chosen indices follow those algorithms, not index order. Pruning masks depend on
exactly that set (``l1_unstructured`` on a weight with repeated magnitudes), so this
module replays the two algorithms step for step (Note [ties on the CPU]) when a tie
straddles the boundary; when none does, the set is decided by the values alone and
numpy picks it.
"""
import numpy as np

from ..._ops import _cpu_select


def topk_index_set(values, k, largest):
    """Indices (an int64 array, unordered) of the ``k`` entries of the 1-D ``values``
    the reference's ``topk(values, k, largest=largest)`` returns."""
    values = np.asarray(values)
    n = values.size
    if k == 0:
        return np.zeros(0, np.int64)
    if not np.isnan(values).any():
        order = np.argsort(-values if largest else values, kind="stable")
        boundary = values[order[k - 1]]
        if k == n or values[order[k]] != boundary:
            return order[:k].astype(np.int64)
    ranks, _ = _cpu_select.dense_ranks(values.reshape(1, -1))     # Note [ties on the CPU]
    return np.array(_cpu_select.topk_row(ranks[0], k, largest, sorted=False), np.int64)
