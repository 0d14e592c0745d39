"""``chainrule.cpu.amp``: the deprecated spellings of ``chainrule.amp.autocast("cpu")``
and ``chainrule.amp.GradScaler("cpu")`` (each warns with a FutureWarning).

>>> import warnings, chainrule as cr
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     with cr.cpu.amp.autocast():
...         print(cr.mm(cr.ones(1, 1), cr.ones(1, 1)).dtype)
chainrule.bfloat16
>>> caught[0].category.__name__
'FutureWarning'
"""
from .. import _dtypes
from ..amp._device_amp import autocast_class, grad_scaler_class

autocast = autocast_class("cpu", _dtypes.bfloat16)
GradScaler = grad_scaler_class("cpu")
