"""The torch.* names of _ops/torch_surface.py: values, gradients and in-place forms.
(Against torch: tests/test_parity_surface.py.)"""
import math
import warnings

import numpy as np
import pytest

import chainrule as cr


def test_constants():
    assert (cr.e, cr.pi, cr.inf, cr.newaxis) == (math.e, math.pi, math.inf, None)
    assert math.isnan(cr.nan)


def test_copy_variants_copy():
    x = cr.arange(6.0).reshape(2, 3)
    y = cr.transpose_copy(x, 0, 1)
    assert y.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]] and y._base is None
    assert y.is_contiguous()
    parts = cr.split_copy(x, 1, 1)
    assert [p.tolist() for p in parts] == [[[0.0], [3.0]], [[1.0], [4.0]], [[2.0], [5.0]]]
    assert cr.slice_copy(x, 1, 1, None, 1).tolist() == [[1.0, 2.0], [4.0, 5.0]]
    assert cr.view_as_real_copy(cr.tensor([1 + 2j])).tolist() == [[1.0, 2.0]]


def test_cumulative_trapezoid_and_trapz():
    y = cr.tensor([1.0, 3.0, 2.0], dtype=cr.float64, requires_grad=True)
    assert cr.cumulative_trapezoid(y, dx=2.0).tolist() == [4.0, 9.0]
    assert cr.cumulative_trapezoid(y, cr.tensor([0.0, 1.0, 3.0], dtype=cr.float64)).tolist() == [2.0, 7.0]
    assert cr.trapz(y).item() == 4.5
    assert cr.autograd.gradcheck(lambda v: cr.cumulative_trapezoid(v, dx=0.3), (y,))


def test_put_and_index_reduce_gradients():
    x = cr.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    s = cr.tensor([1.0, 2.0], dtype=cr.float64, requires_grad=True)
    idx = cr.tensor([4, -6])
    assert cr.put(x, idx, s).tolist() == [[2.0, 1.0, 2.0], [3.0, 1.0, 5.0]]
    assert cr.autograd.gradcheck(lambda a, b: cr.put(a, idx, b, accumulate=True), (x, s))
    base = cr.tensor([1.0, 2.0, 3.0], dtype=cr.float64, requires_grad=True)
    src = cr.tensor([4.0, 5.0, 6.0, 7.0], dtype=cr.float64, requires_grad=True)
    index = cr.tensor([0, 2, 0, 1])
    out = cr.index_reduce(base, 0, index, src, "prod")
    assert out.tolist() == [24.0, 14.0, 15.0]
    assert cr.index_reduce(base, 0, index, src, "mean", include_self=False).tolist() == [5.0, 7.0, 5.0]
    assert cr.autograd.gradcheck(lambda a, b: cr.index_reduce(a, 0, index, b, "prod"), (base, src))
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin"):
        cr.index_reduce(base, 0, index, src, "sum")


def test_inplace_forms_bump_versions():
    x = cr.zeros(2, 2)
    x.addr_(cr.ones(2), cr.tensor([1.0, 2.0]))
    assert x.tolist() == [[1.0, 2.0], [1.0, 2.0]] and x._version == 1
    y = cr.ones(3)
    y.index_reduce_(0, cr.tensor([2]), cr.tensor([5.0]), "amax")
    y.put_(cr.tensor([0]), cr.tensor([-1.0]))
    assert y.tolist() == [-1.0, 1.0, 5.0] and y._version == 2


def test_lu_family():
    A = cr.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=cr.float64)
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        LU, pivots = cr.lu(A)
    P, L, U = cr.lu_unpack(LU, pivots)
    assert (P @ L @ U).tolist() == A.tolist()
    assert P.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    b = cr.tensor([[1.0], [1.0]], dtype=cr.float64)
    np.testing.assert_allclose((A @ cr.lu_solve(b, LU, pivots)).numpy(), b.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert len(A.lu(get_infos=True)) == 3


def test_asarray_shares_or_copies():
    a = np.zeros(3)
    shared, copied = cr.asarray(a), cr.asarray(a, copy=True)
    a[0] = 1.0
    assert shared.tolist()[0] == 1.0 and copied.tolist()[0] == 0.0
    x = cr.ones(2)
    assert cr.asarray(x) is x and cr.asarray(x, copy=True) is not x
    assert cr.asarray([1, 2.0]).dtype == cr.float32
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Float' into dtype 'Double'"):
        cr.asarray(x, dtype=cr.float64, copy=False)


def test_frombuffer():
    buffer = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
    t = cr.frombuffer(buffer, dtype=cr.int32)
    buffer[0] = 7
    assert t.tolist() == [7, 2]
    assert cr.frombuffer(buffer, dtype=cr.int16, count=2, offset=2).tolist() == [0, 2]
    with pytest.raises(ValueError, match="must be a multiple of element size"):
        cr.frombuffer(b"abc", dtype=cr.int32)
    with pytest.raises(ValueError, match="must not be greater than actual buffer length"):
        cr.frombuffer(buffer, dtype=cr.int32, count=3)


def test_dlpack_round_trips_share_memory():
    from chainrule.utils import dlpack
    x = cr.tensor([1.0, 2.0])
    y = dlpack.from_dlpack(dlpack.to_dlpack(x))
    x.add_(1.0)
    assert y.tolist() == [2.0, 3.0]
    a = np.arange(3.0)
    assert cr.from_dlpack(a).tolist() == [0.0, 1.0, 2.0]
    assert np.from_dlpack(x).tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        np.from_dlpack(cr.ones(1, requires_grad=True))


def test_resize_keeps_the_memorys_first_elements():
    x = cr.arange(6.0)
    x.resize_(2, 2)
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]] and x._version == 1
    x.resize_(3, 3)
    assert x.shape == (3, 3) and x.reshape(-1).tolist()[:6] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    t = cr.arange(6.0).view(2, 3).t()
    assert t.resize_(6).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert cr.ones(2, 3).resize_as_(cr.zeros(3)).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        cr.ones(2, requires_grad=True).resize_(3)


@pytest.mark.parametrize("name, bits", [("uint16", 16), ("uint32", 32), ("uint64", 64)])
def test_limited_unsigned_dtypes(name, bits):
    dtype = getattr(cr, name)
    t = cr.tensor([1, 2], dtype=dtype)
    assert t.dtype is dtype and t.numpy().dtype == np.dtype(name) and not dtype.is_signed
    assert cr.iinfo(dtype).bits == bits and t.to(cr.int64).tolist() == [1, 2]
    assert cr.from_numpy(np.zeros(2, name)).dtype is dtype
    assert cr.promote_types(dtype, cr.float32) is cr.float32
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not "
                                           "supported, attempted to promote UInt"):
        cr.promote_types(dtype, cr.int32)


def test_binomial():
    cr.manual_seed(0)
    draws = cr.binomial(cr.full((4000,), 20.0, dtype=cr.float64), cr.tensor(0.25, dtype=cr.float64))
    assert draws.dtype == cr.float64 and abs(draws.mean().item() - 5.0) < 0.1
    assert cr.binomial(cr.tensor([7.0, 3.0]), cr.tensor([1.0, 0.0])).tolist() == [7.0, 0.0]
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count"):
        cr.binomial(cr.tensor([10]), cr.tensor([0.5]))
