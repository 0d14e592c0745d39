"""Element-wise kernels of the host build against NumPy: every op in every dtype it
supports, on generated shapes and layouts (kernel_cases)."""
import warnings

import numpy as np
import pytest
import scipy.special as sp

from kernel_abi import CODE, DTYPES, KernelError, call, op_codes, view
from kernel_cases import (SHAPES, as_ref_input, assert_close, empty_out, is_float,
                          kinds_dtypes, layouts, values)

UNARY_CODES = op_codes("unary")
BINARY_CODES = op_codes("binary")
TERNARY_CODES = op_codes("ternary")


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _real_out(dt):
    return {np.complex64: np.dtype(np.float32), np.complex128: np.dtype(np.float64)}.get(dt.type, dt)


# name: (dtype kinds, domain, reference(x, arg), arg, output rule)
UNARY = {
    "neg": ("ifc", "any", lambda x, s: -x, 0, "same"),
    "abs": ("ifc", "any", lambda x, s: np.abs(x), 0, "real"),
    "sign": ("ifc", "special", lambda x, s: np.sign(x), 0, "same"),
    "exp": ("fc", "any", lambda x, s: np.exp(x), 0, "same"),
    "exp2": ("fc", "any", lambda x, s: np.exp2(x), 0, "same"),
    "expm1": ("fc", "any", lambda x, s: np.expm1(x), 0, "same"),
    "log": ("fc", "pos", lambda x, s: np.log(x), 0, "same"),
    "log2": ("fc", "pos", lambda x, s: np.log2(x), 0, "same"),
    "log10": ("fc", "pos", lambda x, s: np.log10(x), 0, "same"),
    "log1p": ("fc", "pos", lambda x, s: np.log1p(x), 0, "same"),
    "sqrt": ("fc", "pos", lambda x, s: np.sqrt(x), 0, "same"),
    "rsqrt": ("fc", "pos", lambda x, s: 1 / np.sqrt(x), 0, "same"),
    "square": ("ifc", "any", lambda x, s: np.square(x), 0, "same"),
    "reciprocal": ("fc", "nonzero", lambda x, s: 1 / x, 0, "same"),
    "sin": ("fc", "any", lambda x, s: np.sin(x), 0, "same"),
    "cos": ("fc", "any", lambda x, s: np.cos(x), 0, "same"),
    "tan": ("fc", "unit", lambda x, s: np.tan(x), 0, "same"),
    "asin": ("f", "unit", lambda x, s: np.arcsin(x), 0, "same"),
    "acos": ("f", "unit", lambda x, s: np.arccos(x), 0, "same"),
    "atan": ("f", "any", lambda x, s: np.arctan(x), 0, "same"),
    "sinh": ("fc", "any", lambda x, s: np.sinh(x), 0, "same"),
    "cosh": ("fc", "any", lambda x, s: np.cosh(x), 0, "same"),
    "tanh": ("fc", "any", lambda x, s: np.tanh(x), 0, "same"),
    "asinh": ("f", "any", lambda x, s: np.arcsinh(x), 0, "same"),
    "acosh": ("f", "ge1", lambda x, s: np.arccosh(x), 0, "same"),
    "atanh": ("f", "unit", lambda x, s: np.arctanh(x), 0, "same"),
    "sigmoid": ("fc", "any", lambda x, s: _sigmoid(x), 0, "same"),
    "erf": ("f", "any", lambda x, s: sp.erf(x), 0, "same"),
    "erfc": ("f", "any", lambda x, s: sp.erfc(x), 0, "same"),
    "erfinv": ("f", "unit", lambda x, s: sp.erfinv(x), 0, "same"),
    "lgamma": ("f", "pos", lambda x, s: sp.gammaln(x), 0, "same"),
    "digamma": ("f", "any", lambda x, s: sp.digamma(x), 0, "same"),
    "floor": ("if", "any", lambda x, s: np.floor(x) if is_float(x.dtype) else x, 0, "same"),
    "ceil": ("if", "any", lambda x, s: np.ceil(x) if is_float(x.dtype) else x, 0, "same"),
    "round": ("if", "any", lambda x, s: np.round(x, 1) if is_float(x.dtype) else x, 1, "same"),
    "trunc": ("if", "any", lambda x, s: np.trunc(x) if is_float(x.dtype) else x, 0, "same"),
    "isnan": ("ifc", "special", lambda x, s: np.isnan(x), 0, "bool"),
    "isinf": ("ifc", "special", lambda x, s: np.isinf(x), 0, "bool"),
    "isfinite": ("ifc", "special", lambda x, s: np.isfinite(x), 0, "bool"),
    "isposinf": ("if", "special", lambda x, s: np.isposinf(x), 0, "bool"),
    "isneginf": ("if", "special", lambda x, s: np.isneginf(x), 0, "bool"),
    "signbit": ("if", "special", lambda x, s: np.signbit(x), 0, "bool"),
    "logical_not": ("ifc", "special", lambda x, s: np.logical_not(x), 0, "bool"),
    "bitwise_not": ("i", "any", lambda x, s: np.invert(x), 0, "same"),
    "conj": ("ifc", "any", lambda x, s: np.conj(x), 0, "same"),
    "real": ("ifc", "any", lambda x, s: np.real(x), 0, "real"),
    "imag": ("fc", "any", lambda x, s: np.imag(x), 0, "real"),
    "angle": ("fc", "any", lambda x, s: np.angle(x), 0, "real"),
    "pow_scalar": ("ifc", "pos", lambda x, s: x ** (int(s) if x.dtype.kind in "biu" else s), 3, "same"),
    "rpow_scalar": ("fc", "any", lambda x, s: s ** x, 1.7, "same"),
    "add_scalar": ("ifc", "any", lambda x, s: x + x.dtype.type(s), 2, "same"),
    "mul_scalar": ("ifc", "any", lambda x, s: x * x.dtype.type(s), 3, "same"),
    "rsub_scalar": ("ifc", "any", lambda x, s: x.dtype.type(s) - x, 2, "same"),
    "rdiv_scalar": ("fc", "nonzero", lambda x, s: s / x, 2, "same"),
    "clamp_min": ("if", "special", lambda x, s: np.maximum(x, x.dtype.type(s)), 1, "same"),
    "clamp_max": ("if", "special", lambda x, s: np.minimum(x, x.dtype.type(s)), 1, "same"),
    "relu": ("if", "special", lambda x, s: np.where(x < 0, x.dtype.type(0), x), 0, "same"),
    "silu": ("f", "any", lambda x, s: x * _sigmoid(x), 0, "same"),
    "gelu": ("f", "any", lambda x, s: 0.5 * x * (1 + sp.erf(x / np.sqrt(2))), 0, "same"),
    "gelu_tanh": ("f", "any", lambda x, s: _gelu_tanh(x), 0, "same"),
    "softplus": ("f", "any", lambda x, s: np.log1p(np.exp(x)), 0, "same"),
    "log_sigmoid": ("f", "any", lambda x, s: -np.log1p(np.exp(-x)), 0, "same"),
    "leaky_relu": ("f", "any", lambda x, s: np.where(x > 0, x, x * s), 0.1, "same"),
    "elu": ("f", "any", lambda x, s: np.where(x > 0, x, s * np.expm1(x)), 1.3, "same"),
}

