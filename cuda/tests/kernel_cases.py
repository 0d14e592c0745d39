"""Generated inputs for the kernel tests: values per dtype and domain, laid out in
every memory layout the kernels must handle, and per-dtype tolerances."""
import ml_dtypes
import numpy as np

from kernel_abi import DTYPES

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = [d for d in DTYPES if d.kind in "biu"]
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
KINDS = {"i": INTS, "f": FLOATS, "c": COMPLEX}

# (out shape, operand shapes relative to it are made by the callers)
SHAPES = [(), (0,), (3, 0, 2), (1031,), (5, 7), (2, 3, 5), (4, 1, 3)]

TOL = {np.dtype(np.float16): 4e-3, BF16: 2e-2, np.dtype(np.float32): 2e-5,
       np.dtype(np.float64): 1e-10, np.dtype(np.complex64): 2e-5,
       np.dtype(np.complex128): 1e-10}


def kinds_dtypes(kinds):
    return [d for k in kinds for d in KINDS[k]]


def is_float(dt):
    return dt.kind in "fc" or dt == BF16


def values(rng, shape, dt, domain="any"):
    """Random values of dtype dt in a domain: any, pos, unit (-1, 1), ge1, nonzero,
    small (|x| <= 4, for int exponents), shift (0..9), special (with nan/inf/0)."""
    n = int(np.prod(shape, dtype=np.int64))
    if dt == np.bool_:
        v = rng.integers(0, 2, n)
    elif dt.kind in "iu":
        lo = 0 if dt.kind == "u" or domain in ("pos", "shift", "small", "ge1") else -6
        hi = {"shift": 10, "small": 4}.get(domain, 7)
        v = rng.integers(lo, hi, n)
        if domain in ("nonzero", "pos", "ge1"):
            v[v == 0] = 1
    else:
        v = _float_values(rng, n, domain)
        if dt.kind == "c":  # special values only in the real part
            v = v + 1j * _float_values(rng, n, "any" if domain == "special" else domain)
    return np.asarray(v).astype(dt).reshape(shape)


def _float_values(rng, n, domain):
    if domain == "pos":
        return rng.uniform(0.1, 3.0, n)
    if domain == "unit":
        return rng.uniform(-0.95, 0.95, n)
    if domain == "ge1":
        return rng.uniform(1.0, 3.0, n)
    v = rng.uniform(-3.0, 3.0, n)
    if domain == "nonzero":
        v[np.abs(v) < 0.2] = 0.5
    if domain == "special" and n:
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0])
        idx = rng.integers(0, n, max(1, n // 3))
        v[idx] = specials[rng.integers(0, len(specials), len(idx))]
    return v


def layouts(x):
    """x laid out as: contiguous, Fortran order (transposed), negative strides through
    a strided base, and (for ndim >= 1) broadcast by stride 0 along dim 0."""
    yield "contiguous", x
    if x.size:  # contiguous but not 16-byte aligned: the element path, not the packed one
        base = np.zeros(x.size + 1, x.dtype)
        v = base[1:].reshape(x.shape)
        v[...] = x
        yield "unaligned", v
    if x.ndim >= 2:
        yield "transposed", np.asfortranarray(x)
    if x.ndim >= 1:
        base = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        v = base[..., ::-2][::-1]
        v[...] = x
        yield "negative", v
        if x.shape[0] > 1:
            yield "broadcast", np.broadcast_to(x[:1], x.shape)


def empty_out(shape, dt, transposed=False):
    if transposed and len(shape) >= 2:
        return np.empty(shape[::-1], dt).T
    return np.empty(shape, dt)


def as_ref_input(x):
    """The values in the type the reference computes in: float64/complex128 for
    floats (the kernels compute half types in float32; the tolerance covers it)."""
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if is_float(x.dtype):
        return x.astype(np.float64)
    return x


def assert_close(got, ref, dt, what):
    ref = np.asarray(ref)
    if got.dtype.kind in "biu" and not is_float(got.dtype):
        np.testing.assert_array_equal(got, ref.astype(got.dtype), err_msg=what)
        return
    tol = TOL[got.dtype]
    exp = ref.astype(got.dtype)  # the reference rounded to the output dtype
    g, e = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64), exp
    e = e.astype(g.dtype)
    np.testing.assert_allclose(g, e, rtol=tol, atol=tol, equal_nan=True, err_msg=what)
