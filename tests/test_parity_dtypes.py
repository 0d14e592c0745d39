"""Parity tier: what each function does with every dtype, against PyTorch (skips
without torch). For each function and each of the twelve dtypes (each pair, for the
binary functions) both libraries run on the same values; the outcomes must agree:
the result's dtype and values, or the error's type and message
(Note [kernels without a dtype] in core/chainrule/_ops/_common.py). The functions
are listed below; KNOWN names the few (function, dtypes) outcomes that still differ,
each with its reason.
"""
import functools
import itertools
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]
VALUES = [[1, 0], [1, 1]]          # a zero, for division, logarithms and poles

UNARY = [
    "abs", "absolute", "neg", "negative", "positive", "sign", "sgn", "round", "floor", "ceil",
    "trunc", "fix", "frac", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "i0",
    "reciprocal", "square", "relu", "signbit", "isnan", "isinf", "isfinite", "isreal",
    "isposinf", "isneginf", "logical_not", "bitwise_not", "angle", "conj", "real",
    "nan_to_num", "deg2rad", "rad2deg", "sinc", "logit", "clone", "special.i0e",
    "special.i1", "special.i1e", "special.entr", "special.expit", "special.digamma",
    "special.gammaln", "special.erf", "special.erfcx", "special.ndtri", "special.ndtr",
    "special.log_ndtr", "special.spherical_bessel_j0", "special.bessel_j0", "special.bessel_j1",
    "special.bessel_y0", "special.bessel_y1", "special.modified_bessel_i0",
    "special.modified_bessel_k0", "special.scaled_modified_bessel_k0", "special.airy_ai",
    "special.sinc", "special.log1p", "special.expm1", "special.exp2", "special.round",
    "special.psi", "special.erfinv", "special.logit", "special.i0", "polygamma1", "mvlgamma",
    "logcumsumexp", "sum", "prod", "mean", "std",
    "var", "argmax", "argmin", "amax", "amin", "max", "min", "all", "any", "norm", "cumsum",
    "cumprod", "softmax", "log_softmax", "count_nonzero", "nansum", "nanmean", "median",
    "nanmedian", "msort", "sort", "argsort", "unique", "unique_consecutive", "mode", "flip",
    "trace", "diag", "tril", "cummax", "cummin", "kthvalue", "topk", "quantile",
    "nanquantile", "bincount", "aminmax", "std_mean", "var_mean", "nonzero", "ravel"]
BINARY = [
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow",
    "float_power", "maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "copysign",
    "nextafter", "logaddexp", "logaddexp2", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_xor", "xlogy", "heaviside", "gcd", "lcm", "ldexp",
    "isclose", "dist", "dot", "matmul", "outer", "inner", "kron", "igamma", "igammac",
    "special.xlog1py", "special.xlogy", "special.zeta", "special.gammainc", "special.gammaincc",
    "polar", "complex", "mm", "bmm", "mv", "vdot", "tensordot", "cross", "cdist", "atan2"]
EXTRA_ARGS = {"logcumsumexp": (0,), "cumsum": (0,), "cumprod": (0,), "softmax": (0,), "log_softmax": (0,),
              "flip": ((0,),), "cummax": (0,), "cummin": (0,), "kthvalue": (1,), "topk": (1,),
              "mvlgamma": (1,), "quantile": (0.5,), "nanquantile": (0.5,)}

# Python numbers as the other operand of the binary functions that take them: for
# either operand (the reference wraps a number given for a tensor and promotes it as a
# number), or only for the second.
NUMBERS = [True, 2, 1.5, 1j]
NUMBER_EITHER = [
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "pow",
    "float_power", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "xlogy", "special.xlog1py", "special.xlogy", "special.zeta"]
NUMBER_SECOND = ["fmod", "copysign", "eq", "ne", "lt", "le", "gt", "ge", "clamp", "clip",
                 "clamp_min", "clamp_max"]
NUMBER_INPLACE = ["add_", "sub_", "mul_", "div_", "pow_", "remainder_", "fmod_", "floor_divide_",
                  "copy_", "bitwise_and_", "eq_", "lt_", "clamp_min_", "clamp_max_", "clamp_"]

