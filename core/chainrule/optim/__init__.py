"""``chainrule.optim``: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, LBFGS, and
Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD, Adafactor, SparseAdam, Muon) and
learning-rate schedules (``optim.lr_scheduler``), with torch's names, options and
update rules.

>>> import chainrule as cr
>>> model = cr.nn.Linear(2, 1)
>>> opt = cr.optim.Adam(model.parameters(), lr=0.01)
>>> loss = model(cr.ones(4, 2)).pow(2).mean()
>>> opt.zero_grad(); loss.backward(); opt.step()
>>> len(opt.state)
2
"""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .rmsprop import Adagrad, RMSprop  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .adam_variants import Adamax, NAdam, RAdam  # noqa: F401
from .adadelta import Adadelta, Rprop  # noqa: F401
from .asgd import ASGD  # noqa: F401
from .adafactor import Adafactor  # noqa: F401
from .sparse_adam import SparseAdam  # noqa: F401
from .muon import Muon  # noqa: F401
from ._stateless import swap_in_optimizer_params_and_state  # noqa: F401
from . import lr_scheduler, swa_utils  # noqa: F401
