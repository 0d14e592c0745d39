"""``torch.distributions.multivariate_normal``'s name for MultivariateNormal (defined in continuous.py)."""
from .continuous import MultivariateNormal  # noqa: F401

__all__ = ["MultivariateNormal"]
