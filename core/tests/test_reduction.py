"""Reductions: values against NumPy, dtype rules, named tuples, ties, zeros in prod,
errors, and gradients (central differences in float64, first and second order, for
every reduction sample), plus a torch-parity tier."""
import math
import warnings

import numpy as np
import pytest

import chainrule as cr
from samples import reduction as reduction_samples
from samples._inputs import make_inputs, to_torch

SAMPLES = reduction_samples.SAMPLES


# --- finite differences ----------------------------------------------------------
def _loss(out, g):
    """Re(sum(conj(g) * out)): the real scalar whose gradient a VJP with g computes."""
    return float(np.real(np.sum(np.conj(g) * out)))


def _numeric_grad(f, x, eps=1e-6):
    """dL/dRe(x) + i dL/dIm(x) of the real scalar f() by central differences."""
    data = x._data
    grad = np.zeros(data.shape, data.dtype)
    flat, gflat = data.reshape(-1), grad.reshape(-1)
    steps = (1, 1j) if data.dtype.kind == "c" else (1,)
    for i in range(flat.size):
        for step in steps:
            orig = flat[i]
            flat[i] = orig + eps * step
            hi = f()
            flat[i] = orig - eps * step
            lo = f()
            flat[i] = orig
            gflat[i] += (hi - lo) / (2 * eps) * step
    return grad


def _random_like(arr, rng):
    g = rng.standard_normal(arr.shape)
    if arr.dtype.kind == "c":
        g = g + 1j * rng.standard_normal(arr.shape)
    return np.asarray(g, arr.dtype)


def _assert_close(analytic, numeric, atol=1e-5, rtol=1e-4):
    a = np.zeros_like(numeric) if analytic is None else analytic.detach().numpy()
    np.testing.assert_allclose(a, numeric, atol=atol, rtol=rtol)


def _diff_inputs(inputs):
    return [x for x in inputs if isinstance(x, cr.Tensor) and x.requires_grad]


def check_grad(fn, inputs, seed=0):
    """First-order check: autograd's VJP against central differences."""
    rng = np.random.default_rng(seed)
    out = fn(*inputs)
    g = _random_like(out._data, rng)
    xs = _diff_inputs(inputs)
    analytic = cr.autograd.grad(out, xs, cr.tensor(g), allow_unused=True)
    for x, a in zip(xs, analytic):
        _assert_close(a, _numeric_grad(lambda: _loss(fn(*inputs)._data, g), x))


def check_gradgrad(fn, inputs, seed=1):
    """Second-order check: the gradient of <u, vjp(g)> w.r.t. the inputs and g."""
    rng = np.random.default_rng(seed)
    out = fn(*inputs)
    g = cr.tensor(_random_like(out._data, rng), requires_grad=True)
    xs = _diff_inputs(inputs)
    us = [_random_like(x._data, rng) for x in xs]

    def second(create_graph):
        grads = cr.autograd.grad(fn(*inputs), xs, g, create_graph=create_graph,
                                 allow_unused=True)
        total = cr.tensor(0.0, dtype=cr.float64)
        for u, gr in zip(us, grads):
            if gr is not None:
                total = total + cr.real(cr.sum(cr.conj(cr.tensor(u)) * gr))
        return total

    s = second(True)
    analytic = cr.autograd.grad(s, xs + [g], allow_unused=True) if s.requires_grad \
        else [None] * (len(xs) + 1)
    for x, a in zip(xs + [g], analytic):
        _assert_close(a, _numeric_grad(lambda: float(second(False)._data), x))


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id() for s in SAMPLES])
def test_gradient_by_finite_differences(sample):
    check_grad(sample.call, make_inputs(sample))


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id() for s in SAMPLES])
def test_second_gradient_by_finite_differences(sample):
    check_gradgrad(sample.call, make_inputs(sample))


def _jvp_env(out, inputs):
    """What the op's JVP formula may name, read from the node that recorded ``out``."""
    node = out.grad_fn
    env = dict(node._attrs)
    env.update({k: s.data for k, s in node._saved.items()})
    env.update({n + "_shape": shape for n, (shape, _) in zip(node._op.inputs, node._in_meta)})
    env["self"], env["result"] = inputs[0]._data, out._data
    return node._op, env


def check_jvp(fn, inputs, seed=3):
    """The op's JVP formula, in both namespaces, against a central difference."""
    from chainrule._ops import ARRAY_NS, TENSOR_NS
    x = inputs[0]
    out = fn(*inputs)
    op, env = _jvp_env(out, inputs)
    t = _random_like(x._data, np.random.default_rng(seed))
    tangents = (t,) + (None,) * (len(op.inputs) - 1)
    fast = np.asarray(op.jvp(ARRAY_NS, tangents, env))
    tensor_env = {k: cr.tensor(v) if isinstance(v, np.ndarray) else v for k, v in env.items()}
    slow = op.jvp(TENSOR_NS, (cr.tensor(t),) + tangents[1:], tensor_env)
    base, eps = x._data.copy(), 1e-6
    values = []
    for sign in (1, -1):
        x._data[...] = base + sign * eps * t
        values.append(fn(*inputs)._data)
    x._data[...] = base
    # (an empty input has nothing to perturb; its outputs may be -inf, as logsumexp's)
    numeric = (values[0] - values[1]) / (2 * eps) if x._data.size else np.zeros(out.shape)
    np.testing.assert_allclose(fast, numeric, atol=1e-5, rtol=1e-4)
    np.testing.assert_allclose(slow.detach().numpy(), numeric, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id() for s in SAMPLES])
