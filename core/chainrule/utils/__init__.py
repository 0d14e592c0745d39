"""``chainrule.utils``: ``checkpoint`` (activation checkpointing) and ``data``
(datasets, samplers, ``DataLoader``)."""
from . import checkpoint  # noqa: F401
from . import data  # noqa: F401
from . import hooks  # noqa: F401,E402
from ._swap import swap_tensors  # noqa: F401,E402
