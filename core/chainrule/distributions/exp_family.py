"""``torch.distributions.exp_family``'s name for ExponentialFamily (defined in distribution.py)."""
from .distribution import ExponentialFamily  # noqa: F401

__all__ = ["ExponentialFamily"]
