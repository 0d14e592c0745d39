"""``chainrule._C``: the reference's ``torch._C`` names that programs reach for around
``__torch_function__`` (Note [torch function slot] in ``_torch_function.py``).

>>> import chainrule as cr
>>> with cr._C.DisableTorchFunctionSubclass():
...     cr._C._is_torch_function_enabled()
False
"""
from . import _torch_function as _tf
from ._torch_function import DISABLED as _disabled_torch_function_impl  # noqa: F401
from .overrides import (_has_torch_function, _has_torch_function_unary,  # noqa: F401
                        _has_torch_function_variadic, _is_torch_function_mode_enabled,
                        _len_torch_function_stack)

DisableTorchFunctionSubclass = _tf.disabled_subclasses
DisableTorchFunction = _tf.disabled_all


def _is_torch_function_enabled():
    """Whether subclass ``__torch_function__`` dispatch is on in this thread.

    >>> import chainrule as cr
    >>> cr._C._is_torch_function_enabled()
    True
    """
    return not _tf.STATE.subclass_disabled


def _is_torch_function_all_disabled():
    return _tf.STATE.all_disabled


def _push_on_torch_function_stack(mode):
    from .overrides import _push_mode
    _tf.MODES[0] += 1
    _push_mode(mode)


def _pop_torch_function_stack():
    from .overrides import _pop_mode
    _tf.MODES[0] -= 1
    return _pop_mode()


def _get_function_stack_at(i):
    return _tf.STATE.modes[i]


def __getattr__(name):
    if name in ("_TensorBase", "TensorBase"):
        from ._tensor import Tensor
        return Tensor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
