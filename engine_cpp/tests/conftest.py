"""Fixtures for the C++ engine's tests: both engines side by side."""
import sys

import pytest

import chainrule_engine
from chainrule.autograd import engine as engine_slot


@pytest.fixture
def engines():
    """(name, engine) for the Python and the C++ engine."""
    return [("python", engine_slot.PythonEngine()), ("cpp", chainrule_engine.CppEngine())]


@pytest.fixture
def use_engine():
    """use_engine(e): make `e` the engine for the rest of the test (restored after)."""
    previous = engine_slot.get_engine()
    yield engine_slot.set_engine
    engine_slot.set_engine(previous)


def run_under(engine, fn):
    """fn() with `engine` in the engine slot."""
    previous = engine_slot.set_engine(engine)
    try:
        return fn()
    finally:
        engine_slot.set_engine(previous)


def python_calls(fn, name_of=lambda code: code.co_name):
    """fn()'s result (or the exception it raised) and the names (``name_of`` each
    code object) of the Python functions it ran: how the tests see that a C path ran
    no Python, or that a fallback ran the Python function."""
    names = []

    def profile(frame, event, arg):
        if event == "call":
            names.append(name_of(frame.f_code))
    sys.setprofile(profile)
    try:
        result = fn()
    except Exception as e:        # noqa: BLE001 - compared by the caller
        result = e
    finally:
        sys.setprofile(None)
    return result, names
