"""Saved tensors: what a node keeps from the forward pass for its backward.

Note [saved tensor versions]
    A saved tensor remembers the version of its tensor's counter when it was saved.
    Unpacking compares: if an in-place op changed the tensor since, the gradient
    would be silently wrong, so unpacking raises the reference's message instead.

Note [saved outputs]
    A node that saves its own output must not hold the output tensor: the output
    holds the node as ``grad_fn``, and the cycle would keep graphs alive past their
    last use. It keeps the array and version counter, and rebuilds a tensor with
    ``grad_fn`` = the node when a differentiable unpack (create_graph) needs one.

Note [unpacking re-attaches history]
    With saved-tensor hooks, what ``unpack`` returns is only the value: like the
    reference, the tensor backward sees is a new one over it, attached to the saved
    tensor's history as it was when saved (its grad_fn and output number, the leaf's
    gradient accumulator, or the node itself for the node's own output). So a pack that
    detaches (to move or compress the value) still gives higher-order gradients. A
    saved tensor that required no gradient is returned as unpacked. Versions are not
    checked through hooks (the hooks own the value; the reference cannot check
    either): such a saved tensor gets a counter of its own that nothing bumps.
"""
import weakref

from .. import _tensor
from .. import _version_counter as vc_mod
from .._dtypes import scalar_type_name
from . import saved_guard, saved_hooks, tangent_slot

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")

INFERENCE_SAVED_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make "
    "a clone to get a normal tensor and use it in autograd, or use `chainrule.no_grad()` "
    "instead of `chainrule.inference_mode()`.")


class SavedTensor:
    __slots__ = ("data", "tensor", "counter", "version", "output_nr", "__dict__")
    packed = unpack_hook = None      # set (in __dict__) only by saved-tensor hooks
    history = None                   # an input's (grad_fn, output_nr) when hooks packed it

    def __init__(self, tensor, is_output, output_nr=0):
        self.data = tensor._data
        counter = tensor._vc
        if counter is None:
            counter = tensor._vc = vc_mod.VersionCounter()
        self.counter = counter
        self.version = counter.v
        self.tensor = None if is_output else tensor    # Note [saved outputs]
        self.output_nr = output_nr
        if tensor._extra is not None and tensor._extra.inference:
            raise RuntimeError(INFERENCE_SAVED_MESSAGE)
        if saved_hooks.ACTIVE[0]:
            self._apply_hooks(tensor)
        if (tensor._extra is not None or tensor._base is not None) and \
                saved_guard.is_exported(tensor) and self.data is not None:
            self.locked = saved_guard.lock_arrays(tensor)
            self.__class__ = LockedSavedTensor     # Note [read-only saved arrays]

    def _apply_hooks(self, tensor):
        """Note [saved-tensor hooks] in saved_hooks.py; and register with an
        allow_mutation_on_saved_tensors context."""
        from .._ops._common import hidden_from_saved_hooks
        hooks = saved_hooks.current_hooks()
        if hooks is not None and not hidden_from_saved_hooks(tensor):
            self.set_hooks(tensor, *hooks)
        context = saved_hooks.current_mutation_context()
        if context is not None:
            context.register(self)

    def set_hooks(self, value, pack, unpack):
        """Pack ``value`` (this saved tensor's value) now, with grad mode off like the
        reference, and keep ``unpack`` for its use (Note [saved-tensor hooks])."""
        from .._grad_mode import no_grad
        from .._tensor import Tensor
        version = self.counter.v
        with no_grad():
            packed = pack(value)
        if self.counter.v != version:
            raise RuntimeError(PACK_INPLACE_MESSAGE)
        if packed is value and self.tensor is None:
            # Keeping the output itself would tie it to its own node in a cycle:
            # keep an alias without history (Note [saved outputs]).
            packed = Tensor._wrap(value._data)
            packed._vc = self.counter
        self.packed, self.unpack_hook, self.data = packed, unpack, None
        self.counter, self.version = vc_mod.VersionCounter(), 0
        if self.tensor is not None:          # Note [unpacking re-attaches history]
            self.history = _history_of(self.tensor)
            self.tensor = None
            self.output_nr = -1              # an input: never rebuilt with this node

    def array(self, node):
        """The raw array, after the version check (fast backward)."""
        if self.counter.v != self.version:
            raise RuntimeError(modified_message(self, node))
        if self.unpack_hook is not None:
            return self._unpack_with_hook(node)._data
        return self.data

    def as_tensor(self, node):
        """A tensor that carries the graph (create_graph backward)."""
        if self.counter.v != self.version:
            raise RuntimeError(modified_message(self, node))
        if self.unpack_hook is not None:
            return self._reattach(self._unpack_with_hook(node), node)
        if self.tensor is not None:
            return self.tensor
        # the module, not a function-level import (the import system, frames and all,
        # on every call)
        t = _tensor.Tensor._make_output(self.data, node, self.output_nr, self.counter)
        if tangent_slot.SLOT is not None:          # Note [tangent slot]
            tangent_slot.SLOT.saved_output(t)
        return t

    def _unpack_with_hook(self, node):
        from .._tensor import Tensor
        t = self.unpack_hook(self.packed)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor "
                            f"but got result of type {type(t).__name__}")
        return t

    def _reattach(self, t, node):
        """The unpacked ``t`` with the saved tensor's history (Note [unpacking
        re-attaches history])."""
        from .._tensor import Tensor
        if self.output_nr >= 0:
            return Tensor._make_output(t._data, node, self.output_nr, vc_mod.counter_of(t))
        if self.history is None:
            return t.detach() if t._requires_grad else t
        fn, output_nr = self.history
        if output_nr is not None:
            return Tensor._make_output(t._data, fn, output_nr, vc_mod.counter_of(t))
        from .node import NO_ACCUMULATOR
        leaf = Tensor._wrap(t._data)      # gradients reach the saved leaf's accumulator
        leaf._vc = vc_mod.counter_of(t)
        leaf._requires_grad = True
        leaf._extras().grad_acc = weakref.ref(fn) if fn is not None else NO_ACCUMULATOR
        return leaf

    def detach_from_mutation(self):
        """Keep the saved value as it is now (allow_mutation_on_saved_tensors): the tensor
        is about to be modified in place."""
        from .._tensor import Tensor
        if self.data is None:
            return
        self.data = self.data.copy()
        self.counter = vc_mod.VersionCounter()
        self.version = 0
        if self.tensor is not None and self.tensor.grad_fn is not None:
            t = self.tensor
            self.tensor = Tensor._make_output(self.data, t.grad_fn, t._output_nr, self.counter)


