"""Reduction, arg-reduction, scan and softmax kernels of the host build against NumPy,
over every subset of dims, in every dtype each op supports, on generated layouts."""
import itertools
import warnings

import numpy as np
import pytest
import scipy.special as sp

from kernel_abi import KernelError, call, op_codes, view
from kernel_cases import (SHAPES, as_ref_input, assert_close, empty_out, is_float,
                          kinds_dtypes, layouts, values)

REDUCE = op_codes("reduce")
ARG = op_codes("arg_reduce")
SCAN = op_codes("scan")
SOFTMAX = op_codes("softmax")
R_SHAPES = SHAPES + [(3, 700), (2, 1100), (700, 3)]  # few outputs, long reductions: two passes


def _real(dt):
    return {"c": np.dtype(np.complex64 if dt == np.complex64 else np.complex128)}.get(dt.kind, dt)


def _norm(x, axis, keepdims, p):
    a = np.abs(x)
    if p == np.inf:
        return np.max(a, axis=axis, keepdims=keepdims, initial=0)
    if p == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdims).astype(np.float64)
    return np.sum(a ** p, axis=axis, keepdims=keepdims) ** (1 / p)


def _int_sum_dtype(dt):
    return np.dtype(np.int64) if dt.kind in "biu" and not is_float(dt) else dt


def _real_dtype(dt):
    return {np.complex64: np.dtype(np.float32), np.complex128: np.dtype(np.float64)}.get(dt.type, dt)


# name: (kinds, reference(x, axis, keepdims, arg), arg, output dtype(in dtype), domain)
REDUCTIONS = {
    "sum": ("ifc", lambda x, ax, k, s: np.sum(x, axis=ax, keepdims=k), 0, _int_sum_dtype, "any"),
    "prod": ("ifc", lambda x, ax, k, s: np.prod(x, axis=ax, keepdims=k), 0, _int_sum_dtype, "small"),
    "amax": ("if", lambda x, ax, k, s: np.max(x, axis=ax, keepdims=k), 0, lambda d: d, "special"),
    "amin": ("if", lambda x, ax, k, s: np.min(x, axis=ax, keepdims=k), 0, lambda d: d, "special"),
    "mean": ("fc", lambda x, ax, k, s: np.mean(x, axis=ax, keepdims=k), 0, lambda d: d, "any"),
    "nansum": ("if", lambda x, ax, k, s: np.nansum(x, axis=ax, keepdims=k), 0, _int_sum_dtype, "special"),
    "nanmean": ("f", lambda x, ax, k, s: np.nanmean(x, axis=ax, keepdims=k), 0, lambda d: d, "special"),
    "all": ("ifc", lambda x, ax, k, s: np.all(x, axis=ax, keepdims=k), 0, lambda d: np.dtype(bool), "small"),
    "any": ("ifc", lambda x, ax, k, s: np.any(x, axis=ax, keepdims=k), 0, lambda d: np.dtype(bool), "small"),
    "var": ("fc", lambda x, ax, k, s: np.var(x, axis=ax, keepdims=k, ddof=s), 1, _real_dtype, "any"),
    "std": ("fc", lambda x, ax, k, s: np.std(x, axis=ax, keepdims=k, ddof=s), 0, _real_dtype, "any"),
    "norm": ("fc", _norm, 3, _real_dtype, "any"),
    "logsumexp": ("f", lambda x, ax, k, s: np.log(np.sum(np.exp(x), axis=ax, keepdims=k)), 0, lambda d: d, "any"),
    "count_nonzero": ("ifc", lambda x, ax, k, s: np.count_nonzero(x, axis=ax, keepdims=k), 0,
                      lambda d: np.dtype(np.int64), "small"),
}


def _masks(ndim):
    for r in range(ndim + 1):
        for dims in itertools.combinations(range(ndim), r):
            yield dims, sum(1 << d for d in dims)


@pytest.mark.parametrize("name,dt", [(n, d) for n, s in REDUCTIONS.items() for d in kinds_dtypes(s[0])],
                         ids=str)
