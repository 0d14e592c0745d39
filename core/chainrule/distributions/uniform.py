"""``torch.distributions.uniform``'s name for Uniform (defined in continuous.py)."""
from .continuous import Uniform  # noqa: F401

__all__ = ["Uniform"]
