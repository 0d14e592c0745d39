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


def _view_facts(a):
    return (type(a), a.dtype, a.shape, a.strides, a.flags.writeable, a.flags.c_contiguous,
            a.flags.f_contiguous, a.flags.aligned, a.tolist())


EXPAND_CASES = [
    (np.arange(3.0), (2, 3)), (np.array(2.5), (2, 2)), (np.array(2.5), ()),
    (np.ones((1, 3)), (1, 3)), (np.ones((1, 3)), (4, 3)), (np.ones((3, 1)), (3, 4)),
    (np.ones((1, 1)), (1, 1)), (np.arange(6.0).reshape(2, 3), (2, 3)),
    (np.arange(6.0).reshape(2, 3)[:, ::2], (4, 2, 2)), (np.arange(6.0).reshape(2, 3).T, (5, 3, 2)),
    (np.ones((0, 3)), (0, 3)), (np.ones((0, 1)), (0, 5)), (np.ones((3,)), (0, 3)),
    (np.ones((1,)), (0,)), (np.ones(2, np.float32), (3, 2)), (np.ones(2, complex), (2, 2)),
    (np.ones(2, ml_dtypes.bfloat16), (1, 2)), (np.array([True]), (3,)),
]


@pytest.mark.parametrize("x,shape", EXPAND_CASES, ids=lambda v: str(getattr(v, "shape", v)))
def test_expand_same_view_as_numpy(x, shape):
    expected, got = _namespaces._expand(x, shape), _engine.array_expand(x, shape)
    assert _view_facts(got) == _view_facts(expected)
    assert np.shares_memory(got, x) or got.size == 0
    with pytest.raises(ValueError, match="read-only"):
        got[...] = 0


@pytest.mark.parametrize("x,shape", [
    (np.ones(3), (2,)), (np.ones(3), (3, 2)), (np.ones((2, 3)), (3,)), (np.ones(3), (-1, 3)),
    (np.ones(2), (2.0,)), (np.ones(2), [3, 2]), (np.ones((0, 1)), (1, 1)), (2.0, (2,)),
    (np.ones(2), (2, 2 ** 70)),
], ids=str)
def test_expand_other_cases_are_numpys(x, shape):
    try:
        expected = _namespaces._expand(x, shape)
    except Exception as error:                       # NumPy's error, from either
        with pytest.raises(type(error)) as c_error:
            _engine.array_expand(x, shape)
        assert str(c_error.value) == str(error)
    else:
        assert _view_facts(_engine.array_expand(x, shape)) == _view_facts(expected)


def test_expand_keeps_the_owner_alive():
    view = _engine.array_expand(np.arange(3.0)[::-1], (2, 3))
    import gc
    gc.collect()
    assert view.tolist() == [[2.0, 1.0, 0.0], [2.0, 1.0, 0.0]]


def test_reduction_backward_uses_the_c_expand():
    assert _namespaces.ARRAY_NS.expand is _engine.array_expand
    x = cr.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    x.mean(dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 1 / 3))
