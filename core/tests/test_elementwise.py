"""_ops/elementwise.py (and _special.py): forwards with details beyond the derivative
samples, JVP formulas against central differences, the special functions' fallbacks,
dtypes, errors and in-place forms."""
import math
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import ARRAY_NS, TENSOR_NS, _registry, _special, elementwise
from samples import elementwise as elementwise_samples
from samples._inputs import make_inputs


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int64, np.float16,
                                   cr.bfloat16.np, np.float32, np.float64])
def test_relu_forward_keeps_the_dtype_and_values(dtype):
    # The 0 is a cached 0-d array of the input's dtype: results as with a Python 0.
    values = [-3.0, -0.0, 0.0, 1.5, 2.0]
    if np.dtype(dtype).kind in "fV":                     # floats (bfloat16 is kind V)
        values.append(np.nan)
    x = np.array([True, False]) if dtype is np.bool_ else np.array(values).astype(dtype)
    for _ in range(2):                                   # made, then from the cache
        out = elementwise._relu_forward(x)
        expected = np.maximum(x, 0).astype(x.dtype, copy=False)
        assert out.dtype == x.dtype and out.tobytes() == expected.tobytes()
        assert out.flags.writeable and not np.shares_memory(out, x)
    assert not elementwise._ZEROS[x.dtype].flags.writeable


# --- JVP formulas of the table, against central differences ---------------------------
def _direct_inputs(sample):
    """The sample's inputs and output when its op was applied to them directly (no casts,
    no scalars in between), else None: then the op's inputs are exactly these tensors."""
    inputs = make_inputs(sample)
    out = sample.call(*inputs)
    node = getattr(out, "grad_fn", None)
    op = getattr(type(node), "_op", None)
    if op is None or op.name != sample.op or len(node._next) != len(inputs) or \
            not isinstance(op.jvp, _registry.Formula):
        return None
    for edge, x in zip(node._next, inputs):
        if (edge is None) == x.requires_grad or \
                (edge is not None and getattr(edge[0], "variable", None) is not x):
            return None
    return inputs, out, node, op


def _jvp_env(inputs, out, node, op):
    env = dict(node._attrs)
    env.update({name: x._data for name, x in zip(op.inputs, inputs)})
    env.update({name + "_shape": x._data.shape for name, x in zip(op.inputs, inputs)})
    env["result"] = out._data
    return env


def _numeric_jvp(sample, inputs, tangents, eps=1e-6):
    bases = [x._data.copy() for x in inputs]
    values = []
    for sign in (1, -1):
        for x, base, t in zip(inputs, bases, tangents):
            if t is not None:
                x._data[...] = base + sign * eps * t
        values.append(sample.call(*inputs)._data.copy())
    for x, base in zip(inputs, bases):
        x._data[...] = base
    return (values[0] - values[1]) / (2 * eps)


def _random_tangent(arr, rng):
    t = rng.standard_normal(arr.shape)
    return np.asarray(t + 1j * rng.standard_normal(arr.shape) if arr.dtype.kind == "c" else t,
                      arr.dtype)


# the samples whose op is applied to their inputs directly (others reach it through a
# cast or a Python scalar, and other samples of the same op are direct)
JVP_SAMPLES = [s for s in elementwise_samples.SAMPLES if "inplace" not in s.note and
               _direct_inputs(s) is not None]
# ops whose every sample goes through a cast, a scalar or a fill of the input
INDIRECT = {"to_copy", "rsub", "pow_scalar_base", "fill", "fill_tensor", "zero", "copy",
            "div_rounded", "remainder"}     # (remainder: with a number; a tensor is remainder_tensor)
NO_JVP = {"floor_divide", "heaviside"}          # NOT_IMPLEMENTED, like the reference


def test_every_elementwise_op_has_a_direct_jvp_sample():
    ops = {s.op for s in elementwise_samples.SAMPLES}
    covered = {s.op for s in JVP_SAMPLES}
    assert sorted(ops - covered - INDIRECT - NO_JVP) == []