def test_jvp_by_finite_differences(sample):
    check_jvp(sample.call, make_inputs(sample))


# --- values against NumPy -------------------------------------------------------
@pytest.fixture
def x(rng):
    return rng.standard_normal((3, 4, 5))


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2), (1,)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_values_match_numpy(x, dim, keepdim):
    t = cr.tensor(x)
    axis = dim if dim is None or isinstance(dim, tuple) else (dim,)
    kw = {} if dim is None else {"dim": dim}
    for got, want in [(t.sum(**kw, keepdim=keepdim), np.sum(x, axis, keepdims=keepdim)),
                      (t.mean(**kw, keepdim=keepdim), np.mean(x, axis, keepdims=keepdim)),
                      (t.var(**kw, keepdim=keepdim), np.var(x, axis, ddof=1, keepdims=keepdim)),
                      (t.std(**kw, keepdim=keepdim), np.std(x, axis, ddof=1, keepdims=keepdim)),
                      (t.amax(**kw, keepdim=keepdim), np.max(x, axis, keepdims=keepdim)),
                      (t.amin(**kw, keepdim=keepdim), np.min(x, axis, keepdims=keepdim)),
                      (t.norm(dim=dim, keepdim=keepdim),
                       np.sqrt(np.sum(x * x, axis, keepdims=keepdim)))]:
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_single_dim_values_match_numpy(x):
    t = cr.tensor(x)
    np.testing.assert_allclose(t.prod(1).numpy(), np.prod(x, 1))
    np.testing.assert_allclose(t.cumsum(2).numpy(), np.cumsum(x, 2))
    e = np.exp(x - x.max(0, keepdims=True))
    np.testing.assert_allclose(t.softmax(0).numpy(), e / e.sum(0, keepdims=True))
    np.testing.assert_allclose(t.log_softmax(0).numpy(), np.log(e / e.sum(0, keepdims=True)))
    np.testing.assert_allclose(t.logsumexp((0, 1)).numpy(), np.log(np.exp(x).sum((0, 1))))
    np.testing.assert_array_equal(t.argmax(2).numpy(), np.argmax(x, 2))
    np.testing.assert_array_equal(t.argmin().numpy(), np.argmin(x))
    np.testing.assert_array_equal(t.max(1).values.numpy(), np.max(x, 1))
    np.testing.assert_array_equal(t.min(-1, keepdim=True).indices.numpy(),
                                  np.argmin(x, -1, keepdims=True))


