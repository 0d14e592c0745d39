"""``torch.distributions.laplace``'s name for Laplace (defined in continuous.py)."""
from .continuous import Laplace  # noqa: F401

__all__ = ["Laplace"]
