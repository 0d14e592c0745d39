"""Parity tier for chainrule.distributions against torch.distributions (skips without
torch): the same parameters (float64) on both sides; log_prob, cdf, icdf, entropy,
mean, mode, variance, shapes, supports and their gradients in the parameters must
agree, and so must KL divergences, transforms' values and log-dets, biject_to and the
gradient of a gamma sample in its concentration."""


import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402

DIST_CASES = [
    # (name, parameters, value)
    ("Gamma", dict(concentration=[2.0, 0.7], rate=[3.0, 1.5]), [0.4, 1.3]),
    ("Chi2", dict(df=[3.0, 5.5]), [0.4, 4.3]),
    ("Beta", dict(concentration1=[2.0, 0.7], concentration0=[3.0, 1.5]), [0.4, 0.8]),
    ("Dirichlet", dict(concentration=[[1.5, 2.0, 3.0]]), [[0.2, 0.3, 0.5]]),
    ("StudentT", dict(df=[3.0, 5.5], loc=[0.5, -1.0], scale=[1.2, 0.7]), [0.4, 1.3]),
    ("LogNormal", dict(loc=[0.5, -1.0], scale=[1.2, 0.7]), [0.4, 1.3]),
    ("Gumbel", dict(loc=[0.5, -1.0], scale=[1.2, 0.7]), [0.4, 1.3]),
    ("Cauchy", dict(loc=[0.5, -1.0], scale=[1.2, 0.7]), [0.4, 1.3]),
    ("HalfNormal", dict(scale=[1.2, 0.7]), [0.4, 1.3]),
    ("HalfCauchy", dict(scale=[1.2, 0.7]), [0.4, 1.3]),
    ("Pareto", dict(scale=[1.0, 0.5], alpha=[3.0, 2.5]), [1.4, 2.3]),
    ("Weibull", dict(scale=[1.2, 0.7], concentration=[2.0, 1.5]), [0.4, 1.3]),
    ("Kumaraswamy", dict(concentration1=[2.0, 0.7], concentration0=[3.0, 1.5]), [0.4, 0.8]),
    ("VonMises", dict(loc=[0.5, -1.0], concentration=[2.0, 5.0]), [0.4, 1.3]),
    ("InverseGamma", dict(concentration=[3.0, 4.5], rate=[2.0, 1.5]), [0.4, 1.3]),
    ("FisherSnedecor", dict(df1=[4.0, 6.5], df2=[6.0, 9.0]), [0.4, 1.3]),
    ("Binomial", dict(total_count=[10.0, 10.0], probs=[0.3, 0.6]), [3.0, 7.0]),
    ("Geometric", dict(probs=[0.3, 0.6]), [3.0, 0.0]),
    ("NegativeBinomial", dict(total_count=[3.0, 5.0], probs=[0.3, 0.6]), [3.0, 7.0]),
    ("Multinomial", dict(total_count=4, probs=[[0.2, 0.3, 0.5]]), [[1.0, 1.0, 2.0]]),
    ("RelaxedBernoulli", dict(temperature=0.5, probs=[0.3, 0.6]), [0.4, 0.8]),
    ("RelaxedOneHotCategorical", dict(temperature=0.5, logits=[[0.1, 0.5, -0.3]]),
     [[0.2, 0.3, 0.5]]),
    ("ContinuousBernoulli", dict(probs=[0.3, 0.8]), [0.4, 0.8]),
    ("ContinuousBernoulli", dict(probs=[0.4995, 0.5]), [0.4, 0.8]),
    ("LowRankMultivariateNormal", dict(loc=[[0.5, -1.0, 0.2]],
                                       cov_factor=[[[1.0, 0.2], [0.3, -0.5], [0.1, 0.4]]],
                                       cov_diag=[[1.2, 0.7, 0.9]]), [[0.4, 1.3, -0.2]]),
    ("LogisticNormal", dict(loc=[0.5, -1.0], scale=[1.2, 0.7]), [0.2, 0.3, 0.5]),
    ("GeneralizedPareto", dict(loc=[0.5, -1.0], scale=[1.2, 0.7], concentration=[0.3, 0.0]),
     [0.9, 1.3]),
    ("GeneralizedPareto", dict(loc=[0.5], scale=[1.2], concentration=[-0.3]), [1.9]),
    ("LKJCholesky", dict(dim=3, concentration=[2.0, 0.7]),
     [[1.0, 0.0, 0.0], [0.28, 0.96, 0.0], [-0.2, 0.5, 0.8426149773176359]]),
    ("Wishart", dict(df=[4.5], covariance_matrix=[[[2.0, 0.3], [0.3, 1.0]]]),
     [[1.5, 0.2], [0.2, 0.8]]),
]
METHODS = ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance", "stddev")


