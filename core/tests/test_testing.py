"""chainrule.testing: assert_close's tolerances, checks and messages, make_tensor
(the messages against torch: tests/programs/testing_assert_close.py)."""
import pytest

import chainrule as cr
from chainrule.testing import assert_allclose, assert_close, make_tensor


def test_passes_within_default_tolerances_per_dtype():
    assert_close(cr.tensor([1.0]), cr.tensor([1.0 + 1e-6]))
    assert_close(cr.tensor([1.0], dtype=cr.float16), cr.tensor([1.0005], dtype=cr.float16))
    with pytest.raises(AssertionError, match="Tensor-likes are not close"):
        assert_close(cr.tensor([1.0], dtype=cr.float64), cr.tensor([1.0 + 1e-6],
                                                                    dtype=cr.float64))
    with pytest.raises(AssertionError, match="Tensor-likes are not equal"):
        assert_close(cr.tensor([1, 2]), cr.tensor([1, 3]))


def test_attribute_checks_and_options():
    with pytest.raises(AssertionError, match="attribute 'dtype' do not match"):
        assert_close(cr.ones(2), cr.ones(2, dtype=cr.float64))
    assert_close(cr.ones(2), cr.ones(2, dtype=cr.float64), check_dtype=False)
    with pytest.raises(AssertionError, match=r"attribute 'stride\(\)'"):
        assert_close(cr.ones(2, 2), cr.ones(2, 2).t(), check_stride=True)
    nan = cr.tensor([float("nan")])
    assert_close(nan, nan, equal_nan=True)
    with pytest.raises(AssertionError):
        assert_close(nan, nan)
    with pytest.raises(ValueError, match="must be either specified or omitted"):
        assert_close(cr.ones(1), cr.ones(1), rtol=1.0)


def test_nested_inputs_name_the_failing_item():
    with pytest.raises(AssertionError, match=r"The failure occurred for item \[1\]\['x'\]"):
        assert_close([cr.ones(1), {"x": cr.ones(1)}], [cr.ones(1), {"x": cr.zeros(1)}])
    with pytest.raises(AssertionError, match="custom"):
        assert_close(cr.ones(1), cr.zeros(1), msg="custom")
    with pytest.raises(AssertionError, match="length of the sequences mismatch: 1 != 2"):
        assert_close([1], [1, 2])
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(cr.ones(1), [1.0])


def test_make_tensor_and_assert_allclose():
    t = make_tensor(3, 4, dtype=cr.int64, device="cpu", low=1, high=5)
    assert t.shape == (3, 4) and bool(((t >= 1) & (t <= 5)).all())
    assert make_tensor((2,), dtype=cr.float32, device="cpu", requires_grad=True).requires_grad
    assert bool(make_tensor(50, dtype=cr.float64, device="cpu", exclude_zero=True).ne(0).all())
    assert not make_tensor(3, 2, dtype=cr.float32, device="cpu",
                           noncontiguous=True).is_contiguous()
    assert_allclose(cr.tensor([1.0]), [1.0])
