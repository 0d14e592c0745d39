"""``torch.distributions.normal``'s name for Normal (defined in continuous.py)."""
from .continuous import Normal  # noqa: F401

__all__ = ["Normal"]
