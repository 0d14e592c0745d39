"""DeviceArray against NumPy (Note [device array protocols] in chainrule_cuda/_array.py):
the same calls on a device array and on the ndarray with its values give the same
results, on the host build (CHAINRULE_CUDA_EMULATE=1) or a GPU."""
import ml_dtypes
import numpy as np
import pytest

import chainrule as cr
from chainrule_cuda import DeviceArray

from runtime_support import needs_device

pytestmark = needs_device

RNG = np.random.default_rng(0)


def dev(a):
    return DeviceArray.from_host(np.asarray(a))


def same(got, want):
    assert type(got) is DeviceArray, type(got)
    host = got.get()
    assert host.shape == np.shape(want) and host.dtype == np.asarray(want).dtype, \
        (host.shape, host.dtype, np.shape(want), np.asarray(want).dtype)
    np.testing.assert_allclose(host.astype(np.float64) if host.dtype == ml_dtypes.bfloat16
                               else host, np.asarray(want, host.dtype), rtol=1e-6, atol=1e-12)


X = RNG.uniform(-2, 2, (3, 4))
I = np.arange(12).reshape(3, 4)


def test_round_trip_every_dtype_and_layout():
    for dtype in [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
                  ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128]:
        a = (RNG.uniform(-3, 3, (2, 3)) * 3).astype(dtype)
        d = dev(a)
        assert d.dtype == a.dtype and d.shape == a.shape and d.strides == a.strides
        assert (d.get() == a).all() and (d.T.get() == a.T).all()
    assert dev(np.float64(2.5)).shape == () and dev(np.zeros((0, 3))).get().shape == (0, 3)


def test_implicit_conversion_raises_like_cupy():
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(dev(X))


@pytest.mark.parametrize("view", [
    lambda a: a.T, lambda a: a[1:, ::2], lambda a: a[::-1], lambda a: a[..., None, 1],
    lambda a: a.reshape(2, 6), lambda a: a.T.reshape(12), lambda a: a[:, 1:3].reshape(-1),
    lambda a: a.swapaxes(0, 1)[1], lambda a: np.flip(a, 1), lambda a: np.diagonal(a, 1),
    lambda a: np.expand_dims(a, (0, 2)), lambda a: np.broadcast_to(a[:1], (2, 3, 4)),
    lambda a: np.moveaxis(a.reshape(3, 2, 2), 0, -1), lambda a: a[2, 3], lambda a: a.real,
    lambda a: np.squeeze(a[None, :, :1])])
def test_views_and_reshapes(view):
    same(view(dev(X)), view(X))


@pytest.mark.parametrize("key", [
    [0, 2], (slice(None), [3, 0, 0]), ([0, 2], [1, 3]), (np.array([[0], [2]]), [1, 2]),
    X > 0, (slice(1, None), np.array([True, False, True, True])), ([-1, 0], slice(None, None, -2)),
    (None, [1], Ellipsis, 2), np.array([], dtype=np.int64)])
def test_advanced_indexing(key):
    same(dev(X)[key], X[key])
    device_key = tuple(dev(k) if isinstance(k, np.ndarray) else k for k in key) \
        if isinstance(key, tuple) else dev(key) if isinstance(key, np.ndarray) else key
    same(dev(X)[device_key], X[key])


def test_index_out_of_range_is_numpys_index_error():
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        dev(X)[[0, 5]]
    with pytest.raises(IndexError, match="out of bounds"):
        dev(X)[3]


@pytest.mark.parametrize("key, value", [
    ((slice(None), 1), 7.0), ((1,), np.float64(-1)), (([0, 2], [1, 3]), -5.0),
    ((X > 0,), 0.0), (([2, 0],), "row"), ((Ellipsis, [0]), "column"), ((slice(None, None, -1),), "all")])
def test_setitem(key, value):
    want = X.copy()
    if value == "row":
        value = np.arange(4.0)
    elif value == "column":
        value = np.arange(3.0).reshape(3, 1)
    elif value == "all":
        value = X * 2
    want[key] = value
    got = dev(X)
    got[key] = dev(value) if isinstance(value, np.ndarray) and value.ndim else value
    same(got, want)


def test_setitem_writes_infinities_and_nans_exactly():
    want, got = X.copy(), dev(X)
    want[[0, 2], [1, 1]] = [np.inf, np.nan]
    got[[0, 2], [1, 1]] = dev(np.array([np.inf, np.nan]))
    np.testing.assert_array_equal(got.get(), want)


def test_add_at_accumulates_repeated_indices():
    want, got = np.zeros(5), dev(np.zeros(5))
    np.add.at(want, [0, 1, 1, 4], [1.0, 2.0, 3.0, 4.0])
    np.add.at(got, dev(np.array([0, 1, 1, 4])), dev(np.array([1.0, 2.0, 3.0, 4.0])))
    same(got, want)


