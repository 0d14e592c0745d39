"""The dispatch slot of _ops/_registry.py (Note [dispatch slot]): every table op runs
through the registered dispatchers, also the ones the C++ engine's fast methods and
the in-place fast path would otherwise take, and nothing does once they are removed."""
import threading

import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import _registry
from chainrule.autograd.engine import get_engine


@pytest.fixture(autouse=True, scope="module")
def _engine_selected():
    """The engine is picked (and the C++ engine installs its fast methods) at the
    first backward: pick it now so the tests below go through those fast paths."""
    get_engine()


def _observer(seen):
    def observe(run, op, inputs, attrs, view_base):
        seen.append(op.name)
        return run(op, inputs, attrs, view_base)
    return observe


def test_empty_slot_is_none():
    assert _registry._dispatch is None


def test_sees_every_op_including_fast_methods_and_inplace():
    x = cr.ones(3, requires_grad=True)
    y = cr.ones(3)
    seen = []
    with _registry.add_dispatcher(_observer(seen)):
        z = (x * 2.0).sin() + y        # fast methods under the C++ engine
        y += z.detach()                # the in-place fast path
        s = z.sum()
    assert seen == ["mul", "sin", "add", "add", "sum"]
    assert _registry._dispatch is None
    s.backward()
    assert np.allclose(x.grad.numpy(), 2 * np.cos(2.0))
    assert y.tolist() == pytest.approx([1 + np.sin(2.0) + 1] * 3)


def test_nothing_seen_after_removal():
    seen = []
    handle = _registry.add_dispatcher(_observer(seen))
    handle.remove()
    handle.remove()                    # twice is harmless
    _ = cr.ones(2) * 3
    assert seen == [] and _registry._dispatch is None


def test_dispatchers_nest_first_registered_outermost():
    order = []

    def named(name):
        def fn(run, op, inputs, attrs, view_base):
            order.append(name + ">")
            out = run(op, inputs, attrs, view_base)
            order.append("<" + name)
            return out
        return fn
    with _registry.add_dispatcher(named("a")), _registry.add_dispatcher(named("b")):
        cr.ones(1).neg()
    assert order == ["a>", "b>", "<b", "<a"]


def test_a_dispatcher_may_change_the_output():
    def double(run, op, inputs, attrs, view_base):
        out = run(op, inputs, attrs, view_base)
        return out * 2 if op.name == "exp" else out
    with _registry.add_dispatcher(double):
        assert cr.zeros(1).exp().tolist() == [2.0]
    assert cr.zeros(1).exp().tolist() == [1.0]


class DispatcherError(Exception):
    pass


def test_an_error_in_a_dispatcher_leaves_the_library_usable():
    def fail(run, op, inputs, attrs, view_base):
        raise DispatcherError("from the dispatcher")
    with pytest.raises(DispatcherError, match="from the dispatcher"):
        with _registry.add_dispatcher(fail):
            cr.ones(1) * 2
    assert _registry._dispatch is None
    assert (cr.ones(1) * 2).tolist() == [2.0]


def test_registered_from_another_thread_applies_everywhere():
    seen = []
    handles = []
    t = threading.Thread(target=lambda: handles.append(_registry.add_dispatcher(
        _observer(seen))))
    t.start()
    t.join()
    cr.ones(1).exp()
    handles[0].remove()
    assert seen == ["exp"]


def test_next_functions_leave_out_inputs_without_a_derivative():
    # the reference lists neither where's condition nor max(dim)'s indices
    x = cr.tensor([1., -2.], requires_grad=True)
    y = cr.tensor([3., 4.], requires_grad=True)
    where = cr.where(x > 0, x, y).grad_fn
    assert [type(f).__name__ for f, _ in where.next_functions] == ["AccumulateGrad"] * 2
    assert len(cr.stack([x, y]).max(1).values.grad_fn.next_functions) == 1
