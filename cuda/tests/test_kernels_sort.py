"""cr_sort (Note [bitonic sort through global memory]) against NumPy's stable sort,
along every dim, in every real dtype, with NaN and ties, ascending and descending."""
import numpy as np
import pytest

from kernel_abi import DTYPES, call, view
from kernel_cases import as_ref_input, empty_out, is_float, layouts, values

SHAPES = [(), (1,), (5,), (7, 3), (2, 33, 4), (3, 0), (1000,)]


def _reference(x, dim, descending):
    """Stable order; NaN after numbers ascending, before them descending."""
    xr = as_ref_input(x).astype(np.float64) if is_float(x.dtype) else x.astype(np.int64)
    xr = xr.reshape(x.shape or (1,))
    if not descending:
        return np.argsort(xr, axis=dim, kind="stable")
    key = np.where(np.isnan(xr), -np.inf, -xr) if is_float(x.dtype) else -xr
    order = np.argsort(key, axis=dim, kind="stable")
    if is_float(x.dtype):  # NaN first, then the rest, each stable
        nan_first = np.argsort(~np.isnan(np.take_along_axis(xr, order, dim)), axis=dim, kind="stable")
        order = np.take_along_axis(order, nan_first, dim)
    return order


@pytest.mark.parametrize("dt", [d for d in DTYPES if d.kind != "c"], ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dt, descending):
    rng = np.random.default_rng(19)
    for shape in SHAPES:
        x0 = values(rng, shape, dt, "special" if is_float(dt) else "small")
        if is_float(dt) and x0.size:
            x0 = np.where(rng.random(shape) < 0.3, dt.type(1.0), x0).astype(dt)  # ties
        for dim in range(max(len(shape), 1)):
            for layout, x in layouts(x0):
                vals, idx = empty_out(x.shape, dt, transposed=True), empty_out(x.shape, np.int64)
                call("sort", view(vals), view(idx), view(x), dim, int(descending))
                order = _reference(x, dim, descending).reshape(x.shape)
                what = f"{dt} {shape} dim={dim} {layout} desc={descending}"
                np.testing.assert_array_equal(idx, order, err_msg=what)
                xs = x.reshape(x.shape or (1,))
                expected = np.take_along_axis(xs, order.reshape(xs.shape), dim).reshape(x.shape)
                np.testing.assert_array_equal(as_ref_input(vals), as_ref_input(expected), err_msg=what)


def test_indices_only_and_values_only():
    x = np.array([3.0, 1.0, 2.0])
    idx = np.empty(3, np.int64)
    call("sort", None, view(idx), view(x), 0, 0)
    np.testing.assert_array_equal(idx, [1, 2, 0])
    vals = np.empty(3)
    call("sort", view(vals), None, view(x), 0, 1)
    np.testing.assert_array_equal(vals, [3.0, 2.0, 1.0])
