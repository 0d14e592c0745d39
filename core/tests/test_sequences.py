"""_sequences.py: triangle indices, unravel_index, logspace, range, scalar_tensor, vander
and the windows, against NumPy's definitions (torch parity: tests/programs)."""
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck


def test_triangle_indices_match_numpy():
    for row, col, k in [(3, 3, 0), (4, 2, -1), (2, 5, 2), (0, 3, 0)]:
        np.testing.assert_array_equal(cr.tril_indices(row, col, k).numpy(),
                                      np.stack(np.tril_indices(row, k, col)).reshape(2, -1))
        np.testing.assert_array_equal(cr.triu_indices(row, col, k).numpy(),
                                      np.stack(np.triu_indices(row, k, col)).reshape(2, -1))
    assert cr.tril_indices(3, 3, dtype=cr.int32).dtype == cr.int32


def test_unravel_index():
    rows, cols = cr.unravel_index(cr.tensor([[4], [7], [-1]]), (3, 3))
    assert rows.tolist() == [[1], [2], [2]] and cols.tolist() == [[1], [1], [2]]
    with pytest.raises(RuntimeError, match=r"'indices' must be in range \[-9, 8\]"):
        cr.unravel_index(cr.tensor([9]), (3, 3))
    with pytest.raises(TypeError, match="integer dtype"):
        cr.unravel_index(cr.tensor([1.0]), (3,))


def test_logspace_range_scalar_tensor():
    np.testing.assert_allclose(cr.logspace(0, 3, 4, base=2).numpy(), [1, 2, 4, 8])
    assert cr.logspace(0, 1, 2, dtype=cr.int64).tolist() == [1, 10]
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        assert cr.range(1, 2, 0.5).tolist() == [1.0, 1.5, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cr.range(1, 3, dtype=cr.int64).tolist() == [1, 2, 3]
    assert cr.scalar_tensor(1.5).shape == () and cr.scalar_tensor(2).dtype == cr.float32


def test_vander_values_and_gradients():
    np.testing.assert_array_equal(cr.vander(cr.tensor([1, 2, 3])).numpy(),
                                  np.vander([1, 2, 3]))
    np.testing.assert_allclose(cr.vander(cr.tensor([0.5, 2.0]), N=4, increasing=True).numpy(),
                               np.vander([0.5, 2.0], 4, increasing=True))
    x = cr.tensor([0.3, -1.2, 2.0], dtype=cr.float64, requires_grad=True)
    assert gradcheck(lambda t: cr.vander(t, N=4), (x,))
    assert gradgradcheck(lambda t: cr.vander(t, N=4), (x,))


@pytest.mark.parametrize("window, numpy_symmetric", [
    (cr.hann_window, np.hanning), (cr.hamming_window, np.hamming),
    (cr.blackman_window, np.blackman), (cr.bartlett_window, np.bartlett),
    (lambda n, periodic=True, dtype=None: cr.kaiser_window(n, periodic, 12.0, dtype=dtype),
     lambda m: np.kaiser(m, 12.0))])
def test_windows_match_numpy(window, numpy_symmetric):
    for n in (2, 5, 8):
        np.testing.assert_allclose(window(n, periodic=False, dtype=cr.float64).numpy(),
                                   numpy_symmetric(n), atol=1e-12)
        np.testing.assert_allclose(window(n, dtype=cr.float64).numpy(),
                                   numpy_symmetric(n + 1)[:n], atol=1e-12)
    assert window(1).tolist() == [1.0] and window(0).shape == (0,)
    assert window(4).dtype == cr.float32
    with pytest.raises(RuntimeError, match="expects floating point dtypes"):
        window(4, dtype=cr.int64)