@pytest.mark.parametrize("p", [1, 3, 0.5, -1.5, math.inf, -math.inf, 0])
def test_norm_orders_match_numpy(x, p):
    got = cr.tensor(x).norm(p, dim=(1, 2))
    want = np.linalg.norm(x.reshape(3, -1), p, axis=1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_complex_reductions():
    z = np.array([[1 + 2j, 3 - 1j], [0.5j, -2 + 0j]])
    t = cr.tensor(z)
    assert t.var().dtype is cr.float64 and t.norm().dtype is cr.float64
    np.testing.assert_allclose(t.var(1).numpy(), np.var(z, 1, ddof=1))
    np.testing.assert_allclose(t.norm(3).numpy(), np.sum(np.abs(z) ** 3) ** (1 / 3))
    np.testing.assert_allclose(t.logsumexp(0).numpy(), np.log(np.exp(z).sum(0)))
    np.testing.assert_allclose(t.cumsum(1).numpy(), np.cumsum(z, 1))
    np.testing.assert_allclose(t.prod().numpy(), np.prod(z))
    assert t.logsumexp(0).dtype is cr.complex128


def test_stable_logsumexp_and_softmax():
    big = cr.tensor([1000.0, 1000.0, -1000.0], dtype=cr.float64)
    assert big.logsumexp(0).item() == pytest.approx(1000 + math.log(2))
    np.testing.assert_allclose(big.softmax(0).numpy(), [0.5, 0.5, 0.0])
    assert big.log_softmax(0).numpy()[0] == pytest.approx(-math.log(2))
    inf = cr.tensor([-math.inf, -math.inf])
    assert inf.logsumexp(0).item() == -math.inf
    assert cr.tensor([1.0, math.inf]).logsumexp(0).item() == math.inf
    assert cr.zeros(0, 3).logsumexp(0).tolist() == [-math.inf] * 3


def test_empty_reductions():
    e = cr.zeros(0, 3)
    assert e.sum().item() == 0 and e.prod().item() == 1
    assert math.isnan(e.mean().item())
    assert e.amax(1).shape == (0,) and e.max(1).indices.shape == (0,)
    assert e.softmax(1).shape == (0, 3) and e.cumsum(0).shape == (0, 3)
    assert e.norm().item() == 0 and e.norm(1, dim=0).tolist() == [0.0] * 3
    assert not e.any().item() and e.all().item()
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert all(math.isnan(v) for v in e.var(0).tolist())


# --- dtype rules -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [cr.int8, cr.int32, cr.int64, cr.uint8, cr.bool])
def test_integer_sum_prod_cumsum_give_int64(dtype):
    t = cr.ones(3, dtype=dtype)
    assert t.sum().dtype is cr.int64 and t.sum(0).dtype is cr.int64
    assert t.prod().dtype is cr.int64 and t.cumsum(0).dtype is cr.int64
    assert t.sum().item() == 3


def test_dtype_argument():
    t = cr.ones(3, dtype=cr.int32)
    assert t.sum(dtype=cr.int32).dtype is cr.int32
    assert t.sum(dtype=cr.float32).dtype is cr.float32
    assert t.mean(dtype=cr.float64).dtype is cr.float64
    assert t.cumsum(0, dtype=cr.float32).dtype is cr.float32
    assert cr.ones(3, dtype=cr.float16).sum().dtype is cr.float16
    x = cr.ones(3, requires_grad=True)
    y = x.sum(dtype=cr.float64)
    assert y.dtype is cr.float64 and y.grad_fn.name() == "SumBackward0"
    y.backward()
    assert x.grad.dtype is cr.float32 and x.grad.tolist() == [1.0] * 3
    assert cr.softmax(cr.tensor([1, 2]), 0, dtype=cr.float64).dtype is cr.float64
    assert cr.logsumexp(cr.tensor([1, 2]), 0).dtype is cr.float32


LOW_PRECISION_CALLS = [
    lambda x: x.sum(1), lambda x: x.mean(), lambda x: x.prod(1), lambda x: x.var(1),
    lambda x: x.std(), lambda x: x.amax(1), lambda x: x.max(), lambda x: x.max(1).values,
    lambda x: x.logsumexp(1), lambda x: x.softmax(1), lambda x: x.log_softmax(0),
    lambda x: x.norm(), lambda x: x.norm(3), lambda x: x.norm(math.inf), lambda x: x.cumsum(1)]


@pytest.mark.parametrize("dtype", [cr.float16, cr.bfloat16, cr.float32])
@pytest.mark.parametrize("index", range(len(LOW_PRECISION_CALLS)))
def test_floating_dtypes_are_kept_forward_and_backward(dtype, index):
    x = cr.tensor([[1.0, 2.0, 2.0], [3.0, 0.5, 1.0]], dtype=dtype, requires_grad=True)
    y = LOW_PRECISION_CALLS[index](x)
    y.sum().backward()
    assert y.dtype is dtype and x.grad.dtype is dtype


def test_extremes_keep_dtype_and_logical_reductions():
    assert cr.tensor([True, False]).amax().dtype is cr.bool
    assert cr.tensor([3, 1], dtype=cr.int32).max().dtype is cr.int32
    assert cr.tensor([3, 1], dtype=cr.int32).min(0).values.dtype is cr.int32
    assert cr.tensor([1, 0], dtype=cr.uint8).all().dtype is cr.uint8
    t = cr.tensor([[1.0, 0.0], [2.0, 3.0]])
    assert t.all().dtype is cr.bool and t.any(1).tolist() == [True, True]
    assert t.all(dim=(0, 1), keepdim=True).shape == (1, 1)
    assert t.all(()).tolist() == [[True, False], [True, True]]     # dim=() reduces nothing
    assert t.argmax().dtype is cr.int64 and t.argmax(keepdim=True).shape == (1, 1)


# --- named tuples ----------------------------------------------------------------
def test_max_dim_returns_named_tuple():
    x = cr.tensor([[1.0, 5.0, 2.0], [7.0, 2.0, 7.0]], requires_grad=True)
    r = x.max(1)
    assert isinstance(r, tuple) and isinstance(r, cr.return_types.max) and len(r) == 2
    values, indices = r
    assert values is r.values and indices is r[1]
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert indices.dtype is cr.int64 and not indices.requires_grad and indices.grad_fn is None
    assert values.grad_fn.name() == "MaxBackward0"
    assert repr(r).startswith("chainrule.return_types.max(\nvalues=tensor(")
    assert "indices=tensor([1, 0])" in repr(r)
    r2 = cr.min(x, dim=0, keepdim=True)
    assert type(r2) is cr.return_types.min and r2.indices.shape == (1, 3)
    assert r2._asdict().keys() == {"values", "indices"}


def test_max_overloads():
    x = cr.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    y = cr.tensor([[3.0, 3.0], [3.0, 3.0]])
    assert x.max().grad_fn.name() == "MaxBackward1" and x.min().grad_fn.name() == "MinBackward1"
    assert cr.max(x, y).grad_fn.name() == "MaximumBackward0"
    assert cr.max(x, other=y).tolist() == [[3.0, 5.0], [7.0, 3.0]]
    assert x.min(y).tolist() == [[1.0, 3.0], [3.0, 2.0]]
    zero_d = cr.tensor(2.0, requires_grad=True)
    r = zero_d.max(0)
    assert r.values.item() == 2.0 and r.indices.item() == 0 and r.indices.shape == ()


# --- ties and subgradients -------------------------------------------------------
def _grad_of(fn, data, **kw):
    x = cr.tensor(data, dtype=cr.float64, requires_grad=True)
    fn(x, **kw).sum().backward()
    return x.grad.tolist()


TIES = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]


