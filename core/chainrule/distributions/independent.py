"""``torch.distributions.independent``'s name for Independent (defined in discrete.py)."""
from .discrete import Independent  # noqa: F401

__all__ = ["Independent"]
