"""Note [accumulation fast path] (src/accumulate.h): the C++ engine writes `.grad`
exactly as the Python engine does — same values, identity, layout, versions, stolen
arrays — and hands every other case to Python."""
import threading

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import accumulate

from conftest import run_under


def _state(leaf):
    g = leaf.grad
    arr = None if g is None else g.detach().numpy()   # .grad may carry a graph
    return None if g is None else (arr.tolist(), arr.strides, g._version, g.requires_grad)


def _both(engines, scenario):
    """scenario() -> leaf, under each engine; returns [(state, stolen count)]."""
    out = []
    for _, engine in engines:
        before = accumulate.STOLEN[0]
        leaf = run_under(engine, scenario)
        out.append((_state(leaf), accumulate.STOLEN[0] - before))
    return out


def test_first_gradient_is_stolen_when_nothing_else_holds_it(engines):
    def scenario():
        x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x.sin() * 2.0).sum().backward()
        return x
    py, cpp = _both(engines, scenario)
    assert py == cpp and py[1] == 1


def test_first_gradient_is_copied_into_the_leafs_layout(engines):
    def scenario():
        x = cr.from_numpy(np.asfortranarray(np.ones((3, 2)))).requires_grad_(True)
        (x * 3.0).sum().backward()
        return x
    py, cpp = _both(engines, scenario)
    assert py == cpp and py[1] == 0
    assert py[0][1] == (8, 24)            # Fortran strides kept


def test_gradient_held_elsewhere_is_copied(engines):
    def scenario():
        x = cr.tensor([1.0, 2.0], requires_grad=True)
        g = cr.tensor([5.0, 6.0])
        x.backward(g)                      # the user's gradient: never stolen
        g.numpy()[:] = 0
        return x
    py, cpp = _both(engines, scenario)
    assert py == cpp and py[0][0] == [5.0, 6.0] and py[1] == 0


def test_later_gradients_add_in_place_and_bump_the_version(engines):
    identities = []

    def scenario():
        x = cr.tensor([1.0, 2.0], requires_grad=True)
        (x * 2.0).sum().backward()
        first = x.grad
        (x * x).sum().backward()
        identities.append(x.grad is first)
        return x
    py, cpp = _both(engines, scenario)
    assert py == cpp and py[0][0] == [4.0, 6.0] and py[0][2] == 1
    assert identities == [True, True]


def test_grad_with_a_graph_and_post_accumulate_hooks_take_the_python_path(engines):
    calls = []

    def scenario():
        x = cr.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward(create_graph=True)      # .grad carries a graph
        x.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.tolist()))
        (x * 3.0).sum().backward()
        return x
    with pytest.warns(UserWarning):
        py, cpp = _both(engines, scenario)
    assert py == cpp and py[0][0] == [5.0, 7.0]
    assert calls == [[5.0, 7.0], [5.0, 7.0]]


def test_accumulate_grad_node_hooks_run(engines):
    seen = []

    def scenario():
        x = cr.tensor([1.0], requires_grad=True)
        y = x * 2.0
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda g: (g[0] * 10,))
        acc.register_hook(lambda gi, go: seen.append(go[0].tolist()))
        y.sum().backward()
        return x
    py, cpp = _both(engines, scenario)
    assert py == cpp and py[0][0] == [20.0]
    assert seen == [[20.0], [20.0]]


def test_threads_sharing_a_leaf_lose_no_update(use_engine):
    import chainrule_engine
    use_engine(chainrule_engine.CppEngine())
    x = cr.ones(200_000, requires_grad=True)

    def work():
        for _ in range(20):
            (x * 1.0).sum().backward()
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert float(x.grad.numpy().min()) == float(x.grad.numpy().max()) == 80.0