# name: (dtype kinds, domain of a, domain of b, reference, output rule)
BINARY = {
    "add": ("ifc", "any", "any", np.add, "same"),
    "sub": ("ifc", "any", "any", np.subtract, "same"),
    "mul": ("ifc", "any", "any", np.multiply, "same"),
    "div": ("fc", "any", "nonzero", np.divide, "same"),
    "floor_divide": ("if", "any", "nonzero", np.floor_divide, "same"),
    "remainder": ("if", "any", "nonzero", np.remainder, "same"),
    "fmod": ("if", "any", "nonzero", np.fmod, "same"),
    "pow": ("ifc", "pos", "small", np.power, "same"),
    "maximum": ("if", "special", "special", np.maximum, "same"),
    "minimum": ("if", "special", "special", np.minimum, "same"),
    "fmax": ("if", "special", "special", np.fmax, "same"),
    "fmin": ("if", "special", "special", np.fmin, "same"),
    "atan2": ("f", "any", "any", np.arctan2, "same"),
    "hypot": ("f", "any", "any", np.hypot, "same"),
    "copysign": ("f", "any", "special", np.copysign, "same"),
    "logaddexp": ("f", "special", "any", np.logaddexp, "same"),
    "logaddexp2": ("f", "any", "any", np.logaddexp2, "same"),
    "xlogy": ("f", "any", "pos", sp.xlogy, "same"),
    "eq": ("ifc", "small", "small", np.equal, "bool"),
    "ne": ("ifc", "small", "small", np.not_equal, "bool"),
    "lt": ("if", "special", "special", np.less, "bool"),
    "le": ("if", "special", "special", np.less_equal, "bool"),
    "gt": ("if", "special", "special", np.greater, "bool"),
    "ge": ("if", "special", "special", np.greater_equal, "bool"),
    "logical_and": ("ifc", "small", "small", np.logical_and, "bool"),
    "logical_or": ("ifc", "small", "small", np.logical_or, "bool"),
    "logical_xor": ("ifc", "small", "small", np.logical_xor, "bool"),
    "bitwise_and": ("i", "any", "any", np.bitwise_and, "same"),
    "bitwise_or": ("i", "any", "any", np.bitwise_or, "same"),
    "bitwise_xor": ("i", "any", "any", np.bitwise_xor, "same"),
    "left_shift": ("i", "any", "shift", np.left_shift, "same"),
    "right_shift": ("i", "any", "shift", np.right_shift, "same"),
}


