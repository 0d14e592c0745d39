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


def test_formula_conj_returns_a_real_tensor_itself_without_dispatch():
    # create_graph formulas call F.conj nearly everywhere: a real tensor is its own
    # conjugate, with no is_complex() wrapper frames (the reference's formulas run below
    # __torch_function__ too)
    import sys
    from chainrule._ops import TENSOR_NS
    x = cr.tensor([1.0, 2.0])
    calls = []

    def profile(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        same = TENSOR_NS.conj(x)
    finally:
        sys.setprofile(None)
    assert same is x and calls == ["_formula_conj"]
    z = cr.tensor([1 + 2j], requires_grad=True)
    out = TENSOR_NS.conj(z)
    assert out.tolist() == [1 - 2j] and out.grad_fn.name() == "ConjBackward0"


def test_formula_conj_of_a_subclass_is_chainrule_conj():
    from chainrule._ops import TENSOR_NS
    seen = []

    class Logged(cr.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", func))
            return super().__torch_function__(func, types, args, kwargs or {})
    x = cr.tensor([1.0]).as_subclass(Logged)
    assert TENSOR_NS.conj(x) is x and "is_complex" in seen