# Functions with arguments beyond the tensor (a result dtype, a number, the tensor's dtype
# for a factory), on [[1, 0], [1, 1]] in each dtype.
def _reduction_in(name, dtype):
    if name.startswith("cum"):
        return lambda L, x: getattr(L, name)(x, 0, dtype=getattr(L, dtype))
    return lambda L, x: getattr(L, name)(x, dtype=getattr(L, dtype))


WITH_ARGUMENTS = {
    **{f"{name}(dtype={d})": _reduction_in(name, d) for d in DTYPES for name in (
        "cumsum", "cumprod", "sum", "prod", "mean", "nansum", "nanmean")},
    **{f"{name}(x, 0)": (lambda n: lambda L, x: getattr(L, n)(x, 0))(name)
       for name in ("std", "var", "std_mean", "var_mean", "logsumexp")},
    "cumsum_": lambda L, x: x.clone().cumsum_(0), "cumprod_": lambda L, x: x.clone().cumprod_(0),
    "where(c, x, 1.5)": lambda L, x: L.where(x != 0, x, 1.5),
    "where(c, x, 2)": lambda L, x: L.where(x != 0, x, 2),
    "where(c, 1j, x)": lambda L, x: L.where(x != 0, 1j, x),
    "where(c, True, x)": lambda L, x: L.where(x != 0, True, x),
    "linspace": lambda L, x: L.linspace(0, 3, 4, dtype=x.dtype),
    "logspace": lambda L, x: L.logspace(0, 2, 3, dtype=x.dtype),
    "arange": lambda L, x: L.arange(0, 4, dtype=x.dtype),
    "arange(0, 3, 0.5)": lambda L, x: L.arange(0, 3, 0.5, dtype=x.dtype),
    "full_like": lambda L, x: L.full_like(x, 1.5),
    "lerp(x, x, 0.5)": lambda L, x: L.lerp(x, x, 0.5),
    "addcmul": lambda L, x: L.addcmul(x, x, x), "addcdiv": lambda L, x: L.addcdiv(x, x, x + 1),
    "round(decimals=1)": lambda L, x: L.round(x, decimals=1),
    "trapezoid": lambda L, x: L.trapezoid(x),
    "cumulative_trapezoid": lambda L, x: L.cumulative_trapezoid(x),
    "cov": lambda L, x: L.cov(x), "corrcoef": lambda L, x: L.corrcoef(x),
    "histc": lambda L, x: L.histc(x, 4),
    "bucketize": lambda L, x: L.bucketize(x, L.tensor([0, 1])),
    "searchsorted": lambda L, x: L.searchsorted(L.tensor([0, 1]), x)}

_NO_COMPLEX_HALF = "the reference computes 2 ** float16 in complex32, which NumPy lacks"
_NO_COMPLEX_HALF_KERNEL = ("the reference has no complex32 kernel for it and raises; chainrule "
                           "computes in complex64, its stand-in")
KNOWN = {
    # (function, dtypes): why the outcome still differs
    ("ldexp", ("complex64", "float16")): _NO_COMPLEX_HALF,
    ("ldexp", ("complex128", "float16")): _NO_COMPLEX_HALF,
    **{(name, operands): _NO_COMPLEX_HALF_KERNEL for name in ("div", "true_divide", "pow")
       for operands in (("float16", 1j), (1j, "float16"))},
    **{("arange(0, 3, 0.5)", (d,)): "the reference casts the step to an integer dtype first "
       "(0: zeros, or for int64 'step must be nonzero'); chainrule steps by 0.5 and casts"
       for d in ("uint8", "int8", "int16", "int32", "int64")},
    **{("histc", (d,)): "the reference's histc fails in linspace (bool) or aminmax (complex) "
       "before its own kernel; chainrule names histogram_cpu"
       for d in ("bool", "complex64", "complex128")},
}


