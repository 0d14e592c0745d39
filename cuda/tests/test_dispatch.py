"""The ufunc fast paths (Note [ufunc fast paths] in chainrule_cuda/_ufuncs.py) and the
cached descriptors (Note [cached descriptors] in _kernels.py): a call that takes a fast
path gives exactly what the general path (``_ufuncs.call``) and NumPy give, in dtype,
shape and bits."""
import ml_dtypes
import numpy as np
import pytest

from chainrule_cuda import DeviceArray, _kernels as K, _ufuncs

from runtime_support import needs_device

pytestmark = needs_device

RNG = np.random.default_rng(3)
DTYPES = [np.bool_, np.uint8, np.int8, np.int32, np.int64, np.float16, ml_dtypes.bfloat16,
          np.float32, np.float64, np.complex64, np.complex128]
SCALARS = [2, 3.5, True, -1.25, np.float32(1.5), np.float64(0.75), np.array(2.0),
           np.array(3, np.int8), np.float16(0.5)]


def values(dtype, shape):
    return (RNG.uniform(-3, 3, shape) * 4).astype(dtype)


def dev(a):
    return DeviceArray.from_host(np.asarray(a))


def general(ufunc, *operands):
    """The general path (no fast path): what the fast paths must equal."""
    return _ufuncs.call(ufunc, tuple(dev(x) if isinstance(x, np.ndarray) and x.ndim else x
                                     for x in operands))


def same_bits(got, want):
    host = got.get()
    assert host.dtype == want.dtype and host.shape == want.shape, (host.dtype, want.dtype)
    np.testing.assert_array_equal(host.reshape(-1).view(np.uint8),
                                  np.ascontiguousarray(want).reshape(-1).view(np.uint8))


def fast_and_general(ufunc, *operands):
    """(fast-path result, general-path result) of ``ufunc(*operands)``, the array
    operands on the device."""
    on_device = tuple(dev(x) if isinstance(x, np.ndarray) and x.ndim else x for x in operands)
    return ufunc(*on_device), general(ufunc, *operands)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_binary_array_scalar_and_broadcast_equal_the_general_path(dtype):
    a, b = values(dtype, (3, 4)), values(dtype, (4,))
    with np.errstate(all="ignore"):
        for ufunc in [np.add, np.multiply, np.subtract, np.maximum, np.equal, np.less,
                      np.logical_and, np.true_divide]:
            if ufunc is np.subtract and np.dtype(dtype) == np.bool_:
                continue
            for x, y in [(a, b), (b, a), (a, a)] + [(a, s) for s in SCALARS] + \
                    [(s, a) for s in SCALARS]:
                try:
                    want = ufunc(x, y)
                    slow = general(ufunc, x, y)
                except (TypeError, OverflowError, RuntimeError) as e:   # the fast path fails alike
                    with pytest.raises(type(e)):
                        fast_and_general(ufunc, x, y)
                    continue
                fast = fast_and_general(ufunc, x, y)[0]
                assert slow.dtype == want.dtype and slow.shape == want.shape
                same_bits(fast, slow.get())


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_unary_equals_the_general_path(dtype):
    a = values(dtype, (2, 5))[:, ::2]             # strided: the kernel reads the strides
    with np.errstate(all="ignore"):
        for ufunc in [np.negative, np.sin, np.tanh, np.exp, np.absolute, np.isnan,
                      np.logical_not, np.square]:
            try:
                ufunc(a)
            except TypeError:
                continue
            fast, slow = fast_and_general(ufunc, a)
            same_bits(fast, slow.get())


def test_constants_keep_signed_zeros_and_nans_apart():
    a = dev(np.array([1.0, -2.0]))
    assert np.copysign(a, 0.0).get().tolist() == [1.0, 2.0]
    assert np.copysign(a, -0.0).get().tolist() == [-1.0, -2.0]
    assert np.copysign(a, np.array(-0.0)).get().tolist() == [-1.0, -2.0]
    assert np.isnan((a + float("nan")).get()).all()
    assert (a * 2.0).get().tolist() == [2.0, -4.0] and (a * 3.0).get().tolist() == [3.0, -6.0]
    assert (a * True).dtype == np.float64 and (a * 2).get().tolist() == [2.0, -4.0]


def test_operator_shapes_that_do_not_broadcast_raise_numpy_error():
    with pytest.raises(ValueError):
        dev(np.ones((2, 3))) + dev(np.ones((4,)))


def test_size_zero_and_zero_d():
    e = dev(np.ones((0, 3)))
    assert (e * 2.0).shape == (0, 3) and np.sin(e).shape == (0, 3)
    z = dev(np.array(2.0))
    same_bits(z * z + 1.0, np.array(5.0))
    same_bits(np.sin(z), np.sin(np.array(2.0)))


def test_descriptor_is_cached_and_matches_the_array():
    a = dev(np.arange(12.0).reshape(3, 4)).transpose()
    d = K.describe(a)
    assert K.describe(a) is d
    t = K.CrTensor.from_buffer_copy(d)
    assert t.data == a._ptr and t.dtype == K.DTYPE_CODES[a.dtype] and t.ndim == 2
    assert list(t.shape[:2]) == [4, 3] and list(t.strides[:2]) == [1, 4]
