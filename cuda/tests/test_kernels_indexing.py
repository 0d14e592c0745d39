"""Indexing kernels of the host build against NumPy: gather, scatter_add,
index_select, index_add, masked_fill, im2col/col2im; out-of-range indices are errors."""
import ctypes

import numpy as np
import pytest

from kernel_abi import DTYPES, KernelError, call, view
from kernel_cases import as_ref_input, assert_close, empty_out, is_float, layouts, values

SHAPES = [(5,), (4, 6), (3, 1, 5), (2, 0, 3), (7, 9)]


def _index(rng, shape, size):
    return rng.integers(0, max(size, 1), shape).astype(np.int64) if size else np.zeros(shape, np.int64)


def _crop(x, shape, dim):
    return x[tuple(slice(0, n) if d != dim else slice(None) for d, n in enumerate(shape))]


def _whole(rng, shape, dt):
    """Values that add exactly in every dtype (atomic adds round after each add)."""
    v = values(rng, shape, dt, "small")
    return v.astype(np.float64).round().astype(dt) if is_float(dt) and dt.kind != "c" else v


def _cases(rng, dt):
    for shape in SHAPES:
        x0 = _whole(rng, shape, dt)
        for dim in range(len(shape)):
            idx_shape = tuple(max(n - 1, 0) if d != dim else 4 for d, n in enumerate(shape))
            if shape[dim] == 0:
                idx_shape = tuple(0 if d == dim else n for d, n in enumerate(idx_shape))
            index = _index(rng, idx_shape, shape[dim])
            for layout, x in layouts(x0):
                yield x, dim, index, f"{dt} {shape} dim={dim} {layout}"


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_gather(dt):
    rng = np.random.default_rng(13)
    for x, dim, index, what in _cases(rng, dt):
        out = empty_out(index.shape, dt, transposed=True)
        call("gather", view(out), view(x), dim, view(index))
        expected = np.take_along_axis(_crop(x, index.shape, dim), index, dim)
        assert_close(out, as_ref_input(expected), dt, what)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_scatter_add(dt):
    rng = np.random.default_rng(14)
    for x, dim, index, what in _cases(rng, dt):
        src = _whole(rng, index.shape, dt)
        out = x.copy()
        for layout, o in layouts(out):
            if layout == "broadcast":
                continue
            before = o.copy()
            call("scatter_add", view(o), dim, view(index), view(src))
            expected = before.astype(np.int64) if not is_float(dt) and dt != np.bool_ else as_ref_input(before)
            coords = list(np.indices(index.shape))
            coords[dim] = index
            np.add.at(expected, tuple(coords), src if dt == np.bool_ else
                      (as_ref_input(src) if is_float(dt) else src.astype(np.int64)))
            assert_close(o, expected, dt, f"{what} out={layout}")


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_index_select(dt):
    rng = np.random.default_rng(15)
    for x, dim, index, what in _cases(rng, dt):
        for idx in (index.reshape(-1)[:5], index.reshape(-1)[:1].reshape(()) if index.size else index.reshape(-1)):
            shape = list(x.shape)
            shape[dim] = idx.size
            out = empty_out(tuple(shape), dt, transposed=True)
            call("index_select", view(out), view(x), dim, view(idx))
            expected = np.take(x, idx.reshape(-1), axis=dim)
            assert_close(out, as_ref_input(expected), dt, what)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_index_add(dt):
    rng = np.random.default_rng(16)
    for x, dim, index, what in _cases(rng, dt):
        idx = index.reshape(-1)[:6][::-1]  # negative stride, repeated entries
        shape = list(x.shape)
        shape[dim] = idx.size
        src = _whole(rng, tuple(shape), dt)
        out = x.copy()
        before = out.copy()
        call("index_add", view(out), dim, view(idx), view(src))
        ref = before if dt == np.bool_ else (as_ref_input(before) if is_float(dt) else before.astype(np.int64))
        add = src if dt == np.bool_ else (as_ref_input(src) if is_float(dt) else src.astype(np.int64))
        np.add.at(ref, (slice(None),) * dim + (idx,), add)
        assert_close(out, ref, dt, what)