def test_ties_split_evenly_in_full_and_multi_dim_reductions():
    assert _grad_of(lambda x: x.max(), TIES) == [[0, 0.5, 0.5], [0, 0, 0]]
    assert _grad_of(lambda x: x.amax(1), TIES) == [[0, 0.5, 0.5], [0.5, 0.5, 0]]
    assert _grad_of(lambda x: x.amin(), [[1.0, 1.0], [1.0, 2.0]]) == [[1 / 3] * 2,
                                                                      [1 / 3, 0]]
    assert _grad_of(lambda x: x.norm(math.inf), TIES) == [[0, 0.5, 0.5], [0, 0, 0]]
    assert _grad_of(lambda x: x.norm(-math.inf), [[-1.0, 1.0], [2.0, 3.0]]) == [[-0.5, 0.5],
                                                                                [0, 0]]


def test_max_dim_sends_gradient_to_the_index():
    assert _grad_of(lambda x: x.max(1).values, TIES) == [[0, 1, 0], [1, 0, 0]]
    assert _grad_of(lambda x: x.min(0).values, [[1.0, 2.0], [1.0, 0.0]]) == [[1, 0], [0, 1]]


def test_subgradients_at_zero_are_zero():
    zeros = [0.0, 0.0, 0.0]
    for p in (2, 1, 3, 0.5, math.inf, 0):
        assert _grad_of(lambda x: x.norm(p), zeros) == zeros
    assert _grad_of(lambda x: x.norm(0.5), [1.0, 0.0, 4.0])[1] == 0.0
    assert _grad_of(lambda x: x.std(), [2.0, 2.0, 2.0]) == zeros
    assert _grad_of(lambda x: x.std(1), [[1.0, 1.0], [1.0, 3.0]])[0] == [0.0, 0.0]


def test_complex_norm_gradient_is_z_over_norm():
    z = cr.tensor([3 + 4j, 0j], requires_grad=True)
    z.norm().backward()
    np.testing.assert_allclose(z.grad.numpy(), [0.6 + 0.8j, 0])


