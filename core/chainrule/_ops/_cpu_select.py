"""Which index wins a tie: the reference's CPU sort, topk, kthvalue and mode, step by
step (Note [ties on the CPU]).

Note [ties on the CPU]
    Among equal elements the reference's CPU kernels return whichever index their
    algorithm leaves in place, deterministically: sort (not stable) and mode run the C++
    library's std::sort (GCC's introsort: median-of-three quicksort down to runs of 16,
    heapsort past a depth of 2 log2 n, then insertion sort), topk its std::partial_sort
    (when k * 64 <= n) or std::nth_element followed by std::sort of the first k - 1,
    and kthvalue its own median-of-three quickselect. Here those algorithms run on the
    elements' dense ranks (NaN the largest, all NaNs equal), one row at a time, in
    Python: only for rows that hold ties (elsewhere any algorithm gives the same
    answer) and up to EMULATION_LIMIT elements per call (larger inputs keep NumPy's
    stable order).
"""
import numpy as np

EMULATION_LIMIT = 1 << 14
_THRESHOLD = 16                      # std::sort's insertion-sort runs


def dense_ranks(rows):
    """Per row of the 2-D ``rows``: each element's rank among the row's distinct
    values (NaN above every number; NaNs equal), and whether the row has ties."""
    order = np.argsort(rows, axis=1, kind="stable")
    ordered = np.take_along_axis(rows, order, 1)
    same = ordered[:, 1:] == ordered[:, :-1]
    if ordered.dtype.kind in "fc":
        same |= np.isnan(ordered[:, 1:]) & np.isnan(ordered[:, :-1])
    step = np.concatenate([np.zeros((len(rows), 1), np.int64), (~same).astype(np.int64)], 1)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.cumsum(step, axis=1), 1)
    return ranks, same.any(axis=1)


def emulated(rows):
    """Whether the rows are small enough to emulate (Note [ties on the CPU])."""
    return rows.size <= EMULATION_LIMIT


# --- GCC's algorithms on a list of (key, index) pairs, ordered by key ------------------
def _lg(n):
    return n.bit_length() - 1


def std_sort(v, first, last):
    if last - first > 1:
        _introsort_loop(v, first, last, 2 * _lg(last - first))
        _final_insertion_sort(v, first, last)


def _introsort_loop(v, first, last, depth):
    while last - first > _THRESHOLD:
        if depth == 0:
            partial_sort(v, first, last, last)
            return
        depth -= 1
        cut = _partition_pivot(v, first, last)
        _introsort_loop(v, cut, last, depth)
        last = cut


def _partition_pivot(v, first, last):
    mid = first + (last - first) // 2
    _move_median_to_first(v, first, first + 1, mid, last - 1)
    return _unguarded_partition(v, first + 1, last, first)


def _move_median_to_first(v, result, a, b, c):
    ka, kb, kc = v[a][0], v[b][0], v[c][0]
    if ka < kb:
        pick = b if kb < kc else c if ka < kc else a
    else:
        pick = a if ka < kc else c if kb < kc else b
    v[result], v[pick] = v[pick], v[result]


def _unguarded_partition(v, first, last, pivot):
    key = v[pivot][0]
    while True:
        while v[first][0] < key:
            first += 1
        last -= 1
        while key < v[last][0]:
            last -= 1
        if not first < last:
            return first
        v[first], v[last] = v[last], v[first]
        first += 1


def _final_insertion_sort(v, first, last):
    if last - first > _THRESHOLD:
        _insertion_sort(v, first, first + _THRESHOLD)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(v, i)
    else:
        _insertion_sort(v, first, last)


def _insertion_sort(v, first, last):
    for i in range(first + 1, last):
        if v[i][0] < v[first][0]:
            v[first:i + 1] = [v[i]] + v[first:i]
        else:
            _linear_insert(v, i)


def _linear_insert(v, last):
    value = v[last]
    while value[0] < v[last - 1][0]:
        v[last] = v[last - 1]
        last -= 1
    v[last] = value


def partial_sort(v, first, middle, last):
    _heap_select(v, first, middle, last)
    while middle - first > 1:                      # sort_heap
        middle -= 1
        _pop_heap(v, first, middle, middle)