def _make(lib, name, params, grad=True):
    made = {}
    # the reference's GeneralizedPareto compares with a float32 zero: float64 fails there
    dtype = _dtype(lib, name)
    for key, v in params.items():
        if isinstance(v, list):
            made[key] = lib.tensor(v, dtype=dtype, requires_grad=grad and key not in (
                "total_count",))
        elif key == "temperature":
            made[key] = lib.tensor(v, dtype=lib.float64)
        else:
            made[key] = v
    return getattr(lib.distributions, name)(**made), made


def _dtype(lib, name):
    return lib.float32 if name == "GeneralizedPareto" else lib.float64


def _evaluate(lib, name, params, value, method):
    dist, made = _make(lib, name, params)
    x = lib.tensor(value, dtype=_dtype(lib, name))
    try:
        if method in ("log_prob", "cdf"):
            out = getattr(dist, method)(x)
        elif method == "icdf":
            out = dist.icdf(lib.full_like(x, 0.3))
        elif method == "entropy":
            out = dist.entropy()
        else:
            out = getattr(dist, method)
    except NotImplementedError:
        return "not implemented", None
    leaves = [t for t in made.values() if hasattr(t, "requires_grad") and t.requires_grad]
    grads = None
    if out.requires_grad and leaves:
        finite = out.isfinite()
        try:
            grads = lib.autograd.grad(out.where(finite, 0 * out).sum(), leaves,
                                      allow_unused=True)
        except NotImplementedError:         # the reference's gammainc in a, e.g.
            return out.detach().numpy(), None
        grads = [None if g is None else g.detach().numpy() for g in grads]
    return out.detach().numpy(), grads


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name, params, value", DIST_CASES,
                         ids=[f"{c[0]}{i}" for i, c in enumerate(DIST_CASES)])
def test_values_and_gradients_match_torch(name, params, value, method):
    expected, expected_grads = _evaluate(torch, name, params, value, method)
    actual, actual_grads = _evaluate(cr, name, params, value, method)
    if isinstance(expected, str):
        assert isinstance(actual, str), f"torch: {expected}; chainrule: {actual}"
        return
    if name == "Kumaraswamy" and method == "mode":
        return                       # the reference's mode formula is NaN for b > 1
    rtol = 1e-5 if name == "GeneralizedPareto" else 1e-6
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-9, equal_nan=True)
    for g, e in zip(actual_grads or [], expected_grads or []):
        if e is not None:
            np.testing.assert_allclose(0 if g is None else g, e, rtol=10 * rtol, atol=1e-6,
                                       equal_nan=True)


@pytest.mark.parametrize("name, params, value", DIST_CASES,
                         ids=[f"{c[0]}{i}" for i, c in enumerate(DIST_CASES)])
