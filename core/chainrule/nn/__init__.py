"""``chainrule.nn``: ``Module`` and its layers, containers, losses, ``Parameter``,
``init``, ``utils`` and the functional ops (``chainrule.nn.functional``) -- torch.nn's
names and signatures, built on the public tensor API (the gradients come from the
derivative table through ``nn.functional``).

>>> import chainrule as cr
>>> model = cr.nn.Sequential(cr.nn.Linear(4, 8), cr.nn.ReLU(), cr.nn.Linear(8, 2))
>>> loss = cr.nn.CrossEntropyLoss()(model(cr.randn(5, 4)), cr.tensor([0, 1, 1, 0, 1]))
>>> loss.backward()
>>> model[0].weight.grad.shape
chainrule.Size([8, 4])
"""
from . import functional  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
from . import common_types  # noqa: F401
from . import parallel  # noqa: F401
from ._factory_kwargs import factory_kwargs  # noqa: F401
from .parallel import DataParallel  # noqa: F401
