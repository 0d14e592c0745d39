"""OneHotCategorical (defined in discrete.py) and OneHotCategoricalStraightThrough."""
from .._size import Size
from .discrete import OneHotCategorical

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose ``rsample`` passes gradients straight through to the
    probabilities (sample + probs - probs.detach()).

    >>> import chainrule as cr
    >>> p = cr.tensor([0.3, 0.7], requires_grad=True)
    >>> d = cr.distributions.OneHotCategoricalStraightThrough(p)
    >>> d.rsample().requires_grad
    True
    """
    has_rsample = True

    def rsample(self, sample_shape=Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
