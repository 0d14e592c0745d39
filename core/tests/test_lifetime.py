"""Graphs are freed by reference counting as soon as they are unreachable: nodes,
saved tensors, and every hook kind (nothing on the graph points back at tensors)."""
import gc
import weakref

import chainrule as cr
from chainrule.autograd import graph


def _freed_without_gc(make):
    """Build a graph with ``make`` (returning an object to watch), drop it, and check
    the object died by reference counting alone (the cycle collector disabled)."""
    gc.collect()
    gc.disable()
    try:
        ref = weakref.ref(make())
        return ref() is None
    finally:
        gc.enable()


def test_op_node_freed():
    def make():
        x = cr.ones(2, requires_grad=True)
        y = (x * 2).exp()
        return y.grad_fn
    assert _freed_without_gc(make)


def test_node_saving_its_output_freed():
    def make():
        x = cr.ones(2, requires_grad=True)
        return x.exp().grad_fn          # saves its result: no output <-> node cycle
    assert _freed_without_gc(make)


def test_accumulate_grad_freed_with_graph():
    def make():
        x = cr.ones(2, requires_grad=True)
        y = x * 2
        return y.grad_fn.next_functions[0][0]
    assert _freed_without_gc(make)


def test_graph_freed_after_backward():
    def make():
        x = cr.ones(2, requires_grad=True)
        y = (x * 2).exp().sum()
        node = y.grad_fn
        y.backward()
        return node
    assert _freed_without_gc(make)


def test_tensor_hook_and_retain_grad_freed():
    def make():
        x = cr.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g)
        y.retain_grad()
        x.register_hook(lambda g: g)
        return y
    assert _freed_without_gc(make)


def test_node_hooks_freed():
    def make():
        x = cr.ones(2, requires_grad=True)
        y = x.exp()
        y.grad_fn.register_hook(lambda gi, go: None)
        y.grad_fn.register_prehook(lambda go: None)
        return y.grad_fn
    assert _freed_without_gc(make)


def test_post_accumulate_and_multi_grad_hooks_freed():
    def make():
        x = cr.ones(2, requires_grad=True)
        y = x * 3
        x.register_post_accumulate_grad_hook(lambda t: None)
        graph.register_multi_grad_hook((x, y), lambda grads: None)
        return y.grad_fn
    assert _freed_without_gc(make)


def test_custom_function_node_freed():
    class Double(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def make():
        x = cr.ones(2, requires_grad=True)
        return Double.apply(x).grad_fn
    assert _freed_without_gc(make)


def test_saved_tensor_hooks_graph_freed():
    def make():
        x = cr.ones(2, requires_grad=True)
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.exp()
        return y.grad_fn
    assert _freed_without_gc(make)


def test_long_chain_freed_by_refcount():
    def make():
        x = cr.ones(1, requires_grad=True)
        y = x
        for _ in range(100_000):
            y = y * 1.0
        return y.grad_fn
    assert _freed_without_gc(make)
