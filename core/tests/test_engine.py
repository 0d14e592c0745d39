"""The Python engine: execution order, hooks, capture with inputs=, deep graphs,
threads, errors."""
import sys
import threading

import numpy as np
import pytest

import chainrule as cr


def leaf(*values):
    return cr.tensor(list(values), dtype=cr.float64, requires_grad=True)


def test_grad_fn_names_and_next_functions():
    x = leaf(1.0)
    y = x * 2
    assert y.grad_fn.name() == "MulBackward0"
    (acc, nr), (none, _) = y.grad_fn.next_functions
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x
    assert none is None


def test_hand_written_nodes_are_named_in_the_reference_namespace():
    # Note [node names]: name() carries the namespace; the class name and repr do not
    x = leaf(1.0, 2.0)
    y = x.clone()
    y[0] = 5.0
    copied = cr.empty(2, dtype=cr.float64).copy_(x * 2)
    nodes = [(x * 1).grad_fn.next_functions[0][0], y.grad_fn, copied.grad_fn]
    assert [n.name() for n in nodes] == ["torch::autograd::" + n for n in
                                         ("AccumulateGrad", "CopySlices", "CopyBackwards")]
    assert [type(n).__name__ for n in nodes] == ["AccumulateGrad", "CopySlices",
                                                 "CopyBackwards"]
    assert repr(nodes[2]).startswith("<CopyBackwards object at 0x")
    assert "grad_fn=<CopyBackwards>" in repr(copied)


def test_accumulate_grad_node_is_shared_per_leaf():
    x = leaf(1.0)
    a, b = x * 2, x * 3
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]


def test_ready_nodes_run_newest_first():
    order = []
    x = leaf(1.0)
    a = x * 2
    b = x * 3
    a.grad_fn.register_prehook(lambda g: order.append("a"))
    b.grad_fn.register_prehook(lambda g: order.append("b"))
    (a + b).sum().backward()
    assert order == ["b", "a"]


def test_node_runs_once_all_gradients_arrived():
    calls = []
    x = leaf(1.0)
    y = x.exp()
    y.grad_fn.register_prehook(lambda g: calls.append(g[0].tolist()))
    (y * 2 + y * 3).sum().backward()
    assert calls == [[5.0]]


def test_hook_order_tensor_pre_node_post():
    events = []
    x = leaf(1.0)
    y = x * 2
    y.register_hook(lambda g: events.append("tensor"))
    y.grad_fn.register_prehook(lambda g: events.append("pre"))
    y.grad_fn.register_hook(lambda gi, go: events.append("post"))
    x.register_post_accumulate_grad_hook(lambda t: events.append("post-acc"))
    y.sum().backward()
    assert events == ["tensor", "pre", "post", "post-acc"]


def test_tensor_hook_replaces_gradient_and_handle_removes():
    x = leaf(1.0)
    y = x * 2
    h = y.register_hook(lambda g: g * 10)
    y.sum().backward(retain_graph=True)
    assert x.grad.tolist() == [20.0]
    h.remove()
    y.sum().backward()
    assert x.grad.tolist() == [22.0]


def test_leaf_hook_runs_before_accumulation():
    x = leaf(1.0)
    x.register_hook(lambda g: g + 1)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [3.0]


def test_hooks_see_tensors_on_fast_path():
    seen = []
    x = leaf(1.0)
    y = x * 2
    y.register_hook(lambda g: seen.append(type(g)))
    y.sum().backward()
    assert seen == [cr.Tensor]


def test_hook_removing_itself_while_running():
    x = leaf(1.0)
    handles = []
    handles.append(x.register_hook(lambda g: handles[0].remove()))
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [4.0]


def test_retain_grad_sees_hook_result():
    x = leaf(1.0)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 5)
    y.sum().backward()
    assert y.grad.tolist() == [5.0]


def test_grad_with_non_leaf_input_does_not_run_unneeded_nodes():
    ran = []
    x = leaf(1.0)
    y = x.exp()
    y.grad_fn.register_prehook(lambda g: ran.append("exp"))
    z = (y * 2).sum()
    cr.autograd.grad(z, y)
    assert ran == []


def test_gradient_edge_as_input():
    x = leaf(1.0, 2.0)
    y = x * 2
    edge = cr.autograd.graph.get_gradient_edge(y)
    (g,) = cr.autograd.grad((y * y).sum(), edge)
    assert g.tolist() == [4.0, 8.0]


def test_deep_chain_forward_backward_and_free():
    x = leaf(1.0)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]
    del y   # freeing the 100,000-node chain must not overflow the stack


def test_deep_chain_freed_without_backward():
    old = sys.getrecursionlimit()
    y = leaf(1.0)
    for _ in range(100_000):
        y = y + 1.0
    del y
    assert sys.getrecursionlimit() == old


def test_threads_run_independent_backward():
    results = {}

    def work(i):
        x = cr.tensor([float(i)], dtype=cr.float64, requires_grad=True)
        for _ in range(50):
            (x * x).sum().backward()
        results[i] = x.grad.item()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: 100.0 * i for i in range(4)}


