"""NumPy functions on DeviceArrays that used to go through the host (Note [host-run
functions] in chainrule_cuda/_functions.py): sort, argsort and nonzero run their
kernels, np.repeat with counts and np.pad's index modes stay on the device, and only
np.linalg's decompositions are host-run."""
import ml_dtypes
import numpy as np
import pytest

import chainrule as cr
from chainrule_cuda import DeviceArray, _functions

from host_copies import counted_copies
from runtime_support import needs_device

pytestmark = needs_device

RNG = np.random.default_rng(1)
REAL = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
        ml_dtypes.bfloat16, np.float32, np.float64]


def dev(a):
    return DeviceArray.from_host(np.asarray(a))


def _values(dtype, shape):
    a = RNG.integers(-3, 4, shape).astype(np.float64)       # ties on purpose
    if np.dtype(dtype).kind in "fV":
        a[0, 1], a[1, 0] = np.nan, -np.inf
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", REAL, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_and_argsort_are_numpys_stable_sort_without_host_copies(dtype, axis):
    a = _values(dtype, (5, 7))
    d = dev(a)[:, ::-1]                                     # non-contiguous
    sortable = a[:, ::-1].astype(np.float32) if dtype is ml_dtypes.bfloat16 else a[:, ::-1]
    with counted_copies() as copies:
        values, order = np.sort(d, axis=axis), np.argsort(d, axis=axis)
    assert copies.to_host == 0 and copies.to_device == 0
    np.testing.assert_array_equal(order.get(), np.argsort(sortable, axis=axis, kind="stable"))
    np.testing.assert_array_equal(values.get().astype(np.float64),
                                  np.sort(sortable, axis=axis).astype(np.float64))


def test_sort_method_sorts_in_place():
    a = _values(np.float64, (3, 4))
    d = dev(a)
    d.sort(axis=0)
    np.testing.assert_array_equal(d.get(), np.sort(a, axis=0))


@pytest.mark.parametrize("shape", [(4, 5), (7,), (2, 0, 3), (2, 3, 4)])
def test_nonzero_reads_back_only_its_count(shape):
    a = RNG.integers(0, 3, shape) * (RNG.random(shape) < 0.5)
    d = dev(a)
    with counted_copies() as copies:
        found = np.nonzero(d)
    assert copies.scalar_reads == (1 if a.size else 0)
    assert copies.to_host == 0 and copies.to_device == 0
    assert len(found) == a.ndim
    for got, want in zip(found, np.nonzero(a)):
        np.testing.assert_array_equal(got.get(), want)
    np.testing.assert_array_equal(np.argwhere(d).get(), np.argwhere(a))
    np.testing.assert_array_equal(np.flatnonzero(d).get(), np.flatnonzero(a))


def test_tensor_nonzero_masked_select_and_mask_indexing_on_the_device():
    x = cr.tensor(RNG.normal(size=(4, 6)), device="cuda")
    mask = x > 0.3
    with counted_copies() as copies:
        picked, rows, nz = x[mask], cr.masked_select(x, mask), mask.nonzero()
    assert copies.to_host == 0          # (constants made from shapes may go over)
    host = x.cpu().numpy()
    np.testing.assert_array_equal(picked.cpu().numpy(), host[host > 0.3])
    np.testing.assert_array_equal(rows.cpu().numpy(), host[host > 0.3])
    np.testing.assert_array_equal(nz.cpu().numpy(), np.argwhere(host > 0.3))


def test_topk_sort_and_median_of_tensors_copy_no_data_to_the_host():
    x = cr.tensor(_values(np.float64, (4, 6)), device="cuda")
    with counted_copies() as copies:
        top, srt, med = cr.topk(x, 3), cr.sort(x, 1, descending=True), cr.median(x, 1)
    assert copies.to_host == 0
    host = cr.tensor(x.cpu().numpy())
    # the values are the host's; among ties the device may pick other indices (the
    # host replays the reference's CPU choice; its CUDA kernels choose differently
    # too), each pointing at its value
    for got, want in [(top, cr.topk(host, 3)), (srt, cr.sort(host, 1, descending=True)),
                      (med, cr.median(host, 1))]:
        values, indices = got.values.cpu().numpy(), got.indices.cpu().numpy()
        np.testing.assert_array_equal(values, want.values.numpy())
        picked = np.take_along_axis(host.numpy(), indices.reshape(len(indices), -1), 1)
        np.testing.assert_array_equal(picked.reshape(values.shape), values)


