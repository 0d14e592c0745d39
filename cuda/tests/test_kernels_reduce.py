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
R_SHAPES = SHAPES + [(3, 700), (2, 1100)]  # few outputs, long rows: the two-pass path


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
