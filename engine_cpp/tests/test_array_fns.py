"""src/array_fns.h: ARRAY_NS.conj in C gives what core's _namespaces._conj gives —
the same object for real arrays and NumPy scalars, the conjugate for complex ones,
the Python function's error for anything else."""
import ml_dtypes
import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import _namespaces
from chainrule_engine import _engine

CASES = [np.arange(4.0), np.arange(4, dtype=np.float32), np.array([1 + 2j, 3 - 1j]),
         np.array(2.5), np.array(1j), np.float64(2.0), np.complex64(1 - 1j),
         np.arange(3), np.array([True, False]), np.ones(2, ml_dtypes.bfloat16),
         np.arange(6.0).reshape(2, 3).T, np.asfortranarray(np.ones((2, 2), complex))]


@pytest.mark.parametrize("x", CASES, ids=lambda x: f"{type(x).__name__}-{x.dtype}")
def test_same_as_python(x):
    expected, got = _namespaces._conj(x), _engine.array_conj(x)
    assert type(got) is type(expected)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    assert (got is x) == (expected is x)


@pytest.mark.parametrize("x", [2.0, [1.0, 2.0], None])
def test_other_objects_get_the_python_error(x):
    with pytest.raises(AttributeError) as python_error:
        _namespaces._conj(x)
    with pytest.raises(AttributeError) as c_error:
        _engine.array_conj(x)
    assert str(c_error.value) == str(python_error.value)


def test_slot_restores_the_python_function():
    previous = _namespaces.set_array_fn("conj", None)
    try:
        assert previous is _engine.array_conj
        assert _namespaces.ARRAY_NS.conj is _namespaces._conj
    finally:
        _namespaces.set_array_fn("conj", previous)
    assert _namespaces.ARRAY_NS.conj is _engine.array_conj


def test_complex_gradients_unchanged():
    z = cr.tensor([1 + 2j, -0.5 + 1j], requires_grad=True)
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * np.array([1 + 2j, -0.5 + 1j]))