@pytest.mark.parametrize("sample", JVP_SAMPLES, ids=[s.id() for s in JVP_SAMPLES])
def test_jvp_by_finite_differences(sample):
    inputs, out, node, op = _direct_inputs(sample)
    rng = np.random.default_rng(3)
    tangents = [_random_tangent(x._data, rng) if x.requires_grad else None for x in inputs]
    env = _jvp_env(inputs, out, node, op)
    fast = np.asarray(op.jvp(ARRAY_NS, tangents, env))
    tensor_env = {k: cr.tensor(v) if isinstance(v, np.ndarray) else v for k, v in env.items()}
    slow = op.jvp(TENSOR_NS, [None if t is None else cr.tensor(t) for t in tangents], tensor_env)
    numeric = _numeric_jvp(sample, inputs, tangents)
    np.testing.assert_allclose(np.broadcast_to(fast, numeric.shape), numeric, atol=1e-5, rtol=1e-4)
    np.testing.assert_allclose(np.broadcast_to(slow.detach().numpy(), numeric.shape), numeric,
                               atol=1e-5, rtol=1e-4)


# --- special functions: values, and the pure-NumPy fallbacks (Note [optional scipy]) ----
EULER = 0.5772156649015329
KNOWN = [  # (name, args, x, value) from closed forms
    ("digamma", (), 1.0, -EULER), ("digamma", (), 0.5, -EULER - 2 * math.log(2)),
    ("digamma", (), -0.5, 2 - EULER - 2 * math.log(2)),
    ("polygamma", (1,), 1.0, math.pi ** 2 / 6), ("polygamma", (1,), 0.5, math.pi ** 2 / 2),
    ("polygamma", (2,), 1.0, -2 * 1.2020569031595942), ("polygamma", (3,), 0.5, math.pi ** 4),
    ("polygamma", (1,), -0.5, math.pi ** 2 / 2 + 4),
    ("lgamma", (), 0.5, math.log(math.pi) / 2), ("lgamma", (), -0.5, math.log(2 * math.sqrt(math.pi))),
    ("erfinv", (), math.erf(0.3), 0.3), ("erfinv", (), math.erf(-2.5), -2.5),
    ("erfinv", (), math.erf(2.0), 2.0), ("erfc", (), 5.0, math.erfc(5.0))]


def _fallback(name, args, x):
    return float(_special.FALLBACKS[name](*args, np.array([x])).item())


@pytest.mark.parametrize("name, args, x, value", KNOWN)
def test_fallbacks_give_known_values(name, args, x, value):
    assert _fallback(name, args, x) == pytest.approx(value, rel=1e-12, abs=1e-13)


POLES = [("digamma", (), 0.0, -math.inf), ("digamma", (), -0.0, math.inf),
         ("digamma", (), -2.0, math.nan), ("lgamma", (), 0.0, math.inf),
         ("lgamma", (), -3.0, math.inf), ("polygamma", (1,), 0.0, math.inf),
         ("polygamma", (2,), 0.0, -math.inf), ("erfinv", (), 1.0, math.inf),
         ("erfinv", (), -1.0, -math.inf), ("erfinv", (), 1.5, math.nan),
         ("digamma", (), math.nan, math.nan), ("polygamma", (1,), math.inf, 0.0)]


@pytest.mark.parametrize("name, args, x, value", POLES)
def test_fallbacks_at_poles_and_edges(name, args, x, value):
    got = _fallback(name, args, x)
    assert (math.isnan(got) and math.isnan(value)) or got == value