# --- prod with zeros ---------------------------------------------------------------
@pytest.mark.parametrize("data, want", [
    ([2.0, 0.0, 3.0], [0.0, 6.0, 0.0]),
    ([2.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
    ([0.0], [1.0]),
    ([2.0, 5.0, 3.0], [15.0, 6.0, 10.0])])
def test_prod_gradient_with_zeros(data, want):
    assert _grad_of(lambda x: x.prod(), data) == want
    assert _grad_of(lambda x: x.prod(0), data) == want


def test_prod_second_derivative_with_zeros():
    x = cr.tensor([2.0, 0.0, 0.0, 3.0], dtype=cr.float64, requires_grad=True)
    (g,) = cr.autograd.grad(x.prod(), x, create_graph=True)
    rows = np.eye(4)
    hessian = [cr.autograd.grad((g * cr.tensor(rows[i])).sum(), x, retain_graph=True)[0].tolist()
               for i in range(4)]
    assert hessian[1] == [0.0, 0.0, 6.0, 0.0] and hessian[2] == [0.0, 6.0, 0.0, 0.0]
    assert hessian[0] == [0.0] * 4


# --- var/std arguments -----------------------------------------------------------
def test_var_correction_and_legacy_unbiased(x):
    t = cr.tensor(x)
    np.testing.assert_allclose(t.var(1, False).numpy(), np.var(x, 1))
    np.testing.assert_allclose(t.var(False).numpy(), np.var(x))
    np.testing.assert_allclose(t.var(1, True, True).numpy(), np.var(x, 1, ddof=1,
                                                                    keepdims=True))
    np.testing.assert_allclose(t.std(dim=(0, 1), correction=2).numpy(),
                               np.std(x, (0, 1), ddof=2))
    np.testing.assert_allclose(cr.var(t, unbiased=False).numpy(), np.var(x))
    with pytest.raises(TypeError):
        t.var(0, unbiased=True, correction=1)


def test_var_single_element_warns_and_gives_nan():
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert math.isnan(cr.tensor([1.0]).var().item())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cr.tensor([1.0]).var(correction=0).item() == 0.0


# --- errors ------------------------------------------------------------------------
def test_dim_out_of_range():
    t = cr.zeros(2, 3)
    msg = r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"
    for fn in (lambda: t.sum(5), lambda: t.mean((0, 5)), lambda: t.amax(5),
               lambda: t.max(5), lambda: t.softmax(5), lambda: t.cumsum(5),
               lambda: t.argmax(5), lambda: t.norm(dim=5), lambda: t.var(5),
               lambda: t.logsumexp(5), lambda: t.prod(5), lambda: t.all(5)):
        with pytest.raises(IndexError, match=msg):
            fn()
    with pytest.raises(IndexError, match=r"\[-1, 0\], but got 1"):
        cr.ones(()).sum(1)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        t.sum((0, -2))


def test_reductions_without_identity_over_nothing():
    e = cr.zeros(0, 3)
    with pytest.raises(RuntimeError, match=r"^amax\(\): Expected reduction dim to be "
                       r"specified for input.numel\(\) == 0. Specify the reduction dim"):
        e.amax()
    with pytest.raises(RuntimeError, match=r"^max\(\): Expected reduction dim to be specified"):
        e.max()
    with pytest.raises(IndexError, match=r"^min\(\): Expected reduction dim 0 to have "
                       r"non-zero size.$"):
        e.min(0)
    with pytest.raises(IndexError, match=r"^amin\(\): Expected reduction dim 0"):
        e.amin((0, 1))
    with pytest.raises(IndexError, match=r"^argmax\(\): Expected reduction dim to be "
                       r"specified for input.numel\(\) == 0.$"):
        e.argmax()
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        e.norm(math.inf)


def test_integer_and_complex_inputs_where_unsupported():
    i = cr.ones(3, 4, dtype=cr.int64)
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype. Input "
                       "dtype must be either a floating point or complex dtype. Got: Long"):
        i.mean()
    with pytest.raises(RuntimeError, match="Optional dtype .* Got: Long"):
        i.mean(dtype=cr.int64)
    with pytest.raises(NotImplementedError,
                       match="\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        i.softmax(1)
    with pytest.raises(NotImplementedError,
                       match="\"log_softmax_kernel_impl\" not implemented for 'Long'"):
        i.log_softmax(0)
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        i.std()
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                       "input. Got Long"):
        i.norm()
    z = cr.ones(3, dtype=cr.complex128)
    with pytest.raises(NotImplementedError, match="\"max_all\" not implemented for "
                       "'ComplexDouble'"):
        z.max()
    with pytest.raises(RuntimeError, match="max\\(\\): does not support complex input"):
        z.max(0)
    with pytest.raises(NotImplementedError, match="max_values_cpu"):
        z.amax()
    with pytest.raises(RuntimeError, match="argmax\\(\\): does not support complex input"):
        z.argmax()


def test_bad_arguments():
    t = cr.ones(2, 3)
    with pytest.raises(TypeError):
        t.prod((0, 1))
    with pytest.raises(TypeError):
        t.softmax((0, 1))
    with pytest.raises(RuntimeError, match="Order abc not supported"):
        t.norm("abc")
    with pytest.raises(RuntimeError, match="dtype should be complex for complex inputs"):
        cr.ones(2, dtype=cr.complex64).norm(dtype=cr.float64)
    with pytest.raises(RuntimeError, match="without narrowing"):
        cr.ones(2, dtype=cr.float64).norm(dtype=cr.float32)


def test_dim_accepts_numpy_integers_and_norm_accepts_p_none():
    t = cr.tensor([[1.0, 5.0], [7.0, 2.0]])
    assert t.max(np.int64(1)).indices.tolist() == [1, 0]
    assert t.cumsum(np.int32(0)).tolist() == [[1.0, 5.0], [8.0, 7.0]]
    assert t.norm(None, 1).tolist() == pytest.approx([math.sqrt(26), math.sqrt(53)])
    with pytest.raises(TypeError):
        t.cumsum(True)


def test_norm_out_argument():
    out = cr.zeros(())
    assert cr.norm(cr.tensor([3.0, 4.0]), out=out) is out and out.item() == 5.0
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        cr.norm(cr.ones(2, requires_grad=True), out=out)


# --- graph details --------------------------------------------------------------
def test_node_names():
    x = cr.ones(2, 3, requires_grad=True)
    names = {"SumBackward0": x.sum(), "SumBackward1": x.sum(0), "MeanBackward0": x.mean(),
             "MeanBackward1": x.mean((0, 1)), "ProdBackward0": x.prod(),
             "ProdBackward1": x.prod(1), "VarBackward0": x.var(0), "StdBackward0": x.std(),
             "AmaxBackward0": x.amax(), "AminBackward0": x.amin(0),
             "LogsumexpBackward0": x.logsumexp(1), "SoftmaxBackward0": x.softmax(0),
             "LogSoftmaxBackward0": x.log_softmax(1),
             "LinalgVectorNormBackward0": x.norm(), "CumsumBackward0": x.cumsum(1),
             "MinBackward0": x.min(1).values}
    for name, out in names.items():
        assert out.grad_fn.name() == name


def test_max_dim_survives_inplace_change_of_input():
    """max(dim) saves the indices, not the input (like the reference)."""
    x = cr.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    y = x * 1
    values = y.max(1).values
    y.add_(1)
    values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


# --- torch parity ------------------------------------------------------------------
def _torch_out(value):
    return value.values if hasattr(value, "indices") else value


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id() for s in SAMPLES])
def test_parity_with_torch(sample, torch):
    inputs = make_inputs(sample)
    t_inputs = [to_torch(i, torch) for i in inputs]
    out, t_out = sample.call(*inputs), sample.torch_call(*t_inputs)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    assert out.grad_fn.name() == t_out.grad_fn.name()
    g = _random_like(out._data, np.random.default_rng(2))
    xs = _diff_inputs(inputs)
    t_xs = [t for t in t_inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    grads = cr.autograd.grad(out, xs, cr.tensor(g), allow_unused=True)
    t_grads = torch.autograd.grad(t_out, t_xs, torch.from_numpy(g), allow_unused=True)
    for a, b in zip(grads, t_grads):
        want = np.zeros(a.shape) if b is None else b.resolve_conj().numpy()
        np.testing.assert_allclose(a.numpy(), want, rtol=1e-10, atol=1e-12)


# --- scans: cumprod, logcumsumexp, cummax, cummin ---------------------------------------
ZEROS = [[2.0, 0.0, 3.0, 0.0, 4.0], [0.0, 0.0, 1.5, 2.0, -1.0], [1.0, 2.0, 3.0, 4.0, 0.0]]


def test_cumprod_gradient_with_zeros_matches_the_product_rule():
    """d y_i / d x_k = prod_{j <= i, j != k} x_j, summed against g (written out here)."""
    x = np.array(ZEROS)
    g = np.random.default_rng(0).standard_normal(x.shape)
    want = np.zeros_like(x)
    for r, k, i in np.ndindex(3, 5, 5):
        if i >= k:
            want[r, k] += g[r, i] * np.prod(np.delete(x[r, :i + 1], k))
    np.testing.assert_allclose(_grad_of_g(lambda t: t.cumprod(1), x, g), want, rtol=1e-12)


def _grad_of_g(fn, data, g):
    x = cr.tensor(data, dtype=cr.float64, requires_grad=True)
    (grad,) = cr.autograd.grad(fn(x), x, cr.tensor(g))
    return grad.numpy()


def test_cumprod_second_derivative_with_zeros_matches_torch(torch):
    x = cr.tensor(ZEROS, dtype=cr.float64, requires_grad=True)
    xt = torch.tensor(ZEROS, dtype=torch.float64, requires_grad=True)
    g = np.random.default_rng(1).standard_normal((3, 5))
    (gx,) = cr.autograd.grad(x.cumprod(1), x, cr.tensor(g), create_graph=True)
    (gxt,) = torch.autograd.grad(xt.cumprod(1), xt, torch.tensor(g), create_graph=True)
    w = np.random.default_rng(2).standard_normal((3, 5))
    (h,) = cr.autograd.grad((gx * cr.tensor(w)).sum(), x)
    (ht,) = torch.autograd.grad((gxt * torch.tensor(w)).sum(), xt)
    np.testing.assert_allclose(h.numpy(), ht.numpy(), atol=1e-12)


def test_cumprod_dtypes_and_node():
    assert cr.tensor([1, 2, 3], dtype=cr.int32).cumprod(0).dtype is cr.int64
    assert cr.tensor([1, 2, 3]).cumprod(0, dtype=cr.float64).dtype is cr.float64
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    assert x.cumprod(0).grad_fn.name() == "CumprodBackward0"
    y = x * 1
    assert y.cumprod_(0) is y and y.tolist() == [1.0, 2.0] and y._version == 1


def test_logcumsumexp_is_stable_forward_and_backward():
    x = cr.tensor([1000.0, -1000.0, 1000.0, -math.inf], dtype=cr.float64, requires_grad=True)
    y = x.logcumsumexp(0)
    np.testing.assert_allclose(y.detach().numpy(), [1000.0, 1000.0, 1000.0 + math.log(2),
                                                    1000.0 + math.log(2)])
    g = cr.tensor([1.0, -2.0, 3.0, 0.5], dtype=cr.float64)
    y.backward(g)
    # d y_i / d x_k = exp(x_k - y_i): only the two 1000s count, half each at the end
    np.testing.assert_allclose(x.grad.numpy(), [1 - 2 + 1.5 + 0.25, 0.0, 1.5 + 0.25, 0.0],
                               atol=1e-12)
    z = cr.tensor([-math.inf, -math.inf, 0.0], dtype=cr.float64, requires_grad=True)
    z.logcumsumexp(0).sum().backward()
    assert z.grad.tolist() == [0.0, 0.0, 1.0]


def test_complex_logcumsumexp_steps_like_the_reference(torch):
    # each step factors out the larger real part (no overflow at 1000); the imaginary
    # part is the steps' own (4.1388 > pi is not wrapped); -inf adds nothing, NaN spreads
    inf, nan = math.inf, math.nan
    for values in ([1 + 2j, 3 - 1j, -2 + 4j, 0.5 + 3j], [4j, 4j, 7j], [1000 + 1j, 1000 + 2j],
                   [complex(-inf, 1), complex(-inf, 2), 3 + 1j], [complex(inf, 1)] * 2,
                   [complex(inf, 1), complex(-inf, 2)], [1, complex(1, nan), 2]):
        ours = cr.tensor(values, dtype=cr.complex128).logcumsumexp(0).numpy()
        theirs = torch.tensor(values, dtype=torch.complex128).logcumsumexp(0).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_cummax_cummin_indices_ties_and_nan(torch):
    data = [[1.0, 3.0, 3.0, 2.0, math.nan, 5.0], [2.0, 1.0, 1.0, 0.0, 0.0, 4.0]]
    for name in ("cummax", "cummin"):
        ours = getattr(cr.tensor(data), name)(1)
        theirs = getattr(torch.tensor(data), name)(1)
        assert type(ours) is getattr(cr.return_types, name)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        assert ours.indices.tolist() == theirs.indices.tolist()
        assert ours.indices.dtype is cr.int64
    # the gradient gathers at the running extreme's index (repeated indices add up)
    assert _grad_of(lambda x: x.cummax(0).values, [1.0, 3.0, 2.0, 2.5]) == [1.0, 3.0, 0.0, 0.0]
    assert _grad_of(lambda x: cr.cummin(x, 0).values, [[2.0], [1.0]]) == [[1.0], [1.0]]


# --- sort, argsort, msort, topk, kthvalue -------------------------------------------------
def test_sort_is_stable_both_ways_and_puts_nan_last(torch):
    data = [3.0, 1.0, math.nan, 3.0, 1.0, 2.0]
    for descending in (False, True):
        ours = cr.tensor(data).sort(descending=descending)
        theirs = torch.tensor(data).sort(descending=descending, stable=True)
        assert ours.indices.tolist() == theirs.indices.tolist()
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        assert cr.argsort(cr.tensor(data), descending=descending).tolist() == \
            theirs.indices.tolist()
    assert cr.tensor(data, dtype=cr.bfloat16).sort().indices.tolist() == [1, 4, 5, 0, 3, 2]
    r = cr.sort(cr.tensor([[2.0, 1.0], [0.0, 3.0]]), dim=0)
    assert type(r) is cr.return_types.sort and r.values.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert cr.tensor([[2.0, 1.0], [0.0, 3.0]]).msort().tolist() == r.values.tolist()
    zero_d = cr.sort(cr.tensor(5.0))
    assert zero_d.values.item() == 5.0 and zero_d.indices.shape == ()
    x = cr.ones(3, requires_grad=True)
    assert x.sort().values.grad_fn.name() == "SortBackward0"
    assert x.sort(stable=True).values.grad_fn.name() == "SortBackward1"
    with pytest.raises(RuntimeError, match="does not support complex"):
        cr.ones(2, dtype=cr.complex64).sort()


def test_topk_and_kthvalue():
    x = cr.tensor([[1.0, 5.0, 3.0, 4.0], [2.0, 0.0, 6.0, 1.0]])
    r = x.topk(2)
    assert type(r) is cr.return_types.topk
    assert r.values.tolist() == [[5.0, 4.0], [6.0, 2.0]] and r.indices.tolist() == [[1, 3],
                                                                                      [2, 0]]
    assert x.topk(1, dim=0, largest=False).values.tolist() == [[1.0, 0.0, 3.0, 1.0]]
    assert x.topk(0).values.shape == (2, 0)
    k = x.kthvalue(2, dim=1, keepdim=True)
    assert type(k) is cr.return_types.kthvalue and k.values.tolist() == [[3.0], [1.0]]
    assert k.indices.tolist() == [[2], [3]] and x.kthvalue(1, 0).indices.shape == (4,)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(5)
    with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range for "
                                           "dimension 1"):
        x.kthvalue(0)
    assert _grad_of(lambda t: t.topk(2).values * cr.tensor([1.0, 10.0], dtype=cr.float64),
                    [1.0, 5.0, 3.0, 4.0]) == [0.0, 1.0, 0.0, 10.0]