class RawSavedTensor:
    """A node's saved tensor itself (``grad_fn._raw_saved_<name>``, like the
    reference's ``torch._C._autograd.SavedTensor``): hooks for this one value.

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x.pow(2)
    >>> y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 10, lambda t: t)
    >>> y.sum().backward(); x.grad.tolist()
    [20.0, 40.0]
    """

    __slots__ = ("_node", "_get")

    def __init__(self, node=None, get=None):
        if get is None:          # only nodes make them (``chainrule.autograd.SavedTensor``)
            raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")
        self._node = node
        self._get = get          # node -> its SavedTensor, or None once freed

    def _saved(self, freed_message):
        saved = self._get(self._node)
        if saved is None:
            raise RuntimeError(freed_message)
        return saved

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the value now with ``pack_hook``; backward gets ``unpack_hook(packed)``."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError(  # pybind11's wording, as the reference's binding raises it
                "register_hooks(): incompatible function arguments. The following argument "
                "types are supported:\n    1. (self: chainrule._C._autograd.SavedTensor, "
                "arg0: collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\n"
                f"Invoked with: {self!r}, {pack_hook!r}, {unpack_hook!r}")
        saved = self._saved(REGISTER_FREED_MESSAGE)
        if saved.unpack_hook is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at "
                               "a time.")
        saved.set_hooks(self._value(saved), pack_hook, unpack_hook)

    def _value(self, saved):
        """What pack_hook receives: the value without history."""
        from .._tensor import Tensor
        if saved.tensor is not None:
            return saved.tensor.detach()
        value = Tensor._wrap(saved.data)
        value._vc = saved.counter
        return value

    def unpack(self):
        """The saved tensor as backward sees it (after unpack_hook, if any)."""
        return self._saved(FREED_MESSAGE).as_tensor(self._node)

    @property
    def unpack_hook(self):
        return self._saved(FREED_MESSAGE).unpack_hook

    @property
    def data(self):
        """What the hooks packed, or the saved tensor when there are none."""
        saved = self._saved(FREED_MESSAGE)
        return saved.packed if saved.unpack_hook is not None else self.unpack()


REGISTER_FREED_MESSAGE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved variables after calling backward.")


class LockedSavedTensor(SavedTensor):
    """A saved tensor whose arrays it made read-only; unlocks them when it dies."""

    __slots__ = ()

    def __del__(self):
        saved_guard._unlocker(self.__dict__.get("locked", ()))    # Note [unlock slot]


PACK_INPLACE_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input "
    "to pack hook cannot be modified by in-place operations as this can lead to "
    "unexpected side-effects. Please open an issue if you need to perform in-place "
    "operations on the input to a pack hook.")


def _history_of(tensor):
    """Where ``tensor``'s gradient goes: (grad_fn, output_nr), (its leaf's accumulator,
    None), or None when it requires no gradient."""
    if tensor.grad_fn is not None:
        return (tensor.grad_fn, tensor._output_nr)
    if tensor._requires_grad:
        from .node import grad_accumulator
        return (grad_accumulator(tensor), None)
    return None


def modified_message(saved, node):
    arr = saved.data if saved.data is not None else getattr(saved.packed, "_data", None)
    shape = list(arr.shape) if arr is not None else "?"
    type_name = f"chainrule.{scalar_type_name(arr.dtype)}Tensor" if arr is not None \
        else "chainrule.Tensor"
    if saved.tensor is None:
        owner = f", which is output {saved.output_nr} of {_op_name(node)},"
    elif saved.tensor.grad_fn is not None:
        owner = f", which is output {saved.tensor._output_nr} of {_op_name(saved.tensor.grad_fn)},"
    else:
        owner = ""                      # a leaf: the reference names no op, and no comma
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{type_name} {shape}]{owner} is at version {saved.counter.v}; "
        f"expected version {saved.version} instead. Hint: enable anomaly detection to find "
        "the operation that failed to compute its gradient, with "
        "chainrule.autograd.set_detect_anomaly(True, check_nan=False).")


def _op_name(node):
    """The forward op's name, as the reference prints it ('Exp' for ExpBackward0)."""
    name = node.name()
    for suffix in ("Backward0", "Backward1", "Backward2", "Backward"):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name