@pytest.mark.parametrize("repeats, axis", [([1, 0, 2], 0), ([2, 2, 0, 1], 1), (3, None),
                                           ([0, 0, 0], 0)])
def test_repeat_with_counts_stays_on_the_device(repeats, axis):
    a = np.arange(12.0).reshape(3, 4)
    counts = repeats if isinstance(repeats, int) else dev(np.array(repeats))
    with _functions_never_on_host():
        got = np.repeat(dev(a), counts, axis=axis)
    np.testing.assert_array_equal(got.get(), np.repeat(a, repeats, axis=axis))


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap"])
def test_pad_index_modes_stay_on_the_device(mode):
    a = np.arange(12.0).reshape(3, 4)
    with _functions_never_on_host():
        got = np.pad(dev(a), ((1, 2), (2, 1)), mode=mode)
    np.testing.assert_array_equal(got.get(), np.pad(a, ((1, 2), (2, 1)), mode=mode))


def test_only_lapack_type_decompositions_and_ffts_are_host_run():
    # np.linalg's decompositions and np.fft's n-dimensional transforms (no cuFFT binding)
    assert _functions.HOST_RUN
    assert all(getattr(np.linalg, f.__name__, None) is f or getattr(np.fft, f.__name__, None)
               is f for f in _functions.HOST_RUN)
    with pytest.raises(TypeError, match="lexsort"):
        np.lexsort((dev([1, 2, 2]),))       # no device implementation: NumPy's TypeError


def test_sets_and_counting_on_the_device():
    a = np.array([3, 1, 3, 2, 7, 1, 1])
    f = np.array([2.0, np.nan, 1.0, np.nan, 2.0, -0.5])
    s, q = np.array([1.0, 2.0, 2.0, 5.0]), np.array([[0.0, 2.0], [2.5, 9.0]])
    with _functions_never_on_host(), counted_copies() as copies:
        got = [np.unique(dev(a), return_inverse=True, return_counts=True), np.unique(dev(f)),
               np.bincount(dev(a)), np.bincount(dev(a), dev(a * 0.5), minlength=10),
               np.searchsorted(dev(s), dev(q)), np.searchsorted(dev(s), dev(q), side="right"),
               np.isin(dev(a), dev([1, 7])), np.isin(dev(a), dev([1, 7]), invert=True),
               np.diff(dev(a)), np.diff(dev(f), 2)]
    assert copies.to_host == 0
    want = [np.unique(a, return_inverse=True, return_counts=True), np.unique(f),
            np.bincount(a), np.bincount(a, a * 0.5, minlength=10),
            np.searchsorted(s, q), np.searchsorted(s, q, side="right"),
            np.isin(a, [1, 7]), np.isin(a, [1, 7], invert=True), np.diff(a), np.diff(f, 2)]
    for g, w in zip(got, want):
        for x, y in zip(g if isinstance(g, tuple) else (g,), w if isinstance(w, tuple) else (w,)):
            np.testing.assert_array_equal(x.get(), y)


class _functions_never_on_host:
    def __enter__(self):
        self.saved = _functions.on_host
        _functions.on_host = _fail

    def __exit__(self, *exc):
        _functions.on_host = self.saved


def _fail(func, *args, **kwargs):
    raise AssertionError(f"{func.__name__} went through the host")


def test_set_functions_of_tensors_equal_the_cpus():
    host = cr.tensor([3, 1, 3, 2, 7, 1, 1])
    x, rows = host.cuda(), cr.tensor([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 1.0]])
    calls = [lambda t: cr.unique(t, return_inverse=True, return_counts=True),
             lambda t: cr.unique_consecutive(t, return_counts=True), cr.bincount,
             lambda t: cr.isin(t, cr.tensor([1, 7], device=t.device)),
             lambda t: cr.searchsorted(cr.tensor([1, 2, 5], device=t.device), t),
             lambda t: cr.mode(t), lambda t: cr.mode(rows.to(t.device))]
    with counted_copies() as copies:
        got = [call(x) for call in calls]
    assert copies.to_host == 0
    for g, call in zip(got, calls):
        for a, b in zip(g if isinstance(g, tuple) else (g,), _tuple(call(host))):
            assert a.device.type == "cuda"
            np.testing.assert_array_equal(a.cpu().numpy(), b.numpy())


def _tuple(out):
    return out if isinstance(out, tuple) else (out,)
