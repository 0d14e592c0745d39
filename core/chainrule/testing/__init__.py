"""``chainrule.testing``: ``assert_close`` and ``make_tensor`` for tests, as the
reference's ``torch.testing``."""
from ._comparison import assert_allclose, assert_close, make_tensor  # noqa: F401

__all__ = ["assert_close", "make_tensor", "assert_allclose"]
