"""``chainrule.utils.data._utils``: the reference's module paths of the collate and
worker helpers (``torch.utils.data._utils.collate.collate`` is how its documentation
extends ``default_collate``); the code lives in ``_collate.py`` and ``_worker.py``."""
from . import collate, worker  # noqa: F401