def test_reduce(name, dt):
    kinds, ref, arg, out_dt, domain = REDUCTIONS[name]
    rng = np.random.default_rng(7)
    for shape in R_SHAPES:
        x0 = values(rng, shape, dt, domain if is_float(dt) or domain != "special" else "any")
        for dims, mask in _masks(len(shape)):
            out_shape = tuple(1 if d in dims else n for d, n in enumerate(shape))
            empty_reduce = any(shape[d] == 0 for d in dims) or (not dims and 0 in shape)
            if name in ("amax", "amin") and empty_reduce and 0 not in out_shape:
                continue
            for layout, x in layouts(x0):
                out = empty_out(out_shape, out_dt(dt), transposed=True)
                call("reduce", REDUCE[name], view(out), view(x), mask, float(arg))
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    expected = ref(as_ref_input(x), dims, True, arg)
                assert_close(out, expected, out.dtype, f"{name} {dt} {shape} dims={dims} {layout}")


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, np.inf, 0.5])
def test_norm_orders(p):
    x = values(np.random.default_rng(8), (4, 9), np.dtype(np.float64))
    out = np.empty((4, 1))
    call("reduce", REDUCE["norm"], view(out), view(x), 0b10, p)
    np.testing.assert_allclose(out, _norm(x, 1, True, p), rtol=1e-12)


def test_empty_max_is_an_error():
    with pytest.raises(KernelError, match=r"amax\(\): Expected reduction dim to have non-zero size"):
        call("reduce", REDUCE["amax"], view(np.empty((3, 1))), view(np.empty((3, 0))), 0b10, 0.0)


def _line_cases(rng, dt, domain="any", extra=()):
    """(x laid out, dim) over the shapes, every dim, every layout; 0-d uses dim 0."""
    for shape in R_SHAPES + list(extra):
        x0 = values(rng, shape, dt, domain)
        for dim in range(max(len(shape), 1)):
            for layout, x in layouts(x0):
                yield x, dim, f"{dt} {shape} dim={dim} {layout}"


def _np_dim(x, dim):
    return dim if x.ndim else None


@pytest.mark.parametrize("name,dt", [(n, d) for n in ARG for d in kinds_dtypes("if")], ids=str)
def test_arg_reduce(name, dt):
    rng = np.random.default_rng(9)
    for x, dim, what in _line_cases(rng, dt, "special" if is_float(dt) else "small"):
        out_shape = tuple(1 if d == dim else n for d, n in enumerate(x.shape))
        if x.ndim and x.shape[dim] == 0:
            if 0 not in out_shape:
                with pytest.raises(KernelError, match=f"Expected reduction dim {dim} to have non-zero size"):
                    call("arg_reduce", ARG[name], None, view(np.empty(out_shape, np.int64)), view(x), dim)
            continue
        vals, idx = empty_out(out_shape, dt, transposed=True), np.empty(out_shape, np.int64)
        call("arg_reduce", ARG[name], view(vals), view(idx), view(x), dim)
        fn = np.argmax if name == "argmax" else np.argmin
        expected = fn(x, axis=_np_dim(x, dim), keepdims=True).reshape(out_shape)
        np.testing.assert_array_equal(idx, expected, err_msg=what)
        ref_vals = np.take_along_axis(x, expected, dim) if x.ndim else x
        assert_close(vals, as_ref_input(ref_vals), dt, what)


def _cum_extreme(x, dim, is_max):
    """Reference cummax/cummin (values, indices): NaN sticks, ties take the later index."""
    xm = np.moveaxis(as_ref_input(x), dim, -1).copy()
    idx = np.zeros(xm.shape, np.int64)
    for line in np.ndindex(xm.shape[:-1]):
        best, at = None, 0
        for r in range(xm.shape[-1]):
            v = xm[line + (r,)]
            if r == 0 or v != v or (best == best and (v >= best if is_max else v <= best)):
                best, at = v, r
            xm[line + (r,)], idx[line + (r,)] = best, at
    return np.moveaxis(xm, -1, dim), np.moveaxis(idx, -1, dim)


LONG_LINES = [(3000,), (2, 2500)]  # few long lines: the chunked scan (Note [chunked scans])