def test_grad_mode_is_thread_local():
    seen = []
    with cr.no_grad():
        t = threading.Thread(target=lambda: seen.append(cr.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_exception_in_hook_propagates_and_leaves_grads_untouched():
    x, w = leaf(1.0), leaf(2.0)
    (x * w).sum().backward()
    before = (x.grad.tolist(), w.grad.tolist())

    class Boom(Exception):
        pass

    y = x * w
    z = y.exp()

    def fail(g):
        raise Boom("from hook")
    z.register_hook(fail)
    with pytest.raises(Boom, match="from hook"):
        (z + y).sum().backward()
    assert (x.grad.tolist(), w.grad.tolist()) == before
    (x * w).sum().backward()
    assert x.grad.tolist() == [4.0]


def test_invalid_gradient_shape_from_hook_names_node():
    x = leaf(1.0, 2.0)
    y = x * 2
    z = y.exp()
    z.grad_fn.register_hook(lambda gi, go: (cr.ones(5, dtype=cr.float64),))
    with pytest.raises(RuntimeError, match="Function ExpBackward0 returned an invalid gradient "
                                           "at index 0"):
        z.sum().backward()


def test_node_metadata_dict():
    y = leaf(1.0) * 2
    y.grad_fn.metadata["tag"] = 1
    assert y.grad_fn.metadata == {"tag": 1}


def test_saved_values_readable_on_node():
    x = leaf(1.0, 2.0)
    y = x.exp()
    assert np.allclose(y.grad_fn._saved_result.numpy(force=True), np.exp([1.0, 2.0]))
    z = x * 3.0
    assert z.grad_fn._saved_other.item() == 3.0


def test_modified_saved_tensor_error():
    x = leaf(1.0, 2.0)
    y = x * 1
    z = y.sin()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation "
                                           "has been modified by an inplace operation"):
        z.sum().backward()


def test_in_place_on_leaf_requiring_grad_is_error():
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        x.add_(1)
    with cr.no_grad():
        x.add_(1)
    assert x.tolist() == [2.0]


def test_in_place_op_rebases_grad_fn_and_bumps_version():
    x = leaf(1.0, 2.0)
    y = x * 1
    v0 = y._version
    y.exp_()
    assert y._version == v0 + 1 and y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), np.exp([1.0, 2.0]))


def test_engine_slot_can_be_replaced():
    from chainrule.autograd import engine
    calls = []

    class Recording(engine.PythonEngine):
        def execute(self, *args, **kwargs):
            calls.append(1)
            return super().execute(*args, **kwargs)

    previous = engine.set_engine(Recording())
    try:
        x = leaf(1.0)
        (x * 2).sum().backward()
    finally:
        engine.set_engine(previous)
    assert calls == [1] and x.grad.tolist() == [2.0]


def test_keyboard_interrupt_in_hook_propagates_and_library_recovers():
    x = leaf(1.0)
    y = x * 2

    def interrupt(g):
        raise KeyboardInterrupt
    y.register_hook(interrupt)
    with pytest.raises(KeyboardInterrupt):
        y.sum().backward()
    assert x.grad is None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0]


def test_reentrant_backward_inside_hook():
    x = leaf(2.0)
    inner = []

    def hook(g):
        z = leaf(3.0)
        with cr.enable_grad():         # backward runs hooks with grad mode = create_graph
            (z * z).sum().backward()
        inner.append(z.grad.item())
        return g
    y = x * 5
    y.register_hook(hook)
    y.sum().backward()
    assert inner == [6.0] and x.grad.tolist() == [5.0]


def test_fresh_gradient_is_taken_over_not_copied():
    from chainrule.autograd import accumulate
    x = leaf(1.0, 2.0)
    before = accumulate.STOLEN[0]
    (x * 2).sum().backward()                  # MulBackward0 makes a fresh array
    assert accumulate.STOLEN[0] == before + 1
    g = cr.ones(2, dtype=cr.float64)
    x.grad = None
    w = leaf(3.0, 4.0)
    (x + w).backward(g)                      # both get the caller's array: copies
    assert accumulate.STOLEN[0] == before + 1
    assert x.grad._data is not g._data and w.grad._data is not x.grad._data
    x.grad.add_(1)
    assert g.tolist() == [1.0, 1.0] and w.grad.tolist() == [1.0, 1.0]


class _Recorder:
    """A node observer (Note [node observer slot]) that logs enter/exit pairs."""

    def __init__(self):
        self.log = []

    def enter(self, node, name, inputs):
        self.log.append(("enter", name or node.name(), node._sequence_nr()))
        return len(self.log)

    def exit(self, token):
        self.log.append(("exit", token))


@pytest.fixture
def node_observer():
    from chainrule.autograd import engine
    recorder = _Recorder()
    previous = engine.set_node_observer(recorder)
    yield recorder
    engine.set_node_observer(previous)


def test_node_observer_sees_every_node_and_custom_function(node_observer):
    class Double(cr.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = cr.ones(2, requires_grad=True)
    y = Double.apply(x).sum()
    y.backward()
    entered = [(name, seq) for kind, name, *seq in node_observer.log if kind == "enter"
               for seq in seq]
    double_seq = y.grad_fn.next_functions[0][0]._sequence_nr()
    assert [name for name, _ in entered] == ["Double", "SumBackward0", "DoubleBackward",
                                             "torch::autograd::AccumulateGrad"]
    assert entered[0][1] == entered[2][1] == double_seq
    # each enter is closed by its own token, innermost first
    tokens = [entry[1] for entry in node_observer.log if entry[0] == "exit"]
    assert tokens == [1, 3, 5, 7]


def test_node_observer_exit_runs_when_a_node_raises(node_observer):
    class Fails(cr.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            raise ZeroDivisionError("in backward")

    x = cr.ones(2, requires_grad=True)
    y = Fails.apply(x).sum()
    with pytest.raises(ZeroDivisionError, match="in backward"):
        y.backward()
    assert node_observer.log[-2:] == [("enter", "FailsBackward", node_observer.log[-2][2]),
                                      ("exit", len(node_observer.log) - 1)]


def test_node_observer_slot_is_empty_by_default():
    from chainrule.autograd import engine
    assert engine._node_observer is None
