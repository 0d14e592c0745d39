"""``chainrule.utils.swap_tensors``."""
import copyreg
import weakref

_POISONED = (
    "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen "
    "when you try to run backward on a tensor that was swapped. For a module m with "
    "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change "
    "the device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between running "
    "forward and backward. To resolve this, please only change the device/dtype before "
    "running forward (or after both forward and backward).")


def _outside_weakrefs(t):
    """Weak references to ``t`` other than its base's registry of views."""
    base = t._base
    own = base._extra.views if base is not None and base._extra is not None else None
    own_ids = {id(r) for r in own or ()}
    return [r for r in weakref.getweakrefs(t) if id(r) not in own_ids]


def _poison_accumulator(t):
    """Backward into a graph recorded before the swap would accumulate into the other
    tensor: the leaf's AccumulateGrad node refuses to run, as in the reference."""
    ref = t._extra.grad_acc if t._extra is not None else None
    node = ref() if ref is not None else None
    if node is not None:
        def refuse(grad_outputs):
            raise RuntimeError(_POISONED)
        node.register_prehook(refuse)


def swap_tensors(t1, t2):
    """Exchange everything about ``t1`` and ``t2`` (data, autograd state, class, Python
    attributes): each object then is what the other was. Tensors of classes with
    different instance layouts (a Tensor and a Parameter) cannot be swapped here.

    >>> import chainrule as cr
    >>> a = cr.nn.Parameter(cr.zeros(2))
    >>> b = cr.nn.Parameter(cr.ones(3), requires_grad=False)
    >>> a.note = "on a"
    >>> cr.utils.swap_tensors(a, b)
    >>> a.tolist(), a.requires_grad, b.tolist(), b.note
    ([1.0, 1.0, 1.0], False, [0.0, 0.0], 'on a')
    """
    for name, t in (("t1", t1), ("t2", t2)):
        if _outside_weakrefs(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    slots = set(copyreg._slotnames(type(t1)))
    if (slots != set(copyreg._slotnames(type(t2)))
            or type(t1).__dictoffset__ != type(t2).__dictoffset__):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    _poison_accumulator(t1)
    _poison_accumulator(t2)
    _swap_attr(t1, t2, "__class__")
    if type(t1).__dictoffset__:
        _swap_attr(t1, t2, "__dict__")
    for slot in slots - {"__weakref__"}:
        _swap_slot(t1, t2, slot)


def _swap_attr(t1, t2, name):
    held = getattr(t1, name)
    setattr(t1, name, getattr(t2, name))
    setattr(t2, name, held)


def _swap_slot(t1, t2, slot):
    has1, has2 = hasattr(t1, slot), hasattr(t2, slot)
    if has1 and has2:
        _swap_attr(t1, t2, slot)
    elif has1:
        setattr(t2, slot, getattr(t1, slot))
        delattr(t1, slot)
    elif has2:
        setattr(t1, slot, getattr(t2, slot))
        delattr(t2, slot)
