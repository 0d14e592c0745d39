"""Running a custom Function's forward and wiring its node into the graph
(see Note [custom function outputs] in function.py)."""
from .. import _torch_function
from .. import _grad_mode, _legacy_slots
from .._tensor import Tensor, _differentiable_dtype
from . import anomaly_mode, engine, tangent_slot
from .function import Function
from .node import CPP_NAMESPACE, Node, gradient_edge
from .saved_tensor import INFERENCE_SAVED_MESSAGE, SavedTensor


def apply_function(cls, args, kwargs):
    wrapper = _legacy_slots.FUNCTION_WRAPPER     # Note [Function wrapper slot]
    if wrapper is not None:
        return wrapper(_apply_function, cls, args, kwargs)
    return _apply_function(cls, args, kwargs)


def _apply_function(cls, args, kwargs):
    ctx = cls._backward_cls.__new__(cls._backward_cls)
    Node.__init__(ctx)
    observer = engine._node_observer             # Note [node observer slot]
    if observer is None:
        return _apply(cls, ctx, args, kwargs)
    return engine.observed(observer, ctx, cls.__name__, args, _apply, cls, ctx, args, kwargs)


def _apply(cls, ctx, args, kwargs):
    if anomaly_mode.STATE.enabled:
        anomaly_mode.record_forward_trace(ctx)
    is_tensor = tuple(isinstance(a, Tensor) for a in args)
    ctx._is_tensor_arg = is_tensor
    ctx.needs_input_grad = _needs_input_grad(args, is_tensor)
    recording = _grad_mode.is_grad_enabled() and any(ctx.needs_input_grad)
    slot = tangent_slot.SLOT                   # Note [tangent slot]
    with _grad_mode.no_grad():
        if slot is None:
            output = _run_forward(cls, ctx, args, kwargs)
        else:
            output = slot.run_forward(lambda: _run_forward(cls, ctx, args, kwargs))
    _check_inference(args, recording)
    is_tuple = isinstance(output, tuple)
    outputs = output if is_tuple else (output,)
    outputs = _wire_outputs(ctx, args, outputs, recording)
    if slot is not None:
        slot.function_applied(ctx, args, outputs)
    return outputs if is_tuple else outputs[0]


def _run_forward(cls, ctx, args, kwargs):
    if _overrides_setup_context(cls):
        output = cls.forward(*args, **kwargs)
        cls.setup_context(ctx, args, output)
        return output
    return cls.forward(ctx, *args, **kwargs)


def _overrides_setup_context(cls):
    for klass in cls.__mro__:
        if "setup_context" in klass.__dict__:
            return klass is not Function
    return False


def _own_reads(fn):
    """``fn`` with subclass dispatch off: chainrule's reads of its arguments'
    properties are not calls a ``__torch_function__`` sees (Note [torch function
    slot]); one check when dispatch is off."""
    def reading(*args):
        if not _torch_function.ON[0]:
            return fn(*args)
        with _torch_function.disabled_subclasses():
            return fn(*args)
    return reading


@_own_reads
def _needs_input_grad(args, is_tensor):
    return tuple(t and a.requires_grad for a, t in zip(args, is_tensor))


@_own_reads
def _check_inference(args, recording):
    if not recording:
        return
    for a in args:
        if isinstance(a, Tensor) and a.is_inference():
            raise RuntimeError(INFERENCE_SAVED_MESSAGE)


def _wire_outputs(ctx, args, outputs, recording):
    if not recording:
        return outputs
    dirty = {id(t) for t in ctx._dirty}
    tensor_args = [a for a in args if isinstance(a, Tensor)]
    ctx._next = tuple(gradient_edge(a) for a in tensor_args)
    ctx._in_meta = [(a._data.shape, a._data.dtype) for a in tensor_args]
    non_diff = {id(t) for t in ctx._non_differentiable}
    input_ids = {id(a) for a in tensor_args}
    wired, metas = [], []
    for nr, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            wired.append(out)
            metas.append(((), None))
            continue
        metas.append((out._data.shape, out._data.dtype))
        wired.append(_wire_one(ctx, out, nr, id(out) in dirty, id(out) in input_ids,
                               id(out) in non_diff))
    ctx._out_meta = metas
    _save_tensors(ctx, outputs, wired)
    return tuple(wired)


def _wire_one(ctx, out, nr, is_dirty, is_input, non_differentiable):
    differentiable = not non_differentiable and _differentiable_dtype(out._data.dtype)
    if is_dirty:
        _check_dirty(out)
        out._bump_version()            # like the reference: once more for the dirty output
        target = out
    elif is_input:
        target = _alias(out)           # a fresh view: the input keeps its own history
    else:
        target = out
    if differentiable:
        target.grad_fn, target._output_nr, target._requires_grad = ctx, nr, True
        if not is_dirty and target._is_view():
            _mark_custom_view(target)
    elif is_input and not is_dirty:
        target._requires_grad = False
    return target


def _alias(t):
    """A view of ``t`` made as the forward's own views are (under no_grad)."""
    from .._ops.shape import _alias as alias
    with _grad_mode.no_grad():
        return alias(t)


def _mark_custom_view(view):
    """A view the forward returned may not be written in place while autograd records
    (Note [how a view was made] in _ops/views.py): its node is the Function's."""
    from .._ops.views import CUSTOM_FUNCTION_VIEW
    extra = view._extra
    extra.creation = CUSTOM_FUNCTION_VIEW
    extra.grad_acc = None              # made under no_grad it had NO_ACCUMULATOR: no leaf now


def _check_dirty(t):
    if t.grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                           "operation.")


def _save_tensors(ctx, outputs, wired):
    to_save = ctx._to_save
    if not to_save:
        ctx._saved = ()
        return
    output_nr = {id(o): i for i, o in enumerate(outputs)}
    output_nr.update({id(w): i for i, w in enumerate(wired)})
    saved = []
    for t in to_save:
        if t is None:
            saved.append(None)
        elif id(t) in output_nr and wired[output_nr[id(t)]].grad_fn is ctx:
            saved.append(SavedTensor(wired[output_nr[id(t)]], True, output_nr[id(t)]))
        else:
            saved.append(SavedTensor(t, False))
    ctx._saved = saved
    ctx._to_save = ()


def mark_once_differentiable(outputs):
    """Give the outputs of a once_differentiable backward a node that refuses to run.

    Like the reference's, the node's inputs are fresh leaves: a backward() over the
    whole graph reaches it and raises, a grad() towards other inputs never runs it."""
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    marked = [isinstance(o, Tensor) and _differentiable_dtype(o._data.dtype) for o in outs]
    edges = tuple(gradient_edge(o.detach().requires_grad_()) if m else None
                  for o, m in zip(outs, marked))
    node = Error("trying to differentiate twice a function that was marked with "
                 "@once_differentiable", edges)
    aliases = [_error_alias(o, node, nr) if m else o
               for nr, (o, m) in enumerate(zip(outs, marked))]
    return aliases[0] if single else tuple(aliases)


def _error_alias(output, node, output_nr):
    alias = output.detach()
    alias.grad_fn, alias._output_nr, alias._requires_grad = node, output_nr, True
    return alias


class Error(Node):
    """A node whose backward raises (used by once_differentiable); the reference's
    DelayedError makes a node of this name."""

    _name_prefix = CPP_NAMESPACE         # Note [node names]

    def __init__(self, message, edges):
        Node.__init__(self, edges)
        self.message = message

    def apply(self, grads, create_graph):
        raise RuntimeError(self.message)
