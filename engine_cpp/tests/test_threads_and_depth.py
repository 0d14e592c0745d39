"""Threads, depth and lifetime under the C++ engine: concurrent backward passes on
independent graphs, the GIL released during the graph analysis of big graphs, a
1,000,000-node chain backward and freed without recursion."""
import gc
import sys
import threading
import time
import weakref

import numpy as np

import chainrule as cr


def chain(x, n, op="mul"):
    y = x
    for _ in range(n):
        y = y * 1.0 if op == "mul" else y + 1.0
    return y


def test_concurrent_backward_on_independent_graphs(engines, use_engine):
    _, cpp = engines[1]
    use_engine(cpp)
    results, errors = {}, []

    def work(i):
        try:
            x = cr.tensor([float(i + 1)], dtype=cr.float64, requires_grad=True)
            for _ in range(5):
                y = chain(x * x, 3000)            # big enough to release the GIL
                y.sum().backward()
            results[i] = x.grad.item()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == {i: 5 * 2.0 * (i + 1) for i in range(4)}


def test_other_threads_run_during_a_long_pass(engines, use_engine):
    _, cpp = engines[1]
    use_engine(cpp)
    x = cr.tensor([1.0], requires_grad=True)
    y = chain(x, 200_000)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.0005)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        y.sum().backward()
    finally:
        stop.set()
        t.join()
    assert x.grad.tolist() == [1.0]
    assert len(ticks) > 1


def test_million_node_chain_backward_and_free(engines, use_engine):
    _, cpp = engines[1]
    use_engine(cpp)
    limit = sys.getrecursionlimit()
    x = cr.tensor([1.0], requires_grad=True)
    y = chain(x, 1_000_000)
    node = weakref.ref(y.grad_fn)
    y.sum().backward()
    assert x.grad.tolist() == [1.0]
    del y
    gc.collect()
    assert node() is None
    assert sys.getrecursionlimit() == limit


def test_million_node_chain_freed_without_backward():
    x = cr.tensor([1.0], requires_grad=True)
    y = chain(x, 1_000_000, op="add")
    node = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert node() is None


def test_reentrant_backward_from_a_hook(engines, use_engine):
    _, cpp = engines[1]
    use_engine(cpp)
    x = cr.tensor([2.0], requires_grad=True)
    w = cr.tensor([3.0], requires_grad=True)
    inner_grads = []

    def hook(g):
        with cr.enable_grad():
            (w * w).sum().backward()             # a whole pass inside this one
        inner_grads.append(w.grad.item())
        return g

    y = (x * 5).exp()
    y.register_hook(hook)
    y.sum().backward()
    assert inner_grads == [6.0]
    assert np.allclose(x.grad.numpy(), 5 * np.exp([10.0]))


def test_engine_does_not_keep_the_graph_alive(engines, use_engine):
    _, cpp = engines[1]
    use_engine(cpp)
    x = cr.tensor([1.0], requires_grad=True)
    y = (x * 2).exp()
    node = weakref.ref(y.grad_fn)
    y.sum().backward()
    del y
    gc.collect()
    assert node() is None
