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
from .transformed_distribution import TransformedDistribution  # noqa: E402
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
    return t * t.log()


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