def test_shapes_supports_and_expand_match_torch(name, params, value):
    records = []
    for lib in (torch, cr):
        dist, _ = _make(lib, name, params, grad=False)
        wide = dist.expand((4,) + tuple(dist.batch_shape))
        x = lib.tensor(value, dtype=_dtype(lib, name))
        records.append((tuple(dist.batch_shape), tuple(dist.event_shape), dist.has_rsample,
                        tuple(dist.sample((3, 2)).shape), tuple(wide.batch_shape),
                        tuple(wide.sample().shape), wide.log_prob(x).detach().numpy().round(5)
                        .tolist(), repr(dist.support).replace("torch.", "chainrule."),
                        repr(dist).replace("torch.", "chainrule.")))
    # the reference's expanded LogisticNormal samples lose the new batch dimension
    n = 5 if name == "LogisticNormal" else 7
    assert repr(records[0][:n]) == repr(records[1][:n])
    assert records[0][8] == records[1][8]


def _pair(lib, pair):
    """The two distributions and the parameter tensors they were made from."""
    leaves, made = [], []
    for n, args in pair:
        params = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in args]
        leaves += params
        made.append(getattr(lib.distributions, n)(*params))
    return made[0], made[1], leaves


KL_CASES = [
    [("Gamma", ([2.0, 0.7], [3.0, 1.5])), ("Gamma", ([1.0, 2.0], [1.0, 0.5]))],
    [("Beta", ([2.0, 0.7], [3.0, 1.5])), ("Beta", ([1.0, 2.0], [1.0, 0.5]))],
    [("Dirichlet", ([[1.5, 2.0, 3.0]],)), ("Dirichlet", ([[1.0, 1.0, 2.0]],))],
    [("Gumbel", ([0.5, -1.0], [1.2, 0.7])), ("Gumbel", ([0.0, 1.0], [1.0, 2.0]))],
    [("HalfNormal", ([1.2, 0.7],)), ("HalfNormal", ([1.0, 2.0],))],
    [("Pareto", ([1.0, 0.5], [3.0, 2.5])), ("Pareto", ([0.5, 0.4], [2.0, 1.5]))],
    [("Geometric", ([0.3, 0.6],)), ("Geometric", ([0.5, 0.2],))],
    [("Cauchy", ([0.5, -1.0], [1.2, 0.7])), ("Cauchy", ([0.0, 1.0], [1.0, 2.0]))],
    [("LogNormal", ([0.5, -1.0], [1.2, 0.7])), ("LogNormal", ([0.0, 1.0], [1.0, 2.0]))],
    [("Binomial", ([10.0, 10.0], [0.3, 0.6])), ("Binomial", ([10.0, 10.0], [0.5, 0.2]))],
    [("ContinuousBernoulli", ([0.3, 0.8],)), ("ContinuousBernoulli", ([0.6, 0.1],))],
    [("Exponential", ([2.0, 0.7],)), ("Gamma", ([1.0, 2.0], [1.0, 0.5]))],
    [("Gamma", ([2.0, 0.7], [3.0, 1.5])), ("Exponential", ([1.0, 0.5],))],
    [("Normal", ([0.5, -1.0], [1.2, 0.7])), ("Gumbel", ([0.0, 1.0], [1.0, 2.0]))],
    [("Uniform", ([0.1, 0.2], [0.5, 0.7])), ("Beta", ([2.0, 0.7], [3.0, 1.5]))],
    [("Uniform", ([0.1, 0.2], [0.5, 0.7])), ("Normal", ([0.0, 1.0], [1.0, 2.0]))],
    [("Exponential", ([2.0, 0.7],)), ("Normal", ([0.0, 1.0], [1.0, 2.0]))],
    [("Beta", ([2.0, 0.7], [3.0, 1.5])), ("Uniform", ([0.0, 0.0], [1.0, 1.0]))],
    [("Laplace", ([0.5, -1.0], [1.2, 0.7])), ("Normal", ([0.0, 1.0], [1.0, 2.0]))],
    [("Bernoulli", ([0.3, 0.6],)), ("Poisson", ([1.0, 2.0],))],
    [("Beta", ([2.0, 0.7], [3.0, 1.5])), ("ContinuousBernoulli", ([0.3, 0.8],))],
    [("Beta", ([2.0, 0.7], [3.0, 1.5])), ("Exponential", ([1.0, 2.0],))],
    [("Beta", ([2.0, 0.7], [3.0, 1.5])), ("Gamma", ([1.0, 2.0], [1.0, 0.5]))],
    [("Beta", ([2.0, 0.7], [3.0, 1.5])), ("Normal", ([0.0, 1.0], [1.0, 2.0]))],
    [("Beta", ([2.0, 0.7], [3.0, 1.5])), ("Pareto", ([1.0, 2.0], [1.0, 0.5]))],
    [("ContinuousBernoulli", ([0.3, 0.8],)), ("Exponential", ([1.0, 2.0],))],
    [("ContinuousBernoulli", ([0.3, 0.8],)), ("Normal", ([0.0, 1.0], [1.0, 2.0]))],
    [("ContinuousBernoulli", ([0.3, 0.8],)), ("Uniform", ([-0.5, 0.2], [1.5, 0.7]))],
    [("Exponential", ([2.0, 0.7],)), ("Gumbel", ([0.0, 1.0], [1.0, 2.0]))],
    [("Exponential", ([2.0, 0.7],)), ("Uniform", ([0.0, 1.0], [1.0, 2.0]))],
    [("Gamma", ([2.0, 0.7], [3.0, 1.5])), ("Gumbel", ([0.0, 1.0], [1.0, 2.0]))],
    [("Gamma", ([2.0, 0.7], [3.0, 1.5])), ("Normal", ([0.0, 1.0], [1.0, 2.0]))],
    [("Gumbel", ([0.5, -1.0], [1.2, 0.7])), ("Normal", ([0.0, 1.0], [1.0, 2.0]))],
    [("Gumbel", ([0.5, -1.0], [1.2, 0.7])), ("Gamma", ([1.0, 2.0], [1.0, 0.5]))],
    [("Normal", ([0.5, -1.0], [1.2, 0.7])), ("Laplace", ([0.0, 1.0], [1.0, 2.0]))],
    [("Normal", ([0.5, -1.0], [1.2, 0.7])), ("Beta", ([1.0, 2.0], [1.0, 0.5]))],
    [("Pareto", ([1.0, 0.5], [3.0, 2.5])), ("Exponential", ([1.0, 2.0],))],
    [("Pareto", ([1.0, 0.5], [3.0, 0.5])), ("Gamma", ([1.0, 2.0], [1.0, 0.5]))],
    [("Pareto", ([1.0, 0.5], [3.0, 1.5])), ("Normal", ([0.0, 1.0], [1.0, 2.0]))],
    [("Uniform", ([0.1, 0.2], [0.5, 0.7])), ("ContinuousBernoulli", ([0.3, 0.8],))],
    [("Uniform", ([0.1, -0.2], [0.5, 0.7])), ("Exponential", ([1.0, 2.0],))],
    [("Uniform", ([0.1, -0.2], [0.5, 0.7])), ("Gamma", ([1.0, 2.0], [1.0, 0.5]))],
    [("Uniform", ([0.1, -0.2], [0.5, 0.7])), ("Gumbel", ([0.0, 1.0], [1.0, 2.0]))],
    [("Uniform", ([1.1, 0.2], [1.5, 0.7])), ("Pareto", ([1.0, 0.5], [3.0, 2.5]))],
    [("Poisson", ([1.0, 2.0],)), ("Bernoulli", ([0.3, 0.6],))],
    [("LowRankMultivariateNormal", ([[0.5, -1.0]], [[[1.0], [0.3]]], [[1.2, 0.7]])),
     ("LowRankMultivariateNormal", ([[0.0, 1.0]], [[[0.2], [-0.5]]], [[1.0, 2.0]]))],
    [("LowRankMultivariateNormal", ([[0.5, -1.0]], [[[1.0], [0.3]]], [[1.2, 0.7]])),
     ("MultivariateNormal", ([[0.0, 1.0]], [[[2.0, 0.3], [0.3, 1.0]]]))],
    [("MultivariateNormal", ([[0.0, 1.0]], [[[2.0, 0.3], [0.3, 1.0]]])),
     ("LowRankMultivariateNormal", ([[0.5, -1.0]], [[[1.0], [0.3]]], [[1.2, 0.7]]))],
]


