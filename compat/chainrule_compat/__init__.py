"""chainrule-compat: Variable-era (0.2) code runs on chainrule, with deprecation
warnings that name the modern form; ``chainrule-migrate`` rewrites it.

Importing this package (``chainrule.autograd.Variable`` does) fills core's legacy
slots (chainrule/_legacy_slots.py); volatile tensors use core's dispatch slot only
while one is alive (Note [volatile through the dispatch slot]).

>>> import chainrule as cr
>>> from chainrule.autograd import Variable
>>> x = Variable(cr.tensor([1.0, 2.0]), requires_grad=True)
>>> loss = (x * x).sum()
>>> loss.backward(retain_variables=True)
>>> x.grad.data.tolist(), loss.data[0]
([2.0, 4.0], 5.0)
"""
from chainrule import _legacy_slots

from . import function as _function, idioms as _idioms
from ._warn import reset as reset_warnings  # noqa: F401
from .variable import Variable, is_volatile, mark_volatile, volatile_attribute  # noqa: F401

for _name, _getter in (("volatile", volatile_attribute),   # new and resize_ are core's
                       ("creator", _idioms.creator)):      # (torch's) now
    _legacy_slots.add_legacy_attribute(_name, _getter)
_legacy_slots.LEGACY_MODULE_ATTRIBUTES.update(_idioms.TYPED_CONSTRUCTORS)
_legacy_slots.DEPRECATED_KWARGS = _idioms.deprecated_kwargs
_legacy_slots.ZERO_DIM_INDEX = _idioms.zero_dim_index
_legacy_slots.LEGACY_FUNCTION = _function.call_legacy
_legacy_slots.SCALAR_FIRST = _idioms.scalar_first