@pytest.mark.parametrize("name", ["gather", "index_select"])
@pytest.mark.parametrize("bad", [3, -1])
def test_out_of_range_index_is_an_error(name, bad):
    x = np.arange(6.0).reshape(2, 3)
    index = np.array([[0, bad]], np.int64) if name == "gather" else np.array([0, bad], np.int64)
    out = np.empty((1, 2) if name == "gather" else (2, 2))
    message = (f"index {bad} is out of bounds for dimension 1 with size 3" if name == "gather"
               else "index out of range in self")
    with pytest.raises(KernelError, match=message):
        call(name, view(out), view(x), 1, view(index))


def test_scatter_add_out_of_range_is_an_error():
    out = np.zeros((2, 3))
    with pytest.raises(KernelError, match="index 5 is out of bounds for dimension 0 with size 2"):
        call("scatter_add", view(out), 0, view(np.array([[5]], np.int64)), view(np.ones((1, 1))))


def test_index_must_be_int64():
    with pytest.raises(KernelError, match="Expected dtype int64 for index, got int32"):
        call("gather", view(np.empty(2)), view(np.ones(3)), 0, view(np.zeros(2, np.int32)))


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_masked_fill(dt):
    rng = np.random.default_rng(17)
    for shape in [(), (5,), (4, 6), (3, 0), (3, 1, 5)]:
        mask = values(rng, shape[1:], np.dtype(np.bool_))
        for layout, o in layouts(values(rng, shape, dt, "small")):
            if layout == "broadcast":
                continue
            before = o.copy()
            call("masked_fill", view(o), view(mask), 3.0, 1.0)
            fill = np.array(3 + 1j if dt.kind == "c" else 3).astype(dt)
            np.testing.assert_array_equal(as_ref_input(o), as_ref_input(np.where(mask, fill, before)))


def _im2col_ref(x, k, s, p, d):
    n, c, h, w = x.shape
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    padded = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), x.dtype)
    padded[:, :, p[0]:p[0] + h, p[1]:p[1] + w] = x
    cols = np.zeros((n, c, k[0], k[1], oh, ow), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = padded[:, :, i * d[0]:i * d[0] + s[0] * oh:s[0], j * d[1]:j * d[1] + s[1] * ow:s[1]]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


CONV = [((2, 3, 5, 6), (3, 2), (1, 1), (0, 0), (1, 1)), ((1, 2, 7, 7), (3, 3), (2, 2), (1, 1), (1, 1)),
        ((2, 1, 6, 5), (2, 2), (1, 2), (1, 0), (2, 1))]


def _arr(v):
    return (ctypes.c_int64 * 2)(*v)


@pytest.mark.parametrize("dt", [d for d in DTYPES if d != np.bool_], ids=str)
def test_im2col_and_col2im(dt):
    rng = np.random.default_rng(18)
    for shape, k, s, p, d in CONV:
        x0 = values(rng, shape, dt, "small")
        for layout, x in layouts(x0):
            ref = _im2col_ref(as_ref_input(x) if is_float(dt) else x.astype(np.int64), k, s, p, d)
            cols = empty_out(ref.shape, dt, transposed=True)
            call("im2col", view(cols), view(x), _arr(k), _arr(s), _arr(p), _arr(d))
            assert_close(cols, ref, dt, f"im2col {shape} {layout}")
        # col2im is im2col's adjoint: <im2col(x), y> == <x, col2im(y)>
        y = values(rng, ref.shape, dt, "small")
        back = empty_out(shape, dt, transposed=True)
        call("col2im", view(back), view(y), _arr(k), _arr(s), _arr(p), _arr(d))
        probe = np.zeros(shape)
        expected = np.zeros(shape, np.complex128 if dt.kind == "c" else np.float64)
        flat = expected.reshape(-1)
        for e in range(probe.size):  # column e of the adjoint, by pushing each pixel through
            probe.reshape(-1)[:] = 0
            probe.reshape(-1)[e] = 1
            flat[e] = np.sum(_im2col_ref(probe, k, s, p, d) * as_ref_input(y).astype(flat.dtype))
        assert_close(back, expected, dt, f"col2im {shape}")


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_nonzero(dt):
    rng = np.random.default_rng(20)
    for shape in [(), (5,), (4, 6), (3, 0), (3, 1, 5), (2500,)]:
        for layout, x in layouts(values(rng, shape, dt, "small")):
            expected = np.argwhere(x)
            out = np.full((len(expected), x.ndim), -1, np.int64)
            call("nonzero", view(out), view(x))
            np.testing.assert_array_equal(out, expected, err_msg=f"{dt} {shape} {layout}")