def test_fallbacks_match_scipy_where_present():
    sp = _scipy_special()
    grid = np.concatenate([np.linspace(-7.9, 9.9, 357), [1e-6, 25.0, 300.0]])
    grid = grid[np.abs(grid - np.round(grid)) > 1e-3]          # away from the poles
    for n in (1, 2, 4):
        np.testing.assert_allclose(_special.polygamma_fallback(n, grid), sp.polygamma(n, grid),
                                   rtol=1e-10)
    np.testing.assert_allclose(_special.digamma_fallback(grid), sp.psi(grid), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(_special.lgamma_fallback(grid), sp.gammaln(grid), rtol=1e-12,
                               atol=1e-14)
    y = np.linspace(-0.999999, 0.999999, 2001)
    np.testing.assert_allclose(_special.erfinv_fallback(y), sp.erfinv(y), rtol=1e-13, atol=1e-15)


def _scipy_special():
    try:
        import scipy.special as sp
    except ImportError:                      # pragma: no cover - the venv has scipy
        sp = None
    if sp is None:                           # the closed forms above still test the fallbacks
        pytest.fail("scipy is expected in the development environment")
    return sp


@pytest.fixture
def without_scipy(monkeypatch):
    """chainrule's special functions as they are without SciPy installed."""
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    _special.implementation.cache_clear()
    yield
    _special.implementation.cache_clear()


SPECIAL_CALLS = [lambda x: x.erf(), lambda x: x.erfc(), lambda x: (x / 3).erfinv(),
                 lambda x: x.lgamma(), lambda x: x.digamma(), lambda x: x.polygamma(2),
                 lambda x: (x.abs() + 1).mvlgamma(2)]


@pytest.mark.parametrize("index", range(len(SPECIAL_CALLS)))
def test_ops_without_scipy_use_the_fallbacks(index):
    x = cr.tensor([-2.5, -0.3, 0.7, 2.9], dtype=cr.float64, requires_grad=True)
    call = SPECIAL_CALLS[index]
    with_scipy = call(x)
    (grad,) = cr.autograd.grad(with_scipy.sum(), x)
    patch = pytest.MonkeyPatch()
    try:
        patch.setitem(sys.modules, "scipy", None)
        patch.setitem(sys.modules, "scipy.special", None)
        _special.implementation.cache_clear()
        assert _special.implementation("digamma") is _special.digamma_fallback
        fallback = call(x)
        (fallback_grad,) = cr.autograd.grad(fallback.sum(), x)
    finally:
        patch.undo()
        _special.implementation.cache_clear()
    np.testing.assert_allclose(fallback.detach().numpy(), with_scipy.detach().numpy(), rtol=1e-11)
    np.testing.assert_allclose(fallback_grad.numpy(), grad.numpy(), rtol=1e-10)


# --- values and edge cases ------------------------------------------------------------
def _grad(fn, values, dtype=cr.float64):
    x = cr.tensor(values, dtype=dtype, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.tolist()


def test_edge_values_like_the_reference():
    inf, nan = math.inf, math.nan
    assert cr.sinc(cr.tensor([0.0])).item() == 1.0 and _grad(cr.sinc, [0.0]) == [0.0]
    assert cr.xlogy(cr.tensor([0.0, 0.0, 2.0]), cr.tensor([0.0, inf, 1.0])).tolist() == \
        [0.0, 0.0, 0.0]
    assert math.isnan(cr.xlogy(cr.tensor([0.0]), cr.tensor([nan])).item())
    assert _grad(lambda x: cr.xlogy(x, cr.tensor([0.0, 2.0], dtype=cr.float64)),
                 [0.0, 1.0]) == [0.0, math.log(2)]
    assert _grad(lambda x: x.copysign(cr.tensor(-1.0, dtype=cr.float64)), [0.0, 2.0]) == \
        [0.0, -1.0]
    assert cr.logit(cr.tensor([0.0, 1.0])).tolist() == [-inf, inf]
    assert _grad(lambda x: x.logit(eps=0.1), [0.05, 0.5, 0.95]) == [0.0, 4.0, 0.0]
    assert cr.erfinv(cr.tensor([1.0, -1.0])).tolist() == [inf, -inf]
    assert cr.digamma(cr.tensor([0.0, -0.0])).tolist() == [-inf, inf]
    assert cr.lgamma(cr.tensor([0.0, -1.0, -inf])).tolist() == [inf, inf, inf]
    assert cr.fmax(cr.tensor([nan, 1.0]), cr.tensor([2.0, nan])).tolist() == [2.0, 1.0]
    assert _grad(lambda x: x.fmax(cr.tensor([1.0, nan], dtype=cr.float64)), [1.0, 3.0]) == \
        [1.0, 1.0]
    assert cr.lerp(cr.tensor([1e16]), cr.tensor([1.0]), 1.0).item() == 1.0   # exact at the end
    assert cr.logaddexp(cr.tensor([-inf, 1000.0]), cr.tensor([-inf, 1000.0])).tolist()[0] == -inf
    assert cr.logaddexp(cr.tensor([1000.0]), cr.tensor([1000.0])).item() == \
        pytest.approx(1000 + math.log(2))
    assert cr.fmod(cr.tensor([-3.0, 3.0]), 2).tolist() == [-1.0, 1.0]


def test_nan_to_num_defaults_and_gradient():
    x = cr.tensor([math.nan, math.inf, -math.inf, 1.5], dtype=cr.float32, requires_grad=True)
    y = x.nan_to_num()
    big = float(np.finfo(np.float32).max)
    assert y.tolist() == [0.0, big, -big, 1.5] and y.dtype is cr.float32
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]


def test_round_decimals_and_fix():
    x = cr.tensor([1.2345, -2.5, 125.0], dtype=cr.float64, requires_grad=True)
    assert cr.round(x, decimals=2).tolist() == [1.23, -2.5, 125.0]
    assert x.round(decimals=-1).tolist() == [0.0, -0.0, 120.0]
    assert x.round(decimals=1).grad_fn.name() == "RoundBackward1"
    assert x.round().grad_fn.name() == "RoundBackward0"
    assert x.fix().tolist() == [1.0, -2.0, 125.0] and x.fix().grad_fn.name() == "TruncBackward0"
    x.round(decimals=1).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_clamp_with_tensor_bounds_everywhere():
    x = cr.tensor([-2.0, 0.5, 3.0], dtype=cr.float64, requires_grad=True)
    lo = cr.tensor([0.0, 0.0, 0.0], dtype=cr.float64, requires_grad=True)
    hi = cr.tensor(1.0, dtype=cr.float64, requires_grad=True)
    assert x.clamp_min(lo).tolist() == [0.0, 0.5, 3.0]
    assert x.clamp_max(hi).grad_fn.name() == "ClampMaxBackward1"
    assert x.clamp_min(0.0).grad_fn.name() == "ClampMinBackward0"
    y = x.clip(lo, hi)
    assert y.tolist() == [0.0, 0.5, 1.0] and y.grad_fn.name() == "ClampBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0] and lo.grad.tolist() == [1.0, 0.0, 0.0]
    assert hi.grad.item() == 1.0
    z = x.detach().clone()
    assert z.clamp_max_(cr.tensor(0.0, dtype=cr.float64)) is z and z.tolist() == [-2.0, 0.0, 0.0]
    assert z.clip_(min=-1.0).tolist() == [-1.0, 0.0, 0.0] and z._version == 2


# --- dtypes -----------------------------------------------------------------------------
FLOAT_UNARY = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh", "log2", "log10",
               "exp2", "reciprocal", "erfc", "erfinv", "lgamma", "digamma", "logit", "sinc",
               "rad2deg", "deg2rad", "square", "frac"]


