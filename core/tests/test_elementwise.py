"""_ops/elementwise.py: forwards with details beyond the derivative samples."""
import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import elementwise


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int64, np.float16,
                                   cr.bfloat16.np, np.float32, np.float64])
def test_relu_forward_keeps_the_dtype_and_values(dtype):
    # The 0 is a cached 0-d array of the input's dtype: results as with a Python 0.
    values = [-3.0, -0.0, 0.0, 1.5, 2.0]
    if np.dtype(dtype).kind in "fV":                     # floats (bfloat16 is kind V)
        values.append(np.nan)
    x = np.array([True, False]) if dtype is np.bool_ else np.array(values).astype(dtype)
    for _ in range(2):                                   # made, then from the cache
        out = elementwise._relu_forward(x)
        expected = np.maximum(x, 0).astype(x.dtype, copy=False)
        assert out.dtype == x.dtype and out.tobytes() == expected.tobytes()
        assert out.flags.writeable and not np.shares_memory(out, x)
    assert not elementwise._ZEROS[x.dtype].flags.writeable
