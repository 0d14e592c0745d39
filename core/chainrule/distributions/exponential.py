"""``torch.distributions.exponential``'s name for Exponential (defined in continuous.py)."""
from .continuous import Exponential  # noqa: F401

__all__ = ["Exponential"]