# Matrix functions run on the symmetric positive definite [[2, 1], [1, 2]] in each dtype.
MATRIX = {
    "linalg.cholesky": lambda L, a: L.linalg.cholesky(a),
    "linalg.cholesky_ex": lambda L, a: L.linalg.cholesky_ex(a), "linalg.cond": lambda L, a: L.linalg.cond(a),
    "linalg.det": lambda L, a: L.linalg.det(a), "linalg.eig": lambda L, a: L.linalg.eig(a),
    "linalg.eigh": lambda L, a: L.linalg.eigh(a), "linalg.eigvals": lambda L, a: L.linalg.eigvals(a),
    "linalg.eigvalsh": lambda L, a: L.linalg.eigvalsh(a), "linalg.inv": lambda L, a: L.linalg.inv(a),
    "linalg.inv_ex": lambda L, a: L.linalg.inv_ex(a),
    "linalg.ldl_factor_ex": lambda L, a: L.linalg.ldl_factor_ex(a),
    "linalg.lstsq": lambda L, a: L.linalg.lstsq(a, a), "linalg.lu": lambda L, a: L.linalg.lu(a),
    "linalg.lu_factor_ex": lambda L, a: L.linalg.lu_factor_ex(a),
    "linalg.matrix_rank": lambda L, a: L.linalg.matrix_rank(a),
    "linalg.pinv": lambda L, a: L.linalg.pinv(a), "linalg.qr": lambda L, a: L.linalg.qr(a),
    "linalg.slogdet": lambda L, a: L.linalg.slogdet(a), "linalg.svd": lambda L, a: L.linalg.svd(a),
    "linalg.svdvals": lambda L, a: L.linalg.svdvals(a),
    "linalg.solve": lambda L, a: L.linalg.solve(a, a), "logdet": lambda L, a: L.logdet(a),
    "det": lambda L, a: L.det(a), "inverse": lambda L, a: L.inverse(a),
    "linalg.matrix_power": lambda L, a: L.linalg.matrix_power(a, 2),
    "linalg.solve_triangular": lambda L, a: L.linalg.solve_triangular(a, a, upper=True),
    "cholesky_inverse": lambda L, a: L.cholesky_inverse(a),
    "linalg.householder_product": lambda L, a: L.linalg.householder_product(a, a[:, 0]),
    "linalg.tensorinv": lambda L, a: L.linalg.tensorinv(a, 1),
    "linalg.multi_dot": lambda L, a: L.linalg.multi_dot([a, a]),
    "linalg.vander": lambda L, a: L.linalg.vander(a[0]),
    "linalg.matrix_norm": lambda L, a: L.linalg.matrix_norm(a),
    "linalg.norm": lambda L, a: L.linalg.norm(a), "geqrf": lambda L, a: L.geqrf(a)}
SPD = [[2, 1], [1, 2]]


# Products of several operands, on [[1, 0], [1, 1]] in each dtype (the vectors are its
# rows): every combination of dtypes, which the reference checks in an order of its own.
def _einsum(equation):
    terms = equation.split("->")[0].split(",")
    return lambda L, *xs: L.einsum(equation, *[x[0] if len(t) == 1 else x
                                               for t, x in zip(terms, xs)])


PRODUCTS = {
    "addmm": lambda L, x, y, z: L.addmm(x, y, z),
    "addmv": lambda L, x, y, z: L.addmv(x[0], y, z[1]),
    "addr": lambda L, x, y, z: L.addr(x, y[0], z[1]),
    "baddbmm": lambda L, x, y, z: L.baddbmm(x[None], y[None], z[None]),
    "addbmm": lambda L, x, y, z: L.addbmm(x, y[None], z[None]),
    **{f"einsum {eq}": _einsum(eq) for eq in (
        "ij,jk->ik", "ij,ij->ij", "i,j->ij", "i,i->", "ij,jk->i", "ij->", "ij->j", "ii->i",
        "ij,jk,kl->il", "i,i,i->")}}
ACTIVATIONS = ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "hardtanh",
               "softplus", "mish", "hardswish", "hardsigmoid", "logsigmoid", "softsign",
               "tanhshrink", "softshrink", "hardshrink", "glu", "sigmoid", "tanh", "threshold",
               "softmin", "prelu", "rrelu", "normalize", "dropout", "layer_norm"]
ACTIVATION_ARGS = {"threshold": (0.5, 0.0), "softmin": (0,), "layer_norm": ((2,),)}


# In-place methods, on ``self`` of one dtype and an operand of another (Note [the cast is
# checked first]): the dtype and values written, or the error.
INPLACE = {name: (lambda n: lambda x, y: getattr(x, n)(y))(name) for name in (
    "add_", "sub_", "mul_", "div_", "pow_", "remainder_", "fmod_", "floor_divide_", "copy_",
    "bitwise_and_", "logical_and_", "atan2_", "hypot_", "eq_", "lt_", "clamp_min_", "clamp_max_")}
