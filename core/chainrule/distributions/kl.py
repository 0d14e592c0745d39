"""KL divergences between distributions: a registry of closed forms by type pair
(``register_kl``), looked up through the classes' method resolution orders."""
import math

from .._ops import FUNCTIONS
from .continuous import Exponential, Laplace, MultivariateNormal, Normal, Uniform, \
    _batch_mahalanobis
from .discrete import Bernoulli, Categorical, Independent, OneHotCategorical, Poisson
from .distribution import ExponentialFamily

F = FUNCTIONS
_KL = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for the two types.

    >>> import chainrule as cr
    >>> from chainrule.distributions import Normal, kl_divergence
    >>> kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0)).item()
    0.0
    """
    def decorator(fn):
        _KL[type_p, type_q] = fn
        return fn
    return decorator


def kl_divergence(p, q):
    """KL(p || q), batched over the distributions' batch shape.

    >>> import chainrule as cr
    >>> from chainrule.distributions import Bernoulli, kl_divergence
    >>> round(kl_divergence(Bernoulli(0.3), Bernoulli(0.5)).item(), 4)
    0.0823
    """
    for tp in type(p).__mro__:
        for tq in type(q).__mro__:
            fn = _KL.get((tp, tq))
            if fn is not None:
                return fn(p, q)
    if isinstance(p, ExponentialFamily) and isinstance(q, ExponentialFamily):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot                             be computed "
                                  "using Bregman divergences")
    raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                              f"{type(p).__name__} and q type {type(q).__name__}")


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    from ..nn.functional import softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, float("inf")).masked_fill(p.probs == 0, 0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, float("inf")).masked_fill(p.probs == 1, 0)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill(q.probs == 0, float("inf")).masked_fill(p.probs == 0, 0)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), float("inf"))


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event "
                         "shapes cannot be computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - \
        Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    n = p.event_shape[0]
    from .. import linalg
    shape = F["broadcast_shapes"](tuple(Lq.shape[:-2]), tuple(Lp.shape[:-2]))
    term2 = linalg.solve_triangular(Lq.expand(tuple(shape) + (n, n)),
                                    Lp.expand(tuple(shape) + (n, n)), upper=False)
    term2 = term2.pow(2).flatten(-2).sum(-1)
    term3 = _batch_mahalanobis(Lq, p.loc - q.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return p._sum_rightmost(result)


# --- the distributions beyond the first set (same family, then across families) ------
from .beta import Beta  # noqa: E402
from .binomial import Binomial  # noqa: E402
from .cauchy import Cauchy  # noqa: E402
from .continuous_bernoulli import ContinuousBernoulli  # noqa: E402
from .dirichlet import Dirichlet  # noqa: E402
from .gamma import Gamma  # noqa: E402
from .geometric import Geometric  # noqa: E402
from .gumbel import Gumbel  # noqa: E402
from .half_normal import HalfNormal  # noqa: E402
from .pareto import Pareto  # noqa: E402
from .lowrank_multivariate_normal import LowRankMultivariateNormal  # noqa: E402
from .transformed_distribution import TransformedDistribution  # noqa: E402
from .. import linalg  # noqa: E402
from .utils import euler_constant  # noqa: E402

_INF = float("inf")


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    lg = F["lgamma"]
    t1 = lg(q.concentration1) + lg(q.concentration0) + lg(sum_p)
    t2 = lg(p.concentration1) + lg(p.concentration0) + lg(sum_q)
    t3 = (p.concentration1 - q.concentration1) * F["digamma"](p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * F["digamma"](p.concentration0)
    t5 = (sum_q - sum_p) * F["digamma"](sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + F["log1p"](-p.probs)
                          - F["log1p"](-q.probs))
    return kl.masked_fill(p.total_count > q.total_count, _INF)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return (((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2))
            / (4 * p.scale * q.scale)).log()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + F["log1p"](-p.probs)
    t3 = -q._cont_bern_log_norm() - F["log1p"](-q.probs)
    return t1 + t2 + t3


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p, sum_q = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = F["lgamma"](sum_p) - F["lgamma"](sum_q)
    t2 = (F["lgamma"](p.concentration) - F["lgamma"](q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = F["digamma"](p.concentration) - F["digamma"](sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = F["lgamma"](q.concentration) - F["lgamma"](p.concentration)
    t3 = (p.concentration - q.concentration) * F["digamma"](p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = (ct2 + F["lgamma"](1 + ct1) - ct3).exp()
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - F["log1p"](-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio, alpha_ratio = p.scale / q.scale, q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return result.masked_fill(p.scale < q.scale, _INF)     # p puts mass where q has none


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    return (-q.concentration * ratio.log() + ratio + F["lgamma"](q.concentration)
            + q.concentration * euler_constant - (1 + euler_constant))


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration / p.rate)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_ratio, var_ratio = p.loc / q.scale, (p.scale / q.scale).pow(2)
    loc_ratio = q.loc / q.scale
    t1 = 0.5 * var_ratio.log()
    t3 = (-mean_ratio + 0.5 * var_ratio + loc_ratio).exp()
    return -t1 + mean_ratio - loc_ratio + t3 - 0.5 * (1 + math.log(2 * math.pi))


def _x_log_x(t):
    return F["xlogy"](t, t)                      # 0 at t = 0


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t1 = width.log()
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (F["lgamma"](q.concentration1) + F["lgamma"](q.concentration0)
          - F["lgamma"](q.concentration1 + q.concentration0))
    return (t3 + t4 - t1 - t2).masked_fill((p.high > 1) | (p.low < 0), _INF)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal, rate_sq = q.scale.pow(2), p.rate.pow(2)
    t1 = 0.5 * (rate_sq * var_normal * 2 * math.pi).log()
    return t1 - 1 + (rate_sq.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return result.masked_fill((q.low > 0) | (q.high < 1), _INF)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * ratio / math.pi).log()
    return (-t1 + ratio + (0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2))
            / var_normal - 1)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - F["log1p"](-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    c1, total = p.concentration1, p.concentration1 + p.concentration0
    t2 = F["lgamma"](q.concentration) - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (F["digamma"](c1) - F["digamma"](total))
    return -p.entropy() + t2 - t3 + q.rate * c1 / total


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    mean, total = p.mean, p.concentration1 + p.concentration0
    var_normal = q.scale.pow(2)
    second_moment = 0.5 * (mean * (1 - mean) / (total + 1) + mean.pow(2))
    return (-p.entropy() + 0.5 * (var_normal * 2 * math.pi).log()
            + (second_moment - q.loc * mean + 0.5 * q.loc.pow(2)) / var_normal)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).pow(2)) + q.scale.log()
    t3 = (p.variance + p.mean.pow(2) - 2.0 * q.loc * p.mean) / (2.0 * q.scale.pow(2))
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return result.masked_fill((q.low >= 0) | (q.high <= 1), _INF)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    prod, loc_ratio = p.rate * q.scale, q.loc / q.scale
    return (prod.log() - 1 - loc_ratio + loc_ratio.exp() * prod / (prod + 1)
            + prod.reciprocal())


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    c, prod, loc_ratio = p.concentration, p.rate * q.scale, q.loc / q.scale
    t1 = (c - 1) * F["digamma"](c) - F["lgamma"](c) - c
    t2 = prod.log() + c / prod
    t3 = loc_ratio.exp() * (1 + prod.reciprocal()).pow(-c) - loc_ratio
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    c, var_normal, rate_sq = p.concentration, q.scale.pow(2), p.rate.pow(2)
    t1 = 0.5 * (rate_sq * var_normal * 2 * math.pi).log() - c - F["lgamma"](c)
    t2 = 0.5 * (c.pow(2) + c) / rate_sq
    t3 = q.loc * c / p.rate
    return t1 + (c - 1) * F["digamma"](c) + (t2 - t3 + 0.5 * q.loc.pow(2)) / var_normal


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    t1 = (p.scale / q.scale).log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * (loc_diff / p.scale).pow(2)).exp()
    t3 = loc_diff * F["erf"](math.sqrt(0.5) * loc_diff / p.scale)
    return -t1 + (t2 + t3) / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    prod = p.scale * q.rate
    result = (p.alpha / prod).log() - p.alpha.reciprocal() + p.alpha * prod / (p.alpha - 1) - 1
    return result.masked_fill(p.alpha <= 1, _INF)      # no mean: infinitely far


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common = p.scale.log() + p.alpha.reciprocal()
    t2 = F["lgamma"](q.concentration) - q.concentration * q.rate.log()
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    result = p.alpha.log() - common + t2 + (1 - q.concentration) * common + t4 - 1
    return result.masked_fill(p.alpha <= 1, _INF)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal, common = 2 * q.scale.pow(2), p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    result = t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1
    return result.masked_fill(p.alpha <= 2, _INF)      # no variance: infinitely far


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - F["log1p"](-q.probs) - q._cont_bern_log_norm()
    return result.masked_fill((p.high >= 1) | (p.low <= 0), _INF)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return result.masked_fill(p.low < 0, _INF)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t2 = F["lgamma"](q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = -width.log() + t2 + t3 + q.rate * (p.high + p.low) / 2
    return result.masked_fill(p.low < 0, _INF)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common = q.scale / (p.high - p.low)
    high_diff, low_diff = (p.high - q.loc) / q.scale, (p.low - q.loc) / q.scale
    t1 = common.log() + 0.5 * (high_diff + low_diff)
    return t1 - common * ((-high_diff).exp() - (-low_diff).exp())


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return (t2 * (q.alpha + 1) - t1).masked_fill(p.low < q.scale, _INF)


def _infinite_like(p, q):
    """KL(p || q) where p has mass outside q's support: infinite, in p's batch shape."""
    from .. import _factories
    return _factories.full(tuple(p.batch_shape), _INF, dtype=p.mean.dtype, device=p.mean.device)


for _p, _qs in ((Beta, (Pareto,)), (ContinuousBernoulli, (Pareto,)),
                (Exponential, (Beta, ContinuousBernoulli, Pareto, Uniform)),
                (Gamma, (Beta, ContinuousBernoulli, Pareto, Uniform)),
                (Gumbel, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Laplace, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Normal, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Pareto, (Beta, ContinuousBernoulli, Uniform)), (Poisson, (Bernoulli, Binomial))):
    for _q in _qs:
        register_kl(_p, _q)(_infinite_like)


def _trace_xxt(x):
    """trace(x @ x.mT) over the last two dimensions."""
    return x.pow(2).flatten(-2).sum(-1)


def _check_same_event(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes "
                         "cannot be computed")


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_same_event(p, q, "Low Rank Multivariate Normals")
    qW, qD = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    pW, pD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = q._logdet() - p._logdet()
    term3 = q._mahalanobis(q.loc - p.loc)
    A = linalg.solve_triangular(q._capacitance_tril, qW.mT / qD.unsqueeze(-2), upper=False)
    term2 = ((pD / qD).sum(-1) + _trace_xxt(pW * qD.rsqrt().unsqueeze(-1))
             - _trace_xxt(A * pD.sqrt().unsqueeze(-2)) - _trace_xxt(A @ pW))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    _check_same_event(p, q, "(Low Rank) Multivariate Normals")
    L = q._unbroadcasted_scale_tril
    term1 = 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1) - p._logdet()
    term3 = _batch_mahalanobis(L, q.loc - p.loc)
    n, m = p.event_shape[0], p._unbroadcasted_cov_factor.size(-1)
    batch = tuple(F["broadcast_shapes"](tuple(L.shape[:-2]),
                                        tuple(p._unbroadcasted_cov_factor.shape[:-2])))
    L = L.expand(batch + (n, n))
    W = p._unbroadcasted_cov_factor.expand(batch + (n, m))
    D = p._unbroadcasted_cov_diag.sqrt().diag_embed().expand(batch + (n, n))
    term2 = (_trace_xxt(linalg.solve_triangular(L, W, upper=False))
             + _trace_xxt(linalg.solve_triangular(L, D, upper=False)))
    return 0.5 * (term1 + term2 + term3 - n)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    _check_same_event(p, q, "(Low Rank) Multivariate Normals")
    L, qW, qD = p._unbroadcasted_scale_tril, q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    term1 = q._logdet() - 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term3 = q._mahalanobis(q.loc - p.loc)
    A = linalg.solve_triangular(q._capacitance_tril, qW.mT / qD.unsqueeze(-2), upper=False)
    term2 = _trace_xxt(L * qD.rsqrt().unsqueeze(-1)) - _trace_xxt(A @ L)
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])