@pytest.mark.parametrize("pair", KL_CASES, ids=[f"{a[0]}-{b[0]}" for a, b in KL_CASES])
def test_kl_divergences_and_gradients_match_torch(pair):
    out = []
    for lib in (torch, cr):
        p, q, params = _pair(lib, pair)
        kl = lib.distributions.kl_divergence(p, q)
        finite = kl.isfinite()
        grads = lib.autograd.grad(kl.where(finite, 0 * kl).sum(), params, allow_unused=True,
                                  materialize_grads=True) if kl.requires_grad else []
        out.append([kl.detach().numpy()] + [None if g is None else g.numpy() for g in grads])
    for a, b in zip(out[1], out[0]):
        np.testing.assert_allclose(0 if a is None else a, 0 if b is None else b,
                                   rtol=1e-6, atol=1e-9)


TRANSFORMS = [
    ("ExpTransform", (), [0.3, -1.2]),
    ("SigmoidTransform", (), [0.3, -1.2]),
    ("TanhTransform", (), [0.3, -1.2]),
    ("SoftplusTransform", (), [0.3, -1.2]),
    ("AffineTransform", (0.5, -2.0), [0.3, -1.2]),
    ("PowerTransform", ("t2.5",), [0.3, 1.2]),
    ("StickBreakingTransform", (), [0.3, -1.2]),
    ("LowerCholeskyTransform", (), [[0.3, -1.2], [0.5, 0.1]]),
    ("CorrCholeskyTransform", (), [0.3, -1.2, 0.5]),
]