INPLACE.update({
    "masked_fill_": lambda x, y: x.masked_fill_(y.bool(), 2), "lerp_": lambda x, y: x.lerp_(y, 0.5),
    "addcmul_": lambda x, y: x.addcmul_(y, y), "clamp_": lambda x, y: x.clamp_(y, y),
    "fill_": lambda x, y: x.fill_(y[0, 0]),
    **{f"{name}_": (lambda n: lambda x, y: getattr(x, n)())(f"{name}_") for name in (
        "abs", "neg", "sqrt", "exp", "sin", "sigmoid", "floor", "round", "sign", "zero", "relu",
        "square", "reciprocal")}})
_UNARY_INPLACE = {name for name in INPLACE if name[:-1] in (
    "abs", "neg", "sqrt", "exp", "sin", "sigmoid", "floor", "round", "sign", "zero", "relu",
    "square", "reciprocal")}


# Functions taking index tensors, on an index of each dtype: [[0, 1, 1], [1, 0, 1]]
# for gather-like ones, [0, 1] for the rest; x is arange(6.) as 2 x 3.
def _x(L):
    return L.arange(6.).reshape(2, 3)


INDEXING = {
    "gather": lambda L, i, i1: L.gather(_x(L), 1, i),
    "scatter": lambda L, i, i1: _x(L).scatter(1, i, 9.0),
    "scatter_add": lambda L, i, i1: _x(L).scatter_add(1, i, _x(L)),
    "scatter_reduce": lambda L, i, i1: _x(L).scatter_reduce(1, i, _x(L), "sum"),
    "index_select": lambda L, i, i1: L.index_select(_x(L), 1, i1),
    "index_add": lambda L, i, i1: _x(L).index_add(1, i1, _x(L)[:, :2]),
    "index_copy": lambda L, i, i1: _x(L).index_copy(1, i1, _x(L)[:, :2]),
    "index_fill": lambda L, i, i1: _x(L).index_fill(1, i1, -1.0),
    "take": lambda L, i, i1: L.take(_x(L), i1), "getitem": lambda L, i, i1: _x(L)[i1],
    "getitem_columns": lambda L, i, i1: _x(L)[:, i1],
    "setitem": lambda L, i, i1: (lambda x: (x.__setitem__(i1, 5.0), x)[1])(_x(L)),
    "index_put": lambda L, i, i1: _x(L).index_put((i1,), L.tensor(7.)),
    "masked_fill": lambda L, i, i1: _x(L).masked_fill(i, 1.0),
    "masked_select": lambda L, i, i1: L.masked_select(_x(L), i),
    "where": lambda L, i, i1: L.where(i, _x(L), 0.0),
    "embedding": lambda L, i, i1: L.nn.functional.embedding(i1, _x(L)),
    "take_along_dim": lambda L, i, i1: L.take_along_dim(_x(L), i, 1),
    "nll_loss": lambda L, i, i1: L.nn.functional.nll_loss(_x(L).log_softmax(1), i1),
    "cross_entropy": lambda L, i, i1: L.nn.functional.cross_entropy(_x(L), i1),
    "one_hot": lambda L, i, i1: L.nn.functional.one_hot(i1),
    "searchsorted": lambda L, i, i1: L.searchsorted(i1, i1),
    "repeat_interleave": lambda L, i, i1: L.repeat_interleave(i1)}
INDEX_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float32"]


def _function(lib, name):
    if name in INDEXING:
        return lambda i: INDEXING[name](lib, i, i.reshape(-1)[:2])
    if name in INPLACE:
        return lambda x, y=None: (INPLACE[name](x, y), x)[1]
    if name in ACTIVATIONS:
        fn = getattr(lib.nn.functional, name)
        if name == "prelu":
            return lambda x: fn(x, lib.tensor([0.25]))
        if name in ("rrelu", "dropout"):
            return lambda x: fn(x, training=False)
        return lambda x: fn(x, *ACTIVATION_ARGS.get(name, ()))
    if name == "polygamma1":
        return functools.partial(lib.polygamma, 1)
    fn = functools.reduce(getattr, name.split("."), lib)
    extra = EXTRA_ARGS.get(name, ())
    return (lambda x: fn(x, *extra)) if extra else fn


