"""RelaxedOneHotCategorical (the Concrete / Gumbel-softmax distribution) and its
log-space base ExpRelaxedCategorical."""
from .. import _factories
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .discrete import Categorical, _clamp_probs
from .distribution import Distribution, broadcast_all
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

F = FUNCTIONS
__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical sample (log-softmax of Gumbel-perturbed
    logits over ``temperature``).

    >>> import chainrule as cr
    >>> from chainrule.distributions.relaxed_categorical import *
    >>> d = ExpRelaxedCategorical(cr.tensor(0.5), logits=cr.tensor([0.0, 1.0]))
    >>> d.event_shape, d.rsample().shape
    (chainrule.Size([2]), chainrule.Size([2]))
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        shape = self._categorical.param_shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    param_shape = property(lambda self: self._categorical.param_shape)
    logits = property(lambda self: self._categorical.logits)
    probs = property(lambda self: self._categorical.probs)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        u = _clamp_probs(_factories.rand(*shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - F["logsumexp"](scores, -1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (_factories.full_like(self.temperature, float(k)).lgamma()
                     + (k - 1) * self.temperature.log())
        score = logits - value * self.temperature
        score = (score - F["logsumexp"](score, -1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """A continuous relaxation of OneHotCategorical on the simplex, reparametrized.

    >>> import chainrule as cr
    >>> from chainrule.distributions.relaxed_categorical import *
    >>> d = cr.distributions.RelaxedOneHotCategorical(cr.tensor(0.5), probs=cr.tensor([0.2, 0.8]))
    >>> round(d.log_prob(cr.tensor([0.3, 0.7])).item(), 4)
    -0.742
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    temperature = property(lambda self: self.base_dist.temperature)
    logits = property(lambda self: self.base_dist.logits)
    probs = property(lambda self: self.base_dist.probs)