SCANS = {
    "cumsum": ("ifc", lambda x, d: np.cumsum(x, axis=d), _int_sum_dtype, "any"),
    "cumprod": ("ifc", lambda x, d: np.cumprod(x, axis=d), _int_sum_dtype, "unit"),  # no overflow
    "logcumsumexp": ("f", lambda x, d: np.logaddexp.accumulate(x, axis=d), lambda d: d, "any"),
    "cummax": ("if", lambda x, d: _cum_extreme(x, d, True), lambda d: d, "special"),
    "cummin": ("if", lambda x, d: _cum_extreme(x, d, False), lambda d: d, "special"),
}


@pytest.mark.parametrize("name,dt", [(n, d) for n, s in SCANS.items() for d in kinds_dtypes(s[0])], ids=str)
def test_scan(name, dt):
    kinds, ref, out_dt, domain = SCANS[name]
    rng = np.random.default_rng(10)
    for x, dim, what in _line_cases(rng, dt, domain if is_float(dt) else "small", LONG_LINES):
        out = empty_out(x.shape, out_dt(dt), transposed=True)
        xr = as_ref_input(x).reshape(x.shape or (1,))
        if name in ("cummax", "cummin"):
            idx = empty_out(x.shape, np.int64)
            call("scan_with_indices", SCAN[name], view(out), view(idx), view(x), dim)
            ref_vals, ref_idx = ref(xr, dim)
            np.testing.assert_array_equal(idx, ref_idx.reshape(x.shape), err_msg=what)
        else:
            call("scan", SCAN[name], view(out), view(x), dim)
            with np.errstate(all="ignore"):
                ref_vals = ref(xr, dim)
        assert_close(out, ref_vals.reshape(x.shape), out.dtype, f"{name} {what}")


@pytest.mark.parametrize("name,dt", [(n, d) for n in SOFTMAX for d in kinds_dtypes("f")], ids=str)
def test_softmax(name, dt):
    rng = np.random.default_rng(11)
    for x, dim, what in _line_cases(rng, dt):
        out = empty_out(x.shape, dt, transposed=True)
        call("softmax", SOFTMAX[name], view(out), view(x), dim)
        xr = as_ref_input(x).reshape(x.shape or (1,))
        z = xr - np.max(xr, axis=dim, keepdims=True, initial=-np.inf)
        lse = np.log(np.sum(np.exp(z), axis=dim, keepdims=True))
        expected = z - lse if name == "log_softmax" else np.exp(z - lse)
        assert_close(out, expected.reshape(x.shape), dt, f"{name} {what}")


@pytest.mark.parametrize("repeat", [1, 200], ids=["short rows", "long rows"])
def test_softmax_is_stable_for_large_and_infinite_inputs(repeat):
    x = np.tile(np.array([[1000.0, 1001.0, -np.inf], [-np.inf, -np.inf, -np.inf]]), (1, repeat))
    out = np.empty_like(x)
    call("softmax", SOFTMAX["softmax"], view(out), view(x), 1)
    np.testing.assert_allclose(out[0, :3], np.array([1, np.e, 0.0]) / (1 + np.e) / repeat)
    assert np.isnan(out[1]).all()  # 0 / 0, as the reference gives


def test_logsumexp_with_infinities_and_large_values():
    x = np.array([[1000.0, 1000.0, -np.inf], [-np.inf, -np.inf, -np.inf], [np.inf, 1.0, np.inf],
                  [np.nan, 1.0, 2.0]])
    for xs in (x, np.repeat(x, 400, axis=1)):  # one pass and two passes
        out = np.empty((4, 1))
        call("reduce", REDUCE["logsumexp"], view(out), view(xs), 0b10, 0.0)
        n = xs.shape[1] // 3
        expected = [1000.0 + np.log(2 * n), -np.inf, np.inf, np.nan]
        np.testing.assert_allclose(out[:, 0], expected, rtol=1e-12)


def test_int64_sums_and_extremes_are_exact():
    x = np.array([[2 ** 62, 2 ** 62, 5], [-(2 ** 63), 2 ** 63 - 1, 1]], np.int64)
    out = np.empty((2, 1), np.int64)
    call("reduce", REDUCE["sum"], view(out), view(x), 0b10, 0.0)
    np.testing.assert_array_equal(out[:, 0], x.sum(axis=1))  # wraps like NumPy
    call("reduce", REDUCE["amax"], view(out), view(x), 0b10, 0.0)
    np.testing.assert_array_equal(out[:, 0], [2 ** 62, 2 ** 63 - 1])
