"""Shared fixtures for core's tests.

Every test starts and ends with chainrule's global state as it found it (default
dtype, grad mode, default device), so one test's settings never leak into another.
"""
import numpy as np
import pytest

import chainrule as cr


@pytest.fixture(autouse=True)
def _restore_global_state():
    dtype = cr.get_default_dtype()
    grad_enabled = cr.is_grad_enabled()
    device = cr.get_default_device()
    yield
    cr.set_default_dtype(dtype)
    cr.set_grad_enabled(grad_enabled)
    cr.set_default_device(device)


@pytest.fixture
def float64_default():
    """Make float64 the default dtype for the test (restored afterwards)."""
    cr.set_default_dtype(cr.float64)
    yield cr.float64


@pytest.fixture
def rng():
    """A seeded NumPy generator (reproducible random data)."""
    return np.random.default_rng(0)


@pytest.fixture
def torch():
    """PyTorch for parity checks; the test skips where it is not installed."""
    return pytest.importorskip("torch")