@pytest.mark.parametrize("name", FLOAT_UNARY)
@pytest.mark.parametrize("dtype", [cr.float16, cr.bfloat16, cr.float32])
def test_unary_ops_keep_the_floating_dtype(name, dtype):
    x = cr.tensor([0.25, 0.5], dtype=dtype, requires_grad=True)
    y = getattr(x, name)()
    y.sum().backward()
    assert y.dtype is dtype and x.grad.dtype is dtype


@pytest.mark.parametrize("name", [n for n in FLOAT_UNARY if n not in ("square", "frac")])
def test_integer_inputs_give_the_default_float(name):
    y = getattr(cr, name)(cr.tensor([0, 1], dtype=cr.int64))
    assert y.dtype is cr.float32


def test_promotion_of_binary_ops():
    i = cr.tensor([1, 2], dtype=cr.int32)
    assert cr.atan2(i, i).dtype is cr.float32 and cr.hypot(i, cr.tensor(2.0)).dtype is cr.float32
    assert cr.xlogy(cr.ones(2, dtype=cr.float64), 2).dtype is cr.float64
    assert cr.square(i).dtype is cr.int32 and cr.square(i).tolist() == [1, 4]
    assert cr.float_power(cr.ones(2), 2).dtype is cr.float64
    assert cr.float_power(cr.ones(2), 1j).dtype is cr.complex128
    with pytest.raises(RuntimeError, match="expected dtype double for `end` but got dtype float"):
        cr.lerp(cr.ones(2, dtype=cr.float64), cr.zeros(2), 0.5)      # lerp does not promote


