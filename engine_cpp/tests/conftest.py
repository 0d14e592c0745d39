"""Fixtures for the C++ engine's tests: both engines side by side."""
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