# --- median, nanmedian ----------------------------------------------------------------------
def test_median_is_the_lower_median_and_propagates_nan(torch):
    data = [[1.0, 4.0, 2.0, 3.0], [math.nan, 1.0, 2.0, 3.0], [math.nan, math.nan, 1.0, 5.0],
            [math.nan] * 4]
    for name in ("median", "nanmedian"):
        ours, theirs = getattr(cr.tensor(data), name)(1), getattr(torch.tensor(data), name)(1)
        assert type(ours) is getattr(cr.return_types, name)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        assert ours.indices.tolist()[:3] == theirs.indices.tolist()[:3]
        for row in data:
            np.testing.assert_array_equal(getattr(cr.tensor(row), name)().numpy(),
                                          getattr(torch.tensor(row), name)().numpy())
    assert math.isnan(cr.zeros(0).median().item())
    with pytest.raises(IndexError, match="median\\(\\): Expected reduction dim 0 to have "
                                         "non-zero size."):
        cr.zeros(0, 3).median(0)


def test_median_gradients():
    # median(): shared by the elements equal to the median; median(dim): to the index
    assert _grad_of(lambda x: x.median(), [2.0, 1.0, 2.0, 5.0]) == [0.5, 0.0, 0.5, 0.0]
    assert _grad_of(lambda x: x.median(0).values, [2.0, 1.0, 2.0, 5.0]) == [1.0, 0.0, 0.0, 0.0]
    assert _grad_of(lambda x: x.nanmedian(), [math.nan, 1.0, 3.0]) == [0.0, 1.0, 0.0]
    x = cr.ones(3, requires_grad=True)
    names = {"MedianBackward0": x.median(), "MedianBackward1": x.median(0).values,
             "NanmedianBackward0": x.nanmedian(), "NanmedianBackward1": x.nanmedian(0).values,
             "KthvalueBackward0": x.kthvalue(1).values, "TopkBackward0": x.topk(1).values,
             "CummaxBackward0": x.cummax(0).values, "LogcumsumexpBackward0": x.logcumsumexp(0),
             "NansumBackward0": x.nansum()}
    for name, out in names.items():
        assert out.grad_fn.name() == name


