"""Note [reading nodes by slot] (src/node.h): the C++ engine reads node fields at
their slot offsets only for classes that resolve them to Node's and OpNode's own
declarations; a class that redefines one is read through Python, as the Python
engine would."""
import numpy as np

import chainrule as cr
from chainrule.autograd.node import Node

from conftest import python_calls, run_under


class CountingPreHooks(Node):
    """A node class whose pre-hook table is a property: it must be read by getattr."""
    reads = 0

    @property
    def _pre_hooks(self):
        type(self).reads += 1
        return None

    def apply(self, grads, create_graph):
        return [grads[0] * 2]


def _through(node_cls, x):
    y = x * 1.0
    node = node_cls.__new__(node_cls)
    node.__init__(((y.grad_fn, 0),))
    out = cr.Tensor._wrap(np.ones(3))
    out.grad_fn, out._requires_grad = node, True
    return out


def test_a_node_class_with_a_descriptor_field_is_read_through_python(engines):
    results = []
    for _, engine in engines:
        x = cr.ones(3, requires_grad=True)
        CountingPreHooks.reads = 0
        run_under(engine, lambda: _through(CountingPreHooks, x).backward(cr.ones(3)))
        results.append((x.grad.tolist(), CountingPreHooks.reads))
    assert results[0] == results[1] == ([2.0, 2.0, 2.0], results[0][1])
    assert results[0][1] >= 1


def test_an_op_node_class_overriding_release_saved_is_called(engines):
    calls = []
    for _, engine in engines:
        x = cr.ones(3, requires_grad=True)
        y = x.sin()
        base = type(y.grad_fn)

        class Recording(base):
            __slots__ = ()

            def release_saved(self):
                calls.append(type(self).__name__)
                base.release_saved(self)

        y.grad_fn.__class__ = Recording
        run_under(engine, lambda: y.sum().backward())
        assert np.allclose(x.grad.numpy(), np.cos(1.0))
        assert y.grad_fn._saved is None
    assert calls == ["Recording", "Recording"]


def test_hooks_set_on_a_node_instance_are_seen(engines):
    seen = []
    for name, engine in engines:
        x = cr.ones(2, requires_grad=True)
        y = x * 3.0
        y.grad_fn.register_prehook(lambda g: seen.append(("pre", name)))
        y.grad_fn.register_hook(lambda gi, go: seen.append(("post", name)))
        run_under(engine, lambda: y.sum().backward())
        assert x.grad.tolist() == [3.0, 3.0]
    assert seen == [("pre", "python"), ("post", "python"), ("pre", "cpp"), ("post", "cpp")]


def test_a_class_changed_after_use_is_examined_again(engines):
    """The per-class answer is tied to the class's version: a descriptor added to a
    node class after a pass is honoured by the next pass."""
    class Doubling(Node):
        def apply(self, grads, create_graph):
            return [grads[0] * 2]

    for _, engine in engines:
        x = cr.ones(3, requires_grad=True)
        run_under(engine, lambda: _through(Doubling, x).backward(cr.ones(3)))
    Doubling._pre_hooks = property(lambda self: {0: lambda grads: [g * 10 for g in grads]})
    results = []
    for _, engine in engines:
        x = cr.ones(3, requires_grad=True)
        run_under(engine, lambda: _through(Doubling, x).backward(cr.ones(3)))
        results.append(x.grad.tolist())
    assert results == [[20.0, 20.0, 20.0], [20.0, 20.0, 20.0]]


class TwoInputs(Node):
    """A node whose num_inputs is its own: the engine must ask it."""
    seen = []

    def num_inputs(self):
        return 2

    def apply(self, grads, create_graph):
        type(self).seen.append(len(grads))
        return [grads[0] * 2]


def test_a_node_class_with_its_own_num_inputs_is_asked(engines):
    results = []
    for _, engine in engines:
        x = cr.ones(3, requires_grad=True)
        TwoInputs.seen = []
        run_under(engine, lambda: _through(TwoInputs, x).backward(cr.ones(3)))
        results.append((x.grad.tolist(), TwoInputs.seen))
    assert results[0] == results[1] == ([2.0, 2.0, 2.0], [2])


def test_num_inputs_set_on_an_instance_is_seen(engines):
    class Plain(Node):
        seen = []

        def apply(self, grads, create_graph):
            type(self).seen.append(len(grads))
            return [grads[0] * 2]

    results = []
    for _, engine in engines:
        x = cr.ones(3, requires_grad=True)
        Plain.seen = []
        out = _through(Plain, x)
        out.grad_fn.num_inputs = lambda: 3
        run_under(engine, lambda: out.backward(cr.ones(3)))
        results.append((x.grad.tolist(), Plain.seen))
    assert results[0] == results[1] == ([2.0, 2.0, 2.0], [3])


def test_accumulate_grad_num_inputs_is_not_called(engines):
    """Node.num_inputs (`return 1`) is inlined for the classes that inherit it."""
    from chainrule.autograd.node import AccumulateGrad
    assert AccumulateGrad.num_inputs is Node.num_inputs
    for name, engine in engines:
        x = cr.ones(3, requires_grad=True)
        y = (x * 2.0).sum()
        _, names = python_calls(lambda: run_under(engine, y.backward))
        assert ("num_inputs" in names) == (name == "python")
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
