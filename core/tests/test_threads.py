"""Thread safety: independent graphs in parallel, a shared leaf, a shared graph."""
import threading

import numpy as np
import pytest

import chainrule as cr


def _run(n, target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:   # collected and checked by the test
            errors.append(e)
    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_threads_sharing_a_leaf_accumulate_n_times():
    x = cr.ones(1000, dtype=cr.float64, requires_grad=True)
    n, repeats = 8, 20

    def work(i):
        for _ in range(repeats):
            (x * 3).sum().backward()
    assert _run(n, work) == []
    assert np.all(x.grad.numpy() == 3.0 * n * repeats)


def test_shared_graph_without_retain_graph_errors_cleanly():
    x = cr.ones(4, dtype=cr.float64, requires_grad=True)
    y = x.exp().sum()
    barrier = threading.Barrier(4)

    def work(i):
        barrier.wait()
        y.backward()
    errors = _run(4, work)
    assert all(isinstance(e, RuntimeError) and "second time" in str(e) for e in errors)
    assert len(errors) <= 3


def test_grad_mode_per_thread():
    results = {}
    barrier = threading.Barrier(2)

    def work(i):
        with cr.set_grad_enabled(i == 0):
            barrier.wait()
            results[i] = (cr.ones(1, requires_grad=True) * 2).requires_grad
    assert _run(2, work) == []
    assert results == {0: True, 1: False}
