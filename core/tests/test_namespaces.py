"""_ops/_namespaces.py: Note [array function slot]."""
import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import _namespaces


def test_set_array_fn_installs_and_restores():
    def loud_conj(x):
        return "installed"
    previous = _namespaces.set_array_fn("conj", loud_conj)
    try:
        assert _namespaces.ARRAY_NS.conj(np.ones(2)) == "installed"
    finally:
        assert _namespaces.set_array_fn("conj", previous) is loud_conj
    x = np.ones(2)
    assert _namespaces.ARRAY_NS.conj(x) is x


def test_python_conj_is_the_reference():
    x, z = np.arange(3.0), np.array([1 + 1j])
    assert _namespaces._conj(x) is x
    np.testing.assert_array_equal(_namespaces._conj(z), [1 - 1j])
    assert set(_namespaces.ARRAY_FN_SLOTS) <= set(dir(_namespaces.ARRAY_NS))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int32, np.float16,
                                   cr.bfloat16.np, np.float32, np.complex64])
def test_sum_is_np_sum(dtype):
    # ARRAY_NS.sum calls the ufunc np.sum calls: same values, dtype (small integers and
    # bools accumulate in int64) and type (NumPy scalar or array), for NumPy scalars too.
    arrays = np.arange(12).reshape(3, 4).astype(dtype), np.array(2, dtype)
    for x in arrays + (arrays[1][()],):
        for dim in (None, 0, -1, (0, -1), ()):
            if x.ndim == 0 and dim not in (None, ()):
                continue
            for keepdim in (False, True):
                ours = _namespaces.ARRAY_NS.sum(x, dim, keepdim)
                expected = np.sum(x, axis=dim, keepdims=keepdim)
                assert type(ours) is type(expected) and ours.dtype == expected.dtype
                np.testing.assert_array_equal(ours, expected)
