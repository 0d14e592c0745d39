"""Tensor.untyped_storage() / Tensor.storage() over NumPy memory (_storage.py).
(Against torch: tests/test_parity_aten_surface.py.)"""
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import legacy_surface


def test_views_share_one_storage():
    x = cr.arange(6.0).reshape(2, 3)
    s, t = x.untyped_storage(), x[1, 1:].untyped_storage()
    assert s.data_ptr() == t.data_ptr() == x.data_ptr() and s.nbytes() == t.nbytes() == 24
    t[0] = 0x40                           # a byte written through one shows in the tensor
    assert x[0, 0].item() != 0.0
    assert cr.arange(4.0).untyped_storage().data_ptr() != s.data_ptr()


def test_typed_storage_elements_and_warning():
    x = cr.arange(4, dtype=cr.int32)[2:]
    legacy_surface.WARNED_ONCE.clear()                  # the reference warns once
    with pytest.warns(UserWarning, match="TypedStorage is deprecated") as caught:
        typed = x.storage()
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.storage()
    assert (typed.size(), typed.dtype, typed.element_size(), typed.nbytes()) == \
        (4, cr.int32, 4, 16)
    typed[3] = 9
    assert x.tolist() == [2, 9] and typed.untyped().nbytes() == 16
    assert repr(typed).splitlines()[-1] == \
        "[chainrule.storage.TypedStorage(dtype=chainrule.int32, device=cpu) of size 4]"


def test_detached_and_numpy_backed_tensors():
    d = cr.arange(4.0)[1:].detach()
    assert d.untyped_storage().nbytes() == 16
    a = np.arange(10.0)
    assert cr.from_numpy(a[::2]).untyped_storage().nbytes() == 72
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cr.zeros(0).storage().size() == 0
