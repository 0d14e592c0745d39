"""dtype inference of tensor()/as_tensor() for sequences holding NumPy scalars: each
element's own dtype, promoted as the reference does."""
import numpy as np
import pytest

import chainrule as cr


@pytest.mark.parametrize("data, expected", [
    ([np.int16(1), np.int16(2)], cr.int16), ([np.float64(1.5), 2.0], cr.float64),
    ([np.int16(1), 2], cr.int64), ([np.float32(1), np.int64(2)], cr.float32),
    ([np.bool_(True)], cr.bool), ([np.uint8(3), np.int8(1)], cr.int16),
    ([[np.int8(1)], [np.int8(2)]], cr.int8), ([1, 2], cr.int64), ([1.0], cr.float32)])
def test_sequences_of_numpy_scalars(data, expected):
    assert cr.tensor(data).dtype == expected and cr.as_tensor(data).dtype == expected
