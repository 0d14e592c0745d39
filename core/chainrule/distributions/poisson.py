"""``torch.distributions.poisson``'s name for Poisson (defined in discrete.py)."""
from .discrete import Poisson  # noqa: F401

__all__ = ["Poisson"]