# --- quantile, nanquantile ---------------------------------------------------------------
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_matches_torch_values_and_gradients(torch, name, interpolation):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 5))
    data[1, 2] = math.nan
    q_cr = cr.tensor([0.0, 0.3, 0.5, 1.0], dtype=cr.float64)
    q_t = torch.tensor([0.0, 0.3, 0.5, 1.0], dtype=torch.float64)
    for dim, keepdim, (q, qt) in [(None, False, (0.3, 0.3)), (1, False, (q_cr, q_t)),
                                  (0, True, (0.5, 0.5)), (None, True, (q_cr, q_t)),
                                  (-1, True, (q_cr, q_t))]:
        x = cr.tensor(data, requires_grad=True)
        xt = torch.tensor(data, requires_grad=True)
        out = getattr(cr, name)(x, q, dim, keepdim, interpolation=interpolation)
        ref = getattr(torch, name)(xt, qt, dim, keepdim, interpolation=interpolation)
        assert out.shape == tuple(ref.shape)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
        g = rng.standard_normal(out.shape)
        out.backward(cr.tensor(g))
        ref.backward(torch.tensor(g))
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), atol=1e-12)


def test_quantile_gradcheck_and_errors():
    x = cr.tensor(np.random.default_rng(1).standard_normal((3, 4)), requires_grad=True)
    q = cr.tensor([0.2, 0.9], dtype=cr.float64)
    assert cr.autograd.gradcheck(lambda t: cr.quantile(t, q, dim=1), (x,))
    assert cr.autograd.gradgradcheck(lambda t: t.nanquantile(0.4, dim=0), (x,))
    f = cr.ones(3)
    for call, message in [
            (lambda: f.quantile(1.5), "quantile\\(\\) q must be in the range \\[0, 1\\] but "
                                      "got 1.5"),
            (lambda: f.quantile(0.5, interpolation="foo"),
             "interpolation must be one of linear, lower, higher, midpoint or nearest, but "
             "got foo"),
            (lambda: cr.ones(3, dtype=cr.int64).quantile(0.5),
             "input tensor must be either float or double dtype"),
            (lambda: f.quantile(cr.ones(2, 2)), "q must be a scalar or 1D tensor"),
            (lambda: f.quantile(cr.ones(2, dtype=cr.float64)), "same dtype as the input"),
            (lambda: cr.zeros(0).quantile(0.5), "input tensor must be non-empty")]:
        with pytest.raises(RuntimeError, match=message):
            call()


