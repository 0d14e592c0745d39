"""Method slot: the hot Tensor methods an upper layer may replace by faster ones.

Note [method slot]
    ``y * 1.0001`` or ``y.sin()`` is a short op whose cost is mostly the Python
    frames between the method and ``op.forward`` (operator, apply_binary,
    binary_operands, apply_op). Core lists the methods whose whole work is one table
    op, as (method name, kind, OpDef, attrs, the Python function):

        "unary"   ``fn(input)``: ``apply_op(op, (input,), attrs)``, integer and bool
                  inputs first cast by ``float_input`` for floating ops
        "binary"  ``fn(self, other)``: ``apply_binary(op, self, other, attrs)`` for
                  float and complex ``self`` (``/`` first promotes integer inputs)
        "inplace" ``fn(self, other)``: the augmented assignment ``self op= other``
                  (operators.py ``_inplace_operator``: Note [in-place fast path],
                  else the in-place method ``Tensor.<op.name>_``); attrs are empty

    ``set_method_accelerator(make)`` calls ``make(kind, op, attrs, fn)`` for each and
    installs what it returns on Tensor (None keeps ``fn``), and as ``chainrule.<name>``
    where that is ``fn`` itself (``chainrule.tanh``: the unary entries). A replacement
    must give the results, errors and recorded graph of ``fn`` and may call ``fn`` for
    any case it does not handle. The Python functions stay the reference and the default: core
    works with no accelerator installed.
"""
from .. import _torch_function
from .._tensor import Tensor

# (method name, kind, OpDef, attrs, Python function), in registration order.
ACCELERABLE = []
_installed = {}        # method name -> the replacement now on Tensor
_accelerator = None    # the make of the last set_method_accelerator


def accelerable(name, kind, op, attrs, fn):
    """Declare ``Tensor.<name>`` (which is ``fn``) replaceable (Note [method slot])."""
    ACCELERABLE.append((name, kind, op, attrs, fn))


def set_method_accelerator(make):
    """Install ``make(kind, op, attrs, fn)`` (or ``fn`` where it returns None) for each
    accelerable method; ``make=None`` restores the Python functions. A method that
    someone else has replaced since is left alone. Returns the previous ``make``.

    Under Note [torch function slot] the method on Tensor is ``fn``'s dispatching
    wrapper: the replacement falls back to it (a subclass dispatches), while the
    function forms (``chainrule.tanh``'s wrapper, the internal registries) get one
    made on ``fn`` itself."""
    global _accelerator, _suspended_make
    if _suspended:                 # installed when the last function mode exits
        previous, _suspended_make = _suspended_make, make
        return previous
    previous, _accelerator = _accelerator, make
    replaced = []                  # ((the functions replaced), the replacement)
    for name, kind, op, attrs, fn in ACCELERABLE:
        method_fn = _torch_function.METHODS.get(name, fn)
        current = Tensor.__dict__.get(name)
        if current is not method_fn and current is not _installed.get(name):
            continue
        fast = None if make is None else make(kind, op, attrs, method_fn)
        old = _installed.pop(name, None)
        if fast is not None:
            _installed[name] = fast
        setattr(Tensor, name, method_fn if fast is None else fast)
        if method_fn is not fn and fast is not None and kind != "inplace":
            fast = make(kind, op, attrs, fn)
        replaced.append(((fn, old, _function_forms.pop(name, None)),
                         fn if fast is None else fast))
        if fast is not None:
            _function_forms[name] = fast
    _replace_function_forms(replaced)
    return previous


_function_forms = {}   # method name -> the replacement its function forms now call
_suspended = 0         # active function modes (all threads)
_suspended_make = None


def suspend_accelerator():
    """While a TorchFunctionMode is active the Python methods stand (a mode sees calls
    on exact Tensors too, which the replacements would not show it); nests."""
    global _suspended, _suspended_make
    if _suspended == 0:
        _suspended_make = set_method_accelerator(None)
    _suspended += 1


def resume_accelerator():
    """The end of ``suspend_accelerator``: the last one reinstalls the accelerator."""
    global _suspended
    _suspended -= 1
    if _suspended == 0:
        set_method_accelerator(_suspended_make)


def _replace_function_forms(replaced):
    """``chainrule.tanh`` (and an alias like ``chainrule.fix`` or
    ``chainrule.special.expit``) is the method's own function: wherever chainrule's
    modules still hold it, and in the functions formulas call on Tensors, it becomes
    the replacement too (Note [method slot]: a replacement calls ``fn`` for whatever it
    does not handle, a non-Tensor argument included)."""
    import sys
    from ._common import FUNCTIONS
    from ._registry import TENSOR_NS
    modules = [m for name, m in list(sys.modules.items())
               if m is not None and (name == "chainrule" or name.startswith("chainrule."))]
    # by id: the functions replaced stay alive in ``replaced`` while this runs
    replacement = {id(old): new for olds, new in replaced for old in olds if old is not None}
    cached = [vars(TENSOR_NS)] if TENSOR_NS is not None else []     # its lookups
    for namespace in [FUNCTIONS] + cached + [vars(m) for m in modules]:
        for key, value in list(namespace.items()):
            new = replacement.get(id(value))
            if new is not None:
                namespace[key] = new
    for wrapper in _torch_function.FUNCTIONS:     # Note [torch function slot]
        new = replacement.get(id(wrapper.__wrapped__))
        if new is not None:
            _torch_function.retarget(wrapper, new)


def method_accelerated(name):
    """Whether ``Tensor.<name>`` is an installed replacement."""
    fast = _installed.get(name)
    return fast is not None and Tensor.__dict__.get(name) is fast