def _heap_select(v, first, middle, last):
    _make_heap(v, first, middle)
    for i in range(middle, last):
        if v[i][0] < v[first][0]:
            _pop_heap(v, first, middle, i)


def _make_heap(v, first, last):
    n = last - first
    for parent in range((n - 2) // 2, -1, -1) if n >= 2 else ():
        _adjust_heap(v, first, parent, n, v[first + parent])


def _pop_heap(v, first, last, result):
    value = v[result]
    v[result] = v[first]
    _adjust_heap(v, first, 0, last - first, value)


def _adjust_heap(v, first, hole, n, value):
    top, child = hole, hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if v[first + child][0] < v[first + child - 1][0]:
            child -= 1
        v[first + hole] = v[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole] = v[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and v[first + parent][0] < value[0]:     # push_heap
        v[first + hole] = v[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole] = value


def nth_element(v, first, nth, last):
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(v, first, nth + 1, last)
            v[first], v[nth] = v[nth], v[first]
            return
        depth -= 1
        cut = _partition_pivot(v, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(v, first, last)


def quick_select(v, k):
    """The reference's kthvalue selection (median of three; ``>`` on the keys)."""
    lo, hi = 0, len(v) - 1
    while hi > lo:
        if hi == lo + 1:
            if v[lo][0] > v[hi][0]:
                v[lo], v[hi] = v[hi], v[lo]
            return
        mid = lo + (hi - lo) // 2
        v[mid], v[lo + 1] = v[lo + 1], v[mid]
        for a, b in ((lo + 1, hi), (lo, hi), (lo + 1, lo)):
            if v[a][0] > v[b][0]:
                v[a], v[b] = v[b], v[a]
        i, j, pivot = lo + 1, hi, v[lo][0]
        while True:
            i += 1
            while pivot > v[i][0]:
                i += 1
            j -= 1
            while v[j][0] > pivot:
                j -= 1
            if j < i:
                break
            v[i], v[j] = v[j], v[i]
        v[lo], v[j] = v[j], v[lo]
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


# --- rows ---------------------------------------------------------------------------
def _pairs(ranks, sign):
    return [(sign * r, i) for i, r in enumerate(ranks.tolist())]


def sort_row(ranks, descending):
    """The reference's argsort of one row (std::sort, not stable)."""
    v = _pairs(ranks, -1 if descending else 1)
    std_sort(v, 0, len(v))
    return [i for _, i in v]


def topk_row(ranks, k, largest, sorted):
    v = _pairs(ranks, -1 if largest else 1)
    if k * 64 <= len(v):
        partial_sort(v, 0, k, len(v))
    else:
        nth_element(v, 0, k - 1, len(v))
        if sorted:
            std_sort(v, 0, k - 1)
    return [i for _, i in v[:k]]


def kth_row(ranks, k):
    v = _pairs(ranks, 1)
    quick_select(v, k - 1)
    return v[k - 1][1]


def mode_row(ranks):
    """The index of the last element, in std::sort's order, of the smallest value
    among the most frequent ones."""
    v = _pairs(ranks, 1)
    std_sort(v, 0, len(v))
    best, best_count, count = 0, 0, 0
    for i, (key, index) in enumerate(v):
        count += 1
        if i == len(v) - 1 or key != v[i + 1][0]:
            if count > best_count:
                best, best_count = index, count
            count = 0
    return best


def with_reference_ties(a, dim, default, row_fn):
    """``default`` (indices along ``dim`` of ``a``, any width) with each row of ``a``
    that holds ties replaced by ``row_fn(ranks of the row)`` (Note [ties on the CPU])."""
    if type(a) is not np.ndarray or a.ndim == 0 or a.size == 0 or not emulated(a):
        return default                  # (meta and device arrays: the CPU's answer only)
    rows = np.moveaxis(a, dim, -1)
    rows = rows.reshape(-1, rows.shape[-1])
    ranks, tied = dense_ranks(rows.astype(np.float32) if rows.dtype.kind == "V" else rows)
    if not tied.any():
        return default
    out = np.moveaxis(default, dim, -1).copy()
    flat = out.reshape(-1, out.shape[-1])
    for r in np.flatnonzero(tied):
        flat[r] = row_fn(ranks[r])
    return np.moveaxis(flat.reshape(out.shape), -1, dim)