@pytest.mark.parametrize("name, args, x", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transforms_match_torch(name, args, x):
    out = []
    for lib in (torch, cr):
        made = [lib.tensor(float(a[1:]), dtype=lib.float64) if isinstance(a, str) else a
                for a in args]
        t = getattr(lib.distributions.transforms, name)(*made)
        v = lib.tensor(x, dtype=lib.float64)
        y = t(v)
        record = [y.numpy(), t.inv(y).numpy(), repr(t), t.bijective]
        if name != "LowerCholeskyTransform":
            record.append(t.log_abs_det_jacobian(v, y).numpy())
        out.append(record)
    for a, b in zip(out[1], out[0]):
        if isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)
        else:
            assert a == b


def test_biject_to_and_transform_to_match_torch():
    names = ["real", "positive", "unit_interval", "simplex", "real_vector", "nonnegative",
             "corr_cholesky"]
    for name in names:
        for registry in ("biject_to", "transform_to"):
            got = [repr(getattr(lib.distributions, registry)(
                getattr(lib.distributions.constraints, name))) for lib in (torch, cr)]
            assert got[0] == got[1], (name, registry, got)
    x = [0.3, -0.4]
    for lib_values in [[getattr(lib.distributions, "transform_to")(
            lib.distributions.constraints.interval(-1.0, 3.0))(
            lib.tensor(x, dtype=lib.float64)).numpy() for lib in (torch, cr)]]:
        np.testing.assert_allclose(lib_values[1], lib_values[0], rtol=1e-12)


def test_standard_gamma_gradient_matches_torch():
    from chainrule.distributions.gamma import standard_gamma_grad
    alpha = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 50.0, 400.0])
    for q in (0.01, 0.3, 0.7, 0.99):
        x = np.array([_gamma_quantile(a, q) for a in alpha])
        expected = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
        np.testing.assert_allclose(standard_gamma_grad(alpha, x), expected, rtol=2e-3)


def _gamma_quantile(a, q):
    from scipy import special
    return float(special.gammaincinv(a, q))


