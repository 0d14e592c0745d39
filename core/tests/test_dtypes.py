"""Note [checked integer conversion] (_dtypes.checked_integer) and the wrapping of
numbers meeting integer tensors in arithmetic (_common.wrapped_integer), as the
reference does both."""
import numpy as np
import pytest

import chainrule as cr
from chainrule._dtypes import checked_integer
from chainrule._ops._common import wrapped_integer

U8, I8, I32 = np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int32)


def test_checked_integer_keeps_in_range_values_and_wraps_unsigned_negatives():
    assert checked_integer(127, I8) == 127 and checked_integer(-128, I8) == -128
    assert checked_integer(-1, U8) == 255 and checked_integer(-255, U8) == 1
    assert checked_integer(2.5, I32) == 2.5 and checked_integer(300, np.dtype(np.float16)) == 300


@pytest.mark.parametrize("value, dtype, name", [(128, I8, "int8_t"), (-256, U8, "uint8_t"),
                                                 (1.5e10, I32, "int"), (2 ** 63, np.dtype(np.int64), "int64_t")])
def test_checked_integer_refuses_what_overflows(value, dtype, name):
    with pytest.raises(RuntimeError, match=f"value cannot be converted to type {name} without "
                                           "overflow"):
        checked_integer(value, dtype)
    with pytest.raises(OverflowError, match="int too big to convert"):
        checked_integer(2 ** 70, dtype)


def test_wrapped_integer_is_a_c_cast():
    assert wrapped_integer(300, U8) == 44 and wrapped_integer(-1, U8) == 255
    assert wrapped_integer(-200, I8) == 56 and wrapped_integer(2 ** 40, I8) == 0
    with pytest.raises(OverflowError, match="int too big to convert"):
        wrapped_integer(2 ** 70, I8)


def test_arithmetic_wraps_numbers_beyond_the_dtype():
    t = cr.zeros(3, dtype=cr.uint8)
    assert (t + (-1)).tolist() == [255] * 3 and (t * 300).tolist() == [0] * 3
    assert cr.where(t > 0, t, -1).tolist() == [255] * 3
    assert (t == 300).tolist() == [False] * 3 and (t < -1).tolist() == [True] * 3
    i8 = cr.tensor([100, -100], dtype=cr.int8)
    assert (i8 + 100).tolist() == [-56, 0] and i8.clone().add_(200).tolist() == [44, 100]


def test_stores_check_the_range():
    t = cr.zeros(2, dtype=cr.uint8)
    stores = [lambda: t.clone().fill_(300), lambda: t.masked_fill(t == 0, 256),
              lambda: t.clamp(-1, 300), lambda: cr.full((2,), 256, dtype=cr.uint8),
              lambda: cr.full_like(t, 999), lambda: t.clone().__setitem__(0, 256)]
    for store in stores:
        with pytest.raises(RuntimeError, match="cannot be converted to type uint8_t"):
            store()
    assert cr.full((2,), -1, dtype=cr.uint8).tolist() == [255, 255]
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        t[0] = 2 ** 70


def test_tensor_from_data_names_the_dtype():
    assert cr.tensor([-1, -255], dtype=cr.uint8).tolist() == [255, 1]
    for data, dtype, name in [([128], cr.int8, "int8"), ([-256], cr.uint8, "uint8"),
                              ([1.5e10], cr.int32, "int32")]:
        with pytest.raises(RuntimeError, match=f"converted to type {name} without overflow"):
            cr.tensor(data, dtype=dtype)
    for data in ([2 ** 63], 2 ** 70):
        with pytest.raises(ValueError, match="Overflow when unpacking long long"):
            cr.tensor(data)


def test_result_type_name_is_complex_half_for_float16_with_a_lower_complex():
    # Note [ComplexHalf stands in as complex64]
    from chainrule._dtypes import result_type_name
    assert result_type_name([cr.float16], [], [1j]) == "ComplexHalf"
    assert result_type_name([cr.float16], [cr.complex128], []) == "ComplexHalf"
    assert result_type_name([], [cr.float16], [1j]) == "ComplexHalf"
    assert result_type_name([], [cr.float16, cr.complex64], []) == "ComplexFloat"
    assert result_type_name([cr.float16, cr.complex64], [], []) == "ComplexFloat"
    assert result_type_name([cr.bfloat16], [], [1j]) == "ComplexFloat"
