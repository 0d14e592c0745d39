"""``torch.distributions.categorical``'s name for Categorical (defined in discrete.py)."""
from .discrete import Categorical  # noqa: F401

__all__ = ["Categorical"]
