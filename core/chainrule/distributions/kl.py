"""KL divergences between distributions: a registry of closed forms by type pair
(``register_kl``), looked up through the classes' method resolution orders."""
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
