"""Errors under the C++ engine: Python exceptions keep their type, message and
traceback; the engine's own messages are the Python engine's; KeyboardInterrupt
stops a pass; a failed pass leaves .grad untouched and the library usable."""
import gc
import signal
import traceback

import numpy as np
import pytest

import chainrule as cr
from conftest import run_under


class Boom(Exception):
    pass


def raise_boom(g):
    raise Boom("from hook")


def message_of(engine, fn):
    with pytest.raises(Exception) as info:
        run_under(engine, fn)
    return type(info.value), str(info.value)


def test_hook_exception_type_message_and_traceback(engines, use_engine):
    _, cpp = engines[1]
    use_engine(cpp)
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.register_hook(raise_boom)
    with pytest.raises(Boom, match="from hook") as info:
        y.sum().backward()
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "raise_boom" in frames          # the hook's own frame is in the traceback
    assert x.grad is None                  # Note [atomic accumulation]
    y2 = x.exp()
    y2.sum().backward()                    # still usable
    assert np.allclose(x.grad.numpy(), np.exp([1.0, 2.0]))


def test_exception_inside_node_apply_keeps_traceback(engines, use_engine):
    _, cpp = engines[1]
    use_engine(cpp)

    class Fails(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("bad backward")

    x = cr.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="bad backward") as info:
        Fails.apply(x).sum().backward()
    assert "backward" in [f.name for f in traceback.extract_tb(info.value.__traceback__)]


CASES = {
    "freed graph": lambda: _backward_twice(),
    "invalid gradient shape": lambda: _bad_shape_hook(),
    "modified saved tensor": lambda: _modified_saved(),
    "wrong number of gradients": lambda: _wrong_count_hook(),
    "unused input": lambda: _unused_input(),
}


def _backward_twice():
    x = cr.tensor([1.0], requires_grad=True)
    y = x.exp().sum()
    y.backward()
    y.backward()


def _bad_shape_hook():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    z = (x * 2).exp()
    z.grad_fn.register_hook(lambda gi, go: (cr.ones(5, dtype=cr.float64),))
    z.sum().backward()


def _modified_saved():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y.sin()
    y.mul_(2)
    z.sum().backward()


def _wrong_count_hook():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    z = x.exp()
    z.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    z.sum().backward()


def _unused_input():
    x = cr.tensor([1.0], requires_grad=True)
    w = cr.tensor([1.0], requires_grad=True)
    cr.autograd.grad((x * 2).sum(), [x, w])


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_error_as_python_engine(engines, case):
    (_, py), (_, cpp) = engines
    expected = message_of(py, CASES[case])
    assert message_of(cpp, CASES[case]) == expected


def test_keyboard_interrupt_from_signal_stops_the_pass(engines, use_engine):
    _, cpp = engines[1]
    use_engine(cpp)
    x = cr.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(1000):
        y = y * 1.0
    ran = []
    y.register_hook(lambda g: signal.raise_signal(signal.SIGINT))
    y.grad_fn._next[0][0].register_prehook(lambda g: ran.append(1))
    # a collection during the pass would run weakref callbacks, and CPython drops a
    # KeyboardInterrupt raised inside one ("Exception ignored in ..."): the interrupt
    # must reach the engine's own signal check, so no collection may run first
    gc.disable()
    try:
        with pytest.raises(KeyboardInterrupt):
            y.sum().backward()
    finally:
        gc.enable()
    assert x.grad is None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0]


def test_keyboard_interrupt_raised_by_a_hook(engines, use_engine):
    _, cpp = engines[1]
    use_engine(cpp)
    x = cr.tensor([1.0], requires_grad=True)
    y = x.exp()

    def interrupt(g):
        raise KeyboardInterrupt
    y.register_hook(interrupt)
    with pytest.raises(KeyboardInterrupt):
        y.sum().backward()


def test_anomaly_mode_nan_check_same_message(engines):
    def case():
        x = cr.tensor([-1.0], requires_grad=True)
        with cr.autograd.detect_anomaly():
            (x.sqrt()).sum().backward()
    (_, py), (_, cpp) = engines
    with pytest.warns(UserWarning):
        expected = message_of(py, case)
    with pytest.warns(UserWarning):
        assert message_of(cpp, case) == expected