def _out_dtype(dt, rule):
    return {"same": dt, "bool": np.dtype(np.bool_), "real": _real_out(dt)}[rule]


def _cases(table):
    return [(name, dt) for name, spec in table.items() for dt in kinds_dtypes(spec[0])
            if not (dt == np.bool_ and name in ("neg", "sub", "rsub_scalar", "sign", "abs",
                                                "pow_scalar", "square", "floor_divide",
                                                "remainder", "fmod", "pow", "add_scalar",
                                                "mul_scalar", "left_shift", "right_shift"))]


def _ref_int(fn, *xs):
    with np.errstate(all="ignore"):
        return fn(*xs)


@pytest.mark.parametrize("name,dt", _cases(UNARY), ids=str)
def test_unary(name, dt):
    kinds, domain, ref, arg, rule = UNARY[name]
    rng = np.random.default_rng(len(name))
    for shape in SHAPES:
        for layout, x in layouts(values(rng, shape, dt, domain)):
            out = empty_out(shape, _out_dtype(dt, rule), transposed=layout == "negative")
            call("unary", UNARY_CODES[name], view(out), view(x), arg)
            with np.errstate(all="ignore"):
                expected = ref(as_ref_input(x), arg)
            assert_close(out, expected, out.dtype, f"{name} {dt} {shape} {layout}")


def _operand_shapes(shape):
    """Out's shape, and shapes that broadcast to it (lower rank, size-1 dims)."""
    yield shape
    if len(shape) >= 1:
        yield shape[1:]
        yield (1,) + shape[1:]
    if len(shape) >= 2:
        yield shape[:-1] + (1,)


@pytest.mark.parametrize("name,dt", _cases(BINARY), ids=str)
def test_binary(name, dt):
    kinds, dom_a, dom_b, ref, rule = BINARY[name]
    rng = np.random.default_rng(len(name))
    for shape in SHAPES:
        for b_shape in _operand_shapes(shape):
            a = values(rng, shape, dt, dom_a)
            b_full = values(rng, b_shape, dt, dom_b)
            for layout, b in layouts(b_full):
                out = empty_out(shape, _out_dtype(dt, rule), transposed=layout == "transposed")
                call("binary", BINARY_CODES[name], view(out), view(a), view(b))
                with np.errstate(all="ignore"):
                    expected = ref(as_ref_input(a), as_ref_input(b))
                assert_close(out, expected, out.dtype, f"{name} {dt} {shape} {b_shape} {layout}")


def _lerp(a, b, w):
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


TERNARY = {
    "clamp": ("if", lambda a, b, c: np.minimum(np.maximum(a, b), c)),
    "lerp": ("fc", _lerp),
    "addcmul": ("ifc", lambda a, b, c: a + b * c),
    "addcdiv": ("fc", lambda a, b, c: a + b / c),
}


@pytest.mark.parametrize("name,dt", [(n, d) for n, (k, _) in TERNARY.items()
                                     for d in kinds_dtypes(k) if d != np.bool_], ids=str)