# --- nansum, nanmean, std_mean, var_mean, aminmax, count_nonzero -----------------------
def test_nan_reductions():
    data = [[1.0, math.nan, 3.0], [math.nan, math.nan, 2.0]]
    x = cr.tensor(data, dtype=cr.float64, requires_grad=True)
    assert x.nansum().item() == 6.0 and x.nansum(1).tolist() == [4.0, 2.0]
    assert x.nanmean(1).tolist() == [2.0, 2.0] and x.nanmean().item() == 2.0
    assert cr.nansum(cr.tensor([1, 2], dtype=cr.int32)).dtype is cr.int64
    x.nanmean().backward()
    assert x.grad.tolist() == [[1 / 3, 0.0, 1 / 3], [0.0, 0.0, 1 / 3]]
    with pytest.raises(RuntimeError, match="nanmean\\(\\): expected input to have floating "
                                           "point or complex dtype but got Long"):
        cr.tensor([1, 2]).nanmean()


def test_std_mean_var_mean_aminmax_count_nonzero(x):
    t = cr.tensor(x)
    s, m = cr.std_mean(t, 1, correction=0, keepdim=True)
    np.testing.assert_allclose(s.numpy(), np.std(x, 1, keepdims=True))
    np.testing.assert_allclose(m.numpy(), np.mean(x, 1, keepdims=True))
    v, m = cr.var_mean(t, (0, 2))
    np.testing.assert_allclose(v.numpy(), np.var(x, (0, 2), ddof=1))
    v, _ = cr.var_mean(t, False)                       # the legacy (input, unbiased) overload
    np.testing.assert_allclose(v.numpy(), np.var(x))
    r = t.aminmax(dim=1, keepdim=True)
    assert type(r) is cr.return_types.aminmax and r._fields == ("min", "max")
    np.testing.assert_array_equal(r.min.numpy(), np.min(x, 1, keepdims=True))
    np.testing.assert_array_equal(cr.aminmax(t).max.numpy(), np.max(x))
    z = cr.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])
    assert z.count_nonzero().item() == 3 and z.count_nonzero(dim=1).tolist() == [2, 1]
    assert cr.count_nonzero(z, (0, 1)).dtype is cr.int64


def test_histc_and_histogram(torch):
    data = [1.0, 2.0, 1.0, 2.5, -1.0, 7.0]
    for kwargs in [{"bins": 4, "min": 0, "max": 3}, {"bins": 5}, {"bins": 3, "min": 2, "max": 2}]:
        np.testing.assert_array_equal(cr.histc(cr.tensor(data), **kwargs).numpy(),
                                      torch.histc(torch.tensor(data), **kwargs).numpy())
    h = cr.histogram(cr.tensor(data), bins=4, range=(0.0, 3.0), weight=cr.tensor([2.0] * 6))
    ref = torch.histogram(torch.tensor(data), bins=4, range=(0.0, 3.0),
                          weight=torch.tensor([2.0] * 6))
    assert type(h) is cr.return_types.histogram
    np.testing.assert_allclose(h.hist.numpy(), ref.hist.numpy())
    np.testing.assert_allclose(h.bin_edges.numpy(), ref.bin_edges.numpy())
    edges = cr.histogram(cr.tensor(data), cr.tensor([0.0, 1.0, 10.0]), density=True)
    ref = torch.histogram(torch.tensor(data), torch.tensor([0.0, 1.0, 10.0]), density=True)
    np.testing.assert_allclose(edges.hist.numpy(), ref.hist.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        cr.histc(cr.tensor(data), bins=0)


def test_new_reductions_take_numpy_spellings():
    x = cr.ones(2, 3)
    assert x.median(1, keepdims=True).values.shape == (2, 1)
    assert x.nansum(axis=1, keepdims=True).shape == (2, 1)
    assert x.quantile(0.5, axis=1, keepdims=True).shape == (2, 1)
    assert cr.std_mean(x, axis=0, keepdims=True)[1].shape == (1, 3)
    assert cr.aminmax(x, dim=1, keepdims=True).max.shape == (2, 1)