@pytest.mark.parametrize("call", [
    lambda a, b: a + b, lambda a, b: a * 2 - b / 3, lambda a, b: a ** 2, lambda a, b: -a,
    lambda a, b: np.exp(a), lambda a, b: np.maximum(a, b[0]), lambda a, b: a > b,
    lambda a, b: (a > 0) & (b < 0), lambda a, b: a // 0.7, lambda a, b: a % 0.7,
    lambda a, b: np.where(a > b, a, 0.5), lambda a, b: np.clip(a, -1, 1),
    lambda a, b: abs(a.astype(np.complex128) * 1j + b), lambda a, b: np.arctan2(a, b),
    lambda a, b: np.logaddexp(a, b), lambda a, b: a.astype(np.float32) + np.float64(1),
    lambda a, b: a.astype(np.int32) + 1.5, lambda a, b: a.astype(np.int8) * 3,
    lambda a, b: np.heaviside(a, 0.5), lambda a, b: np.isfinite(a / 0.0),
    lambda a, b: np.arcsin(a.astype(np.complex128) / 3)])
def test_ufuncs_promote_like_numpy(call):
    b = RNG.uniform(-2, 2, (3, 4))
    with np.errstate(all="ignore"):
        same(call(dev(X), dev(b)), call(X, b))


def test_ufunc_out_and_in_place_operators():
    got, want = dev(X), X.copy()
    got += 1
    want += 1
    got *= dev(np.arange(4.0))
    want *= np.arange(4.0)
    same(got, want)
    out = dev(np.zeros((3, 4)))
    np.multiply(dev(X), 2, out=out)
    same(out, X * 2)


@pytest.mark.parametrize("call", [
    lambda a: a.sum(), lambda a: a.sum(0), lambda a: np.sum(a, (0, 1), keepdims=True),
    lambda a: a.mean(1), lambda a: a.max(), lambda a: a.min(0), lambda a: a.prod(1),
    lambda a: np.var(a, 0, ddof=1), lambda a: np.std(a), lambda a: a.argmax(1),
    lambda a: a.argmin(), lambda a: np.cumsum(a, 1), lambda a: np.all(a > -1, 0),
    lambda a: np.any(a > 1.9), lambda a: (a > 0).sum(1), lambda a: np.add.reduce(a, 1),
    lambda a: np.maximum.reduce(a, 0, initial=0.5), lambda a: np.count_nonzero(a > 0, 1),
    lambda a: np.max(a[:0], 0, initial=-np.inf)])
def test_reductions(call):
    same(call(dev(X)), call(X))


@pytest.mark.parametrize("call", [
    lambda a: a @ a.T, lambda a: np.matmul(a[None], a.T), lambda a: np.dot(a[0], a[1]),
    lambda a: np.outer(a[0], a[1]), lambda a: np.einsum("ij,kj->ik", a, a),
    lambda a: np.einsum("ii->i", a[:, :3]), lambda a: np.einsum("ij->", a),
    lambda a: np.tensordot(a, a, ([1], [1])), lambda a: np.concatenate([a, a[:1]], 0),
    lambda a: np.stack([a, a], -1), lambda a: np.split(a, [1, 3], 1)[1],
    lambda a: np.take_along_axis(a, np.argsort(a, 1), 1), lambda a: np.take(a, [2, 0], 1),
    lambda a: np.pad(a, ((1, 0), (0, 2))), lambda a: np.tril(a, -1), lambda a: np.triu(a),
    lambda a: np.roll(a, 1, 1), lambda a: np.tile(a[0], (2, 1)), lambda a: np.trace(a),
    lambda a: np.repeat(a, 2, 0), lambda a: np.cross(a[:, :3], a[:, 1:]),
    lambda a: np.sort(a, 1), lambda a: np.linalg.inv(a[:, :3]), lambda a: np.zeros_like(a),
    lambda a: np.full_like(a, 3, dtype=np.int64), lambda a: np.zeros((2, 2), like=a),
    lambda a: a.view(np.complex128), lambda a: np.nan_to_num(a / 0.0)])
def test_functions(call):
    with np.errstate(all="ignore"):
        same(call(dev(X)), call(X))


def test_unknown_function_is_numpys_type_error():
    with pytest.raises(TypeError, match="no implementation found"):
        np.histogram2d(dev(X[0]), dev(X[1]))


def test_host_arrays_in_an_operation_are_the_mixed_device_error():
    message = "Expected all tensors to be on the same device, but found at least two " \
              "devices, cuda:0 and cpu!"
    for call in (lambda: dev(X) + X, lambda: X * dev(X), lambda: np.concatenate([dev(X), X]),
                 lambda: np.where(X > 0, dev(X), 0.0)):
        with pytest.raises(RuntimeError, match=message.replace("!", "")):
            call()
    same(dev(X) + np.array(2.0), X + 2.0)          # 0-d host values join


def test_memory_is_freed_with_the_last_view():
    stats = cr.cuda.memory_allocated()
    a = DeviceArray.empty((1024,), np.float64)
    view = a[10:]
    del a
    assert cr.cuda.memory_allocated() >= stats + 8192
    del view
    assert cr.cuda.memory_allocated() == stats