# --- errors -----------------------------------------------------------------------------
def test_errors_name_the_problem():
    x = cr.tensor([0.5, 1.5])
    with pytest.raises(RuntimeError, match="polygamma\\(n, x\\) does not support negative n."):
        cr.polygamma(-1, x)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        x.mvlgamma(0)
    with pytest.raises(RuntimeError, match="The input tensor may not be a boolean tensor."):
        cr.tensor([True]).mvlgamma(1)
    assert x.mvlgamma(3)[0].item() == float("inf")      # below the domain: the formula
    with pytest.raises(RuntimeError, match="float_power_ has dtype Float but the operation's "
                                           "result requires dtype Double"):
        x.clone().float_power_(2)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        cr.tensor([1, 2]).asin_()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        cr.ones(2, requires_grad=True).sinh_()
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        cr.isclose(x, x.double())
    with pytest.raises(RuntimeError, match="isposinf does not support complex inputs."):
        cr.isposinf(cr.ones(2, dtype=cr.complex64))
    for name, kernel in (("erf", "erf_vml_cpu"), ("erfc", "erfc_vml_cpu"),
                         ("erfinv", "erfinv_vml_cpu"), ("lgamma", "lgamma_vml_cpu"),
                         ("digamma", "digamma")):
        with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for "
                                                      "'ComplexFloat'"):
            getattr(cr.ones(2, dtype=cr.complex64), name)()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        cr.fmod(cr.tensor([1, 2]), 0)


# --- in-place forms, aliases, predicates ------------------------------------------------
def test_inplace_forms_write_and_record():
    x = cr.tensor([0.2, 0.4], dtype=cr.float64, requires_grad=True)
    y = x * 1
    assert y.atanh_() is y and y._version == 1 and y.grad_fn.name() == "AtanhBackward0"
    y.polygamma_(0)
    assert y.grad_fn.name() == "DigammaBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _special.polygamma_fallback(
        1, np.arctanh([0.2, 0.4])) / (1 - np.array([0.2, 0.4]) ** 2))
    for name in ("arcsin_", "square_", "reciprocal_", "erfinv_", "lgamma_", "logit_", "fix_",
                 "nan_to_num_", "deg2rad_", "xlogy_", "hypot_", "copysign_", "fmod_",
                 "true_divide_", "lerp_", "mvlgamma_", "float_power_", "clamp_min_"):
        assert callable(getattr(cr.Tensor, name)), name


def test_aliases_are_the_same_functions():
    assert cr.arcsin is cr.asin and cr.arctanh is cr.atanh
    assert cr.fix is cr.trunc and cr.clip is cr.clamp
    # torch.special's functions are objects of their own (special_expit), each dispatching
    # __torch_function__ around the same function (Note [torch function slot])
    assert cr.special.psi is cr.special.digamma
    for name, top in (("digamma", "digamma"), ("gammaln", "lgamma"),
                      ("multigammaln", "mvlgamma"), ("expit", "sigmoid")):
        assert getattr(cr.special, name).__wrapped__ is getattr(cr, top).__wrapped__
    x = cr.tensor([0.3, 0.7], dtype=cr.float64)
    np.testing.assert_allclose(cr.special.ndtri(cr.special.ndtr(x)).numpy(), x.numpy())
    np.testing.assert_allclose(cr.special.xlog1py(x, x).numpy(), x.numpy() * np.log1p(x.numpy()))


def test_predicates():
    x = cr.tensor([-0.0, math.inf, -math.inf, math.nan, 1.0])
    assert cr.isposinf(x).tolist() == [False, True, False, False, False]
    assert cr.isneginf(x).tolist() == [False, False, True, False, False]
    assert cr.signbit(x).tolist() == [True, False, True, False, False]
    assert cr.isreal(x).tolist() == [True] * 5
    assert cr.isclose(x, x).tolist() == [True, True, True, False, True]
    assert cr.isclose(x, x, equal_nan=True).tolist() == [True] * 5
    assert cr.isclose(cr.tensor([1.0]), cr.tensor([1.1]), rtol=0, atol=0.2).item()
    assert cr.positive(x) is x