def test_transformed_distribution_matches_torch():
    out = []
    for lib in (torch, cr):
        T = lib.distributions.transforms
        loc = lib.tensor([0.2, -0.3], dtype=lib.float64, requires_grad=True)
        base = lib.distributions.Normal(lib.zeros(2, dtype=lib.float64),
                                        lib.ones(2, dtype=lib.float64))
        d = lib.distributions.TransformedDistribution(
            base, [T.AffineTransform(loc, 2.0), T.TanhTransform()])
        x = lib.tensor([0.3, -0.6], dtype=lib.float64)
        lp = d.log_prob(x)
        (g,) = lib.autograd.grad(lp.sum(), loc)
        flow = lib.distributions.TransformedDistribution(
            lib.distributions.Normal(lib.zeros(3, dtype=lib.float64), 1.0),
            [T.StickBreakingTransform()])
        out.append([lp.detach().numpy(), g.numpy(), d.cdf(x).detach().numpy(),
                    d.icdf(lib.tensor([0.3, 0.8], dtype=lib.float64)).detach().numpy(),
                    flow.log_prob(lib.tensor([0.1, 0.2, 0.3, 0.4], dtype=lib.float64)).numpy(),
                    tuple(flow.event_shape), tuple(d.batch_shape)])
    for a, b in zip(out[1], out[0]):
        if isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-7)
        else:
            assert a == b





ERROR_CASES = {
    "negative concentration": lambda lib, D: D.Gamma(lib.tensor([-1.0]), lib.tensor([1.0])),
    "outside support": lambda lib, D: D.Beta(2.0, 2.0).log_prob(lib.tensor(1.5)),
    "below Pareto scale": lambda lib, D: D.Pareto(lib.tensor(1.0), lib.tensor(2.0)).log_prob(
        lib.tensor(0.5)),
    "0-d Dirichlet": lambda lib, D: D.Dirichlet(lib.tensor(1.0)),
    "tensor total_count": lambda lib, D: D.Multinomial(lib.tensor(3), lib.tensor([0.5, 0.5])),
    "cov_factor shape": lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(3, 1),
                                                                   lib.ones(2)),
    "inhomogeneous": lambda lib, D: D.Binomial(lib.tensor([2.0, 3.0]),
                                               lib.tensor([0.5, 0.5])).enumerate_support(),
    "continuous bernoulli": lambda lib, D: D.ContinuousBernoulli(lib.tensor(1.5),
                                                                 validate_args=True),
    "wishart df": lambda lib, D: D.Wishart(lib.tensor(0.5), lib.eye(2)),
    "lkj dim": lambda lib, D: D.LKJCholesky(1),
    "transforms list": lambda lib, D: D.TransformedDistribution(D.Normal(0.0, 1.0), [1]),
    "reshape": lambda lib, D: D.transforms.ReshapeTransform((4,), (3,)),
    "cache size": lambda lib, D: D.transforms.ExpTransform(cache_size=2),
    "biject_to": lambda lib, D: D.biject_to(D.constraints.lower_cholesky),
    "mixture": lambda lib, D: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0)),
    "binomial kl": lambda lib, D: D.kl_divergence(D.Binomial(2, lib.tensor(0.5)),
                                                  D.Binomial(3, lib.tensor(0.5))),
    "dependent": lambda lib, D: D.constraints.dependent.check(lib.zeros(1)),
    "gamma vs beta": lambda lib, D: D.kl_divergence(D.Gamma(1.0, 1.0), D.Beta(1.0, 1.0)),
}


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_errors_match_torch(name):
    seen = []
    for lib in (torch, cr):
        try:
            result = ERROR_CASES[name](lib, lib.distributions)
            seen.append(("no error", repr(result.tolist())))
        except Exception as e:  # noqa: BLE001 - the type and message are compared
            seen.append((type(e).__name__, str(e).replace("torch.", "chainrule.")))
    assert seen[0] == seen[1]
