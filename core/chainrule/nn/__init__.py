"""``chainrule.nn``: the functional neural-network ops (``chainrule.nn.functional``)."""
from . import functional  # noqa: F401