def test_ternary(name, dt):
    ref = TERNARY[name][1]
    rng = np.random.default_rng(3)
    for shape in SHAPES:
        for c_shape in _operand_shapes(shape):
            a = values(rng, shape, dt)
            b = values(rng, shape[1:], dt)
            c_full = values(rng, c_shape, dt, "nonzero")
            for layout, c in layouts(c_full):
                out = empty_out(shape, dt)
                call("ternary", TERNARY_CODES[name], view(out), view(a), view(b), view(c))
                with np.errstate(all="ignore"):
                    expected = ref(*map(as_ref_input, (a, b, c)))
                assert_close(out, expected, dt, f"{name} {dt} {shape} {c_shape} {layout}")


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_where(dt):
    rng = np.random.default_rng(4)
    for shape in SHAPES:
        cond = values(rng, shape[1:], np.dtype(np.bool_))
        a, b = values(rng, shape, dt), values(rng, (), dt)
        for layout, x in layouts(a):
            out = empty_out(shape, dt, transposed=True)
            call("ternary", TERNARY_CODES["where"], view(out), view(cond), view(x), view(b))
            np.testing.assert_array_equal(out, np.where(cond, x, b), err_msg=f"{shape} {layout}")


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_fill(dt):
    for shape in SHAPES:
        for layout, out in layouts(np.zeros(shape, dt)):
            if layout == "broadcast":
                continue
            call("fill", view(out), 2.5, -1.0)
            expected = np.full(shape, 2.5 - 1j if dt.kind == "c" else 2.5).astype(dt)
            np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("src", DTYPES, ids=str)
def test_copy_converts_every_pair(src):
    rng = np.random.default_rng(5)
    for dst in DTYPES:
        for shape in SHAPES:
            x = values(rng, shape, src, "special" if is_float(src) else "any")
            if is_float(src) and not is_float(dst):  # NaN/inf -> int is undefined in NumPy
                x = values(rng, shape, src)
            for layout, v in layouts(x):
                out = empty_out(shape, dst, transposed=True)
                call("copy", view(out), view(v))
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                    expected = v.astype(dst)
                np.testing.assert_array_equal(_exact(out), _exact(expected),
                                              err_msg=f"{src}->{dst} {shape} {layout}")


def _exact(x):
    """Values to compare exactly (bfloat16 NaNs do not compare equal in NumPy)."""
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64) if is_float(x.dtype) else x


def test_int64_copy_is_exact():
    x = np.array([2 ** 62 + 1, -(2 ** 62) - 3], np.int64)
    out = np.zeros(2, np.int64)
    call("copy", view(out), view(x[::-1]))
    np.testing.assert_array_equal(out, x[::-1])


@pytest.mark.parametrize("name,dt", [("exp", np.dtype(np.int32)), ("bitwise_and", np.dtype(np.float32)),
                                     ("lt", np.dtype(np.complex64))], ids=str)
def test_unsupported_dtype_is_an_error(name, dt):
    x = np.ones(3, dt)
    with pytest.raises(KernelError, match=f'"{name}" not implemented for \'{dt}\''):
        if name in UNARY_CODES:
            call("unary", UNARY_CODES[name], view(np.empty(3, dt)), view(x), 0.0)
        else:
            call("binary", BINARY_CODES[name], view(np.empty(3, np.bool_)), view(x), view(x))


def test_shape_mismatch_and_wrong_out_dtype_are_errors():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(KernelError, match="must match the size of the output"):
        call("binary", BINARY_CODES["add"], view(np.empty((2, 3), np.float32)), view(a),
             view(np.ones(4, np.float32)))
    with pytest.raises(KernelError, match="must have dtype bool, not float32"):
        call("binary", BINARY_CODES["lt"], view(np.empty((2, 3), np.float32)), view(a), view(a))
    with pytest.raises(KernelError, match="one dtype, got float32 and float64"):
        call("binary", BINARY_CODES["add"], view(np.empty((2, 3), np.float32)), view(a),
             view(a.astype(np.float64)))


@pytest.mark.parametrize("name,dt", [(n, np.dtype(d)) for n in ("sub", "div", "eq")
                                     for d in (np.float16, np.float32, np.int8, np.complex128)
                                     if not (n == "div" and d == np.int8)], ids=str)
def test_binary_with_a_scalar_on_either_side(name, dt):
    rng = np.random.default_rng(21)
    x, s = values(rng, (1031,), dt, "nonzero"), values(rng, (), dt, "nonzero")
    ref = BINARY[name][3]
    for a, b in ((x, s), (s, x)):
        out = np.empty(1031, np.bool_ if name == "eq" else dt)
        call("binary", BINARY_CODES[name], view(out), view(a), view(b))
        with np.errstate(all="ignore"):
            expected = ref(as_ref_input(a), as_ref_input(b))
        assert_close(out, expected, out.dtype, f"{name} {dt} scalar {'b' if a is x else 'a'}")