def _values(result):
    result = result.detach().resolve_conj().resolve_neg()
    name = str(result.dtype).split(".")[-1]
    if name == "complex32":   # Note [ComplexHalf stands in as complex64]: compared as such
        return "complex64", result.to(torch.complex64).numpy().astype(np.complex128)
    array = result.float().numpy() if name == "bfloat16" else result.numpy()
    return name, array.astype(np.complex128)


def _outcome(lib, name, dtypes):
    values = SPD if name in MATRIX else [[0, 1, 1], [1, 0, 1]] if name in INDEXING else VALUES
    args = [lib.tensor(values, dtype=getattr(lib, d)) if isinstance(d, str) else d
            for d in dtypes]                                  # a Python number as it is
    table = next((t for t in (MATRIX, PRODUCTS, WITH_ARGUMENTS) if name in t), None)
    fn = functools.partial(table[name], lib) if table else _function(lib, name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn(*args)
    except Exception as error:      # the error itself is the outcome compared
        message = re.sub(r"\b(torch|chainrule)\.", "", str(error)).split("\n")[0]
        return ("raises", type(error).__name__.lstrip("_"), message)
    if isinstance(result, tuple):
        result = result[0]
    return ("returns",) + _values(result)


def _same(ours, theirs):
    if ours[0] != theirs[0] or ours[1] != theirs[1]:
        return False
    if ours[0] == "raises":
        return ours[2] == theirs[2]
    a, b = ours[2], theirs[2]
    low = ours[1] in ("float16", "bfloat16")
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-2 if low else 1e-6, atol=1e-6,
                                              equal_nan=True)


def _mismatches(name, combinations):
    found = []
    for dtypes in combinations:
        ours, theirs = _outcome(cr, name, dtypes), _outcome(torch, name, dtypes)
        if not _same(ours, theirs) and (name, dtypes) not in KNOWN:
            found.append(f"{name}{dtypes}: chainrule {ours[:3]!s:.160} | torch {theirs[:3]!s:.160}")
    return found


@pytest.mark.parametrize("name", UNARY)
def test_unary_dtypes_like_the_reference(name):
    assert _mismatches(name, [(d,) for d in DTYPES]) == []


@pytest.mark.parametrize("name", BINARY)
def test_binary_dtypes_like_the_reference(name):
    assert _mismatches(name, [(a, b) for a in DTYPES for b in DTYPES]) == []


@pytest.mark.parametrize("name", NUMBER_EITHER + NUMBER_SECOND)
def test_number_operand_dtypes_like_the_reference(name):
    pairs = [(d, n) for d in DTYPES for n in NUMBERS]
    if name in NUMBER_EITHER:
        pairs += [(n, d) for d, n in pairs]
    assert _mismatches(name, pairs) == []


@pytest.mark.parametrize("name", NUMBER_INPLACE)
def test_inplace_number_operand_dtypes_like_the_reference(name):
    assert _mismatches(name, [(d, n) for d in DTYPES for n in NUMBERS]) == []


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_dtypes_like_the_reference(name):
    assert _mismatches(name, [(d,) for d in DTYPES]) == []


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_dtypes_like_the_reference(name):
    others = ["bool"] if name in _UNARY_INPLACE else DTYPES
    assert _mismatches(name, [(a, b) for a in DTYPES for b in others]) == []


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_index_dtypes_like_the_reference(name):
    assert _mismatches(name, [(d,) for d in INDEX_DTYPES]) == []


@pytest.mark.parametrize("name", sorted(WITH_ARGUMENTS))
def test_dtypes_with_arguments_like_the_reference(name):
    assert _mismatches(name, [(d,) for d in DTYPES]) == []


@pytest.mark.parametrize("name", sorted(MATRIX))
def test_matrix_dtypes_like_the_reference(name):
    assert _mismatches(name, [(d,) for d in DTYPES]) == []


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_product_dtypes_like_the_reference(name):
    operands = name.split("->")[0].count(",") + 1 if name.startswith("einsum") else 3
    assert _mismatches(name, list(itertools.product(DTYPES, repeat=operands))) == []


def test_known_divergences_still_differ():
    """KNOWN lists only outcomes that differ today: a fixed one must leave the list."""
    stale = [key for key in KNOWN if _same(_outcome(cr, *key), _outcome(torch, *key))]
    assert stale == []
