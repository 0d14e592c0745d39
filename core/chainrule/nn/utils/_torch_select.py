"""Which ``k`` entries the reference's CPU ``topk`` picks from a 1-D array when values
tie at the boundary.

Note [topk ties in pruning]: the reference's CPU topk selects with the C++ standard
library's ``nth_element`` (introselect) or, for ``k * 64 <= n``, ``partial_sort``
(heap select) over (value, index) pairs compared by value only, so among equal values
the chosen indices follow those algorithms, not index order. Pruning masks depend on
exactly that set (``l1_unstructured`` on a weight with repeated magnitudes), so this
module replays the two algorithms step for step when a tie straddles the boundary; when
none does, the set is decided by the values alone and numpy picks it.
"""
import math

import numpy as np


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
    return np.array([i for _, i in _replay(values.tolist(), k, largest)], np.int64)


def _less_for(largest):
    if largest:
        return lambda x, y: (math.isnan(x[0]) and not math.isnan(y[0])) or x[0] > y[0]
    return lambda x, y: (not math.isnan(x[0]) and math.isnan(y[0])) or x[0] < y[0]


def _replay(values, k, largest):
    queue = [(v, i) for i, v in enumerate(values)]
    less = _less_for(largest)
    n = len(queue)
    if k * 64 <= n:
        _heap_select(queue, 0, k, n, less)
    elif k < n:
        _introselect(queue, 0, k - 1, n, 2 * (n.bit_length() - 1), less)
    return queue[:k]


def _introselect(q, first, nth, last, depth, less):
    while last - first > 3:
        if depth == 0:
            _heap_select(q, first, nth + 1, last, less)
            q[first], q[nth] = q[nth], q[first]
            return
        depth -= 1
        cut = _partition_pivot(q, first, last, less)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(q, first, last, less)


def _partition_pivot(q, first, last, less):
    mid = first + (last - first) // 2
    _median_to_first(q, first, first + 1, mid, last - 1, less)
    lo, hi = first + 1, last
    while True:
        while less(q[lo], q[first]):
            lo += 1
        hi -= 1
        while less(q[first], q[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        q[lo], q[hi] = q[hi], q[lo]
        lo += 1


def _median_to_first(q, result, a, b, c, less):
    if less(q[a], q[b]):
        pick = b if less(q[b], q[c]) else (c if less(q[a], q[c]) else a)
    else:
        pick = a if less(q[a], q[c]) else (c if less(q[b], q[c]) else b)
    q[result], q[pick] = q[pick], q[result]


def _insertion_sort(q, first, last, less):
    for i in range(first + 1, last):
        val = q[i]
        if less(val, q[first]):
            q[first + 1:i + 1] = q[first:i]
            q[first] = val
            continue
        j = i
        while less(val, q[j - 1]):
            q[j] = q[j - 1]
            j -= 1
        q[j] = val


def _heap_select(q, first, middle, last, less):
    length = middle - first
    if length >= 2:
        for parent in range((length - 2) // 2, -1, -1):
            _adjust_heap(q, first, parent, length, q[first + parent], less)
    for i in range(middle, last):
        if less(q[i], q[first]):
            value = q[i]
            q[i] = q[first]
            _adjust_heap(q, first, 0, length, value, less)


def _adjust_heap(q, base, hole, length, value, less):
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(q[base + child], q[base + child - 1]):
            child -= 1
        q[base + hole] = q[base + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        q[base + hole] = q[base + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(q[base + parent], value):
        q[base + hole] = q[base + parent]
        hole = parent
        parent = (hole - 1) // 2
    q[base + hole] = value
