"""Indexing DeviceArrays on the device (Note [indexing by offsets] in
chainrule_cuda/_indexing.py): boolean masks through the nonzero kernel, and ``ufunc.at``
for add (scatter-add) and multiply / maximum / minimum (runs of equal offsets) with
repeated indices, against NumPy, without copying data to the host."""
import numpy as np
import pytest

import chainrule as cr
from chainrule_cuda import DeviceArray

from host_copies import counted_copies
from runtime_support import needs_device

pytestmark = needs_device

RNG = np.random.default_rng(2)


def dev(a):
    return DeviceArray.from_host(np.asarray(a))


def test_boolean_mask_get_and_set_through_the_nonzero_kernel():
    a = RNG.normal(size=(4, 5))
    d, mask = dev(a), dev(a > 0)
    with counted_copies() as copies:
        picked = d[mask]
        d[mask] = 0.0
    assert copies.to_host == 0
    np.testing.assert_array_equal(picked.get(), a[a > 0])
    np.testing.assert_array_equal(d.get(), np.where(a > 0, 0.0, a))


def test_a_host_mask_is_taken_like_host_indices():
    a = RNG.normal(size=(3, 4))
    np.testing.assert_array_equal(dev(a)[a < 0].get(), a[a < 0])


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum],
                         ids=lambda u: u.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_ufunc_at_with_repeated_indices(ufunc, dtype):
    a = (RNG.normal(size=(5, 3)) * 4).astype(dtype)
    rows = RNG.integers(-5, 5, 17)                  # repeats, negative indices
    values = (RNG.normal(size=(17, 3)) * 4).astype(dtype)
    if dtype != np.int64:
        values[4, 1] = np.nan
    want = a.copy()
    ufunc.at(want, rows, values)
    d = dev(a)
    with counted_copies() as copies:
        ufunc.at(d, dev(rows), dev(values))
    assert copies.to_host == 0
    np.testing.assert_allclose(d.get(), want, rtol=1e-6)


def test_ufunc_at_on_a_strided_view_and_a_scalar_value():
    a = RNG.normal(size=(6, 4))
    want = a.copy()
    np.maximum.at(want[::2, 1:], (np.array([0, 2, 0]), np.array([1, 1, 1])), 0.5)
    d = dev(a)
    np.maximum.at(d[::2, 1:], (dev([0, 2, 0]), dev([1, 1, 1])), 0.5)
    np.testing.assert_array_equal(d.get(), want)


def test_other_ufuncs_at_are_refused_instead_of_going_through_the_host():
    with pytest.raises(TypeError, match="subtract.at"):
        np.subtract.at(dev(np.zeros(3)), dev([0, 1]), 1.0)
