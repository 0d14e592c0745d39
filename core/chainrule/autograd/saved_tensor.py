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
"""
from .. import _version_counter as vc_mod
from .._dtypes import scalar_type_name
from . import saved_guard, saved_hooks, tangent_slot

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")


class SavedTensor:
    __slots__ = ("data", "tensor", "counter", "version", "output_nr", "__dict__")
    packed = unpack_hook = None      # set (in __dict__) only by saved-tensor hooks

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
            raise RuntimeError("Inference tensors cannot be saved for backward. To work around "
                               "you can make a clone to get a normal tensor and use it in "
                               "autograd.")
        if saved_hooks.ACTIVE[0]:
            self._apply_hooks(tensor)
        if (tensor._extra is not None or tensor._base is not None) and \
                saved_guard.is_exported(tensor) and self.data is not None:
            self.locked = saved_guard.lock_arrays(tensor)
            self.__class__ = LockedSavedTensor     # Note [read-only saved arrays]

    def _apply_hooks(self, tensor):
        """Note [saved-tensor hooks] in saved_hooks.py; and register with an
        allow_mutation_on_saved_tensors context."""
        hooks = saved_hooks.current_hooks()
        if hooks is not None:
            pack, unpack = hooks
            self.packed = pack(tensor)
            if self.packed is tensor and self.tensor is None:
                # Keeping the output itself would tie it to its own node in a cycle:
                # keep an alias without history (Note [saved outputs]).
                from .._tensor import Tensor
                self.packed = Tensor._wrap(tensor._data)
                self.packed._vc = self.counter
            self.unpack_hook = unpack
            self.data = None
            if self.tensor is not None:
                self.tensor = None
                self.output_nr = -1          # an input: never rebuilt with this node
        context = saved_hooks.current_mutation_context()
        if context is not None:
            context.register(self)

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
            return self._unpack_with_hook(node)
        if self.tensor is not None:
            return self.tensor
        from .._tensor import Tensor
        t = Tensor._make_output(self.data, node, self.output_nr, self.counter)
        if tangent_slot.SLOT is not None:          # Note [tangent slot]
            tangent_slot.SLOT.saved_output(t)
        return t

    def _unpack_with_hook(self, node):
        from .._tensor import Tensor
        t = self.unpack_hook(self.packed)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor "
                            f"but got result of type {type(t).__name__}")
        if self.output_nr >= 0 and t.grad_fn is None:
            t = Tensor._make_output(t._data, node, self.output_nr, vc_mod.counter_of(t))
        return t

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


class LockedSavedTensor(SavedTensor):
    """A saved tensor whose arrays it made read-only; unlocks them when it dies."""

    __slots__ = ()

    def __del__(self):
        saved_guard._unlocker(self.__dict__.get("locked", ()))    # Note [unlock slot]


def modified_message(saved, node):
    arr = saved.data if saved.data is not None else getattr(saved.packed, "_data", None)
    shape = list(arr.shape) if arr is not None else "?"
    type_name = f"chainrule.{scalar_type_name(arr.dtype)}Tensor" if arr is not None \
        else "chainrule.Tensor"
    if saved.tensor is None:
        owner = f", which is output {saved.output_nr} of {_op_name(node)}"
    elif saved.tensor.grad_fn is not None:
        owner = f", which is output {saved.tensor._output_nr} of {_op_name(saved.tensor.grad_fn)}"
    else:
        owner = ""
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{type_name} {shape}]{owner}, is at version {saved.counter.v}; "
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

