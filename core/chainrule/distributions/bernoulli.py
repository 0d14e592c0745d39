"""``torch.distributions.bernoulli``'s name for Bernoulli (defined in discrete.py)."""
from .discrete import Bernoulli  # noqa: F401

__all__ = ["Bernoulli"]