def test_more_reference_names(torch):
    x = cr.tensor([-1.0, 0.0, 2.0])
    assert cr.heaviside(x, cr.tensor([0.5])).tolist() == [0.0, 0.5, 1.0]
    with pytest.raises(RuntimeError, match="different dtypes"):
        cr.heaviside(x, cr.tensor([1]))
    assert cr.ldexp(cr.tensor([1, 3]), cr.tensor([2, -1])).dtype is cr.float32
    assert cr.dist(cr.tensor([3.0, 0.0]), cr.tensor([0.0, 4.0]), 1).item() == 7.0
    assert cr.gcd(cr.tensor([4, 6]), cr.tensor([6, 9])).tolist() == [2, 3]
    assert cr.lcm(cr.tensor([4, 6]), cr.tensor([6, 9])).tolist() == [12, 18]
    with pytest.raises(NotImplementedError, match="\"gcd_cpu\" not implemented for 'Float'"):
        cr.gcd(x, x)
    assert cr.bitwise_not(cr.tensor([True, False])).tolist() == [False, True]
    m, e = cr.frexp(cr.tensor([8.0, 0.3, 0.0]))
    tm, te = torch.frexp(torch.tensor([8.0, 0.3, 0.0]))
    assert m.tolist() == tm.tolist() and e.tolist() == te.tolist() and e.dtype is cr.int32
    assert cr.nextafter(cr.tensor([1.0]), cr.tensor([0.0])).item() < 1.0


def test_clamp_of_integers_by_float_bounds_promotes_like_the_reference():
    x = cr.tensor([1, 5, 9])
    assert cr.clamp(x, min=2.5, max=7.5).tolist() == [2.5, 5.0, 7.5]
    assert cr.clamp(x, min=2.5).dtype == cr.get_default_dtype()
    assert cr.clamp(x, min=2, max=7).dtype == cr.int64          # integer bounds keep it


def test_floating_point_errors_are_silent_like_the_reference():
    # Note [silent floating-point errors]: chainrule's ops do not warn; NumPy calls of
    # the user's own still do
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cr._silence_floating_point_warnings()         # what importing chainrule does
        x = cr.tensor([-1.0, 0.0], requires_grad=True)
        y = (x.log() + 1 / x + cr.exp(x * 1000)).sum()
        y.backward()
        with pytest.raises(RuntimeWarning, match="invalid value encountered in log"):
            np.log(np.array([-1.0]))
    assert np.isnan(y.item())


_TWO_BOOLS = "with two bool tensors is not supported. Use the `\\^` or `logical_xor\\(\\)`"
_ONE_BOOL = "with a bool tensor is not supported. If you are trying to invert a mask"


@pytest.mark.parametrize("statement,message", [
    ("b - True", _TWO_BOOLS), ("True - b", _TWO_BOOLS), ("cr.sub(b, b)", _TWO_BOOLS),
    ("cr.rsub(b, True)", _TWO_BOOLS), ("b.sub(False)", _TWO_BOOLS),
    ("cr.sub(b, b, alpha=2)", _TWO_BOOLS), ("b.clone().sub_(b)", _TWO_BOOLS),
    ("b - 1", _ONE_BOOL), ("1 - b", _ONE_BOOL), ("b - 1.5", _ONE_BOOL), ("i - True", _ONE_BOOL),
    ("True - i", _ONE_BOOL), ("i - b", _ONE_BOOL), ("f - b", _ONE_BOOL), ("b - f", _ONE_BOOL),
    ("f.sub(True)", _ONE_BOOL), ("i.clone().sub_(True)", _ONE_BOOL),
    ("cr.subtract(b, cr.tensor(1))", _ONE_BOOL)])
def test_subtraction_refuses_bool_operands(statement, message):
    names = {"cr": cr, "b": cr.tensor([True, False]), "i": cr.tensor([1, 2]),
             "f": cr.tensor([1.5, 2.5])}
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, " + message):
        eval(statement, names)


def test_alpha_must_suit_the_result_kind():
    i, b = cr.tensor([1, 2]), cr.tensor([True, False])
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        cr.sub(i, i, alpha=True)
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must "
                                           "not be a floating point number"):
        cr.add(i, 1, alpha=1.5)
    assert cr.add(b, b, alpha=True).tolist() == [True, False]
    assert cr.sub(i, cr.tensor([1., 1.]), alpha=0.5).tolist() == [0.5, 1.5]
    assert (cr.tensor([3, 4]) - 1).tolist() == [2, 3]


def test_clone_memory_format():
    base = cr.ones(3, 2, requires_grad=True)
    x = base.t()
    y = x.clone(memory_format=cr.contiguous_format)
    assert y.stride() == (3, 1) and y.grad_fn.name() == "CloneBackward0"
    assert x.clone().stride() == x.clone(memory_format=cr.preserve_format).stride() == (1, 2)
    (y * cr.arange(3.0)).sum().backward()
    assert base.grad.tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
