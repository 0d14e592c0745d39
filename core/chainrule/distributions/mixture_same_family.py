"""MixtureSameFamily: a batch of component distributions mixed by a Categorical over
the rightmost batch dimension."""
from .. import _grad_mode
from .._ops import FUNCTIONS
from .._size import Size
from . import constraints
from .discrete import Categorical
from .distribution import Distribution

F = FUNCTIONS
__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """``mixture_distribution`` (a Categorical over K) choosing among the K components
    in the rightmost batch dimension of ``component_distribution``.

    >>> import chainrule as cr
    >>> from chainrule.distributions import Categorical, MixtureSameFamily, Normal
    >>> mix = MixtureSameFamily(Categorical(cr.tensor([0.5, 0.5])),
    ...                         Normal(cr.tensor([-1.0, 1.0]), cr.tensor([1.0, 1.0])))
    >>> round(mix.log_prob(cr.tensor(0.0)).item(), 4), mix.variance
    (-1.4189, tensor(2.))
    """
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "torch.distributions.Distribution")
        mixture_batch = tuple(mixture_distribution.batch_shape)
        component_batch = tuple(component_distribution.batch_shape)[:-1]
        for a, b in zip(reversed(mixture_batch), reversed(component_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({Size(mixture_batch)})"
                                 f" is not compatible with `component_distribution.batch_shape`"
                                 f"({Size(component_batch)})")
        k = mixture_distribution.logits.shape[-1]
        if component_distribution.batch_shape[-1] != k:
            raise ValueError(f"`mixture_distribution component` ({k}) does not equal "
                             f"`component_distribution.batch_shape[-1]` "
                             f"({component_distribution.batch_shape[-1]})")
        self._num_component = k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(Size(component_batch), component_distribution.event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        component = self._component_distribution.expand(batch_shape + (self._num_component,))
        mixture = self._mixture_distribution.expand(batch_shape)
        return type(self)(mixture, component, validate_args=self._validate_args)

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    mixture_distribution = property(lambda self: self._mixture_distribution)
    component_distribution = property(lambda self: self._component_distribution)

    def _pad_probs(self):
        """The mixture weights shaped to broadcast against component moments."""
        probs = self._mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        return (self._pad_probs() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        dim = -1 - self._event_ndims
        probs = self._pad_probs()
        mean_cond_var = (probs * self._component_distribution.variance).sum(dim)
        mean = self.mean.unsqueeze(dim)
        var_cond_mean = (probs * (self._component_distribution.mean - mean).pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = x.unsqueeze(-1 - self._event_ndims)
        cdf_x = self._component_distribution.cdf(x)
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = x.unsqueeze(-1 - self._event_ndims)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix = F["log_softmax"](self._mixture_distribution.logits, -1)
        return F["logsumexp"](log_prob_x + log_mix, -1)

    def sample(self, sample_shape=Size()):
        with _grad_mode.no_grad():
            sample_shape = Size(sample_shape)
            index = self._mixture_distribution.sample(sample_shape)
            comps = self._component_distribution.sample(sample_shape)
            gather_dim = len(sample_shape) + len(self._batch_shape)
            idx = index.reshape(tuple(index.shape) + (1,) * (1 + self._event_ndims))
            idx = idx.expand(tuple(index.shape) + (1,) + tuple(self._event_shape))
            return comps.gather(gather_dim, idx).squeeze(gather_dim)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n"
                f"  {self._component_distribution!r})")
