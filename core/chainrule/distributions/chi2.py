"""``torch.distributions.chi2``'s name for Chi2 (defined with Gamma in gamma.py)."""
from .gamma import Chi2  # noqa: F401

__all__ = ["Chi2"]
