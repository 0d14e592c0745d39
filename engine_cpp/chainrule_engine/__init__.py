"""chainrule_engine: chainrule's graph executor in C++ (the wheel chainrule-engine).

Installed beside chainrule-core, it is used automatically: at the first backward
pass, ``chainrule.autograd.engine.get_engine()`` imports this package and installs
``CppEngine()`` in the engine slot. ``CHAINRULE_ENGINE=python`` keeps the Python
engine; ``CHAINRULE_ENGINE=cpp`` insists on this one.

The engine behaves exactly like the Python engine (``chainrule.autograd.engine``):
same execution order, hooks, captures, errors. The graph walk, dependency counts,
ready queue, input buffers and captures are C++; nodes, hooks and the slow paths of
validation stay Python and are called back (Note [who runs what] in
src/python_api.h).

>>> import chainrule as cr
>>> import chainrule_engine
>>> from chainrule.autograd import engine
>>> previous = engine.set_engine(chainrule_engine.CppEngine())
>>> x = cr.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad.tolist()
[2.0, 4.0]
>>> _ = engine.set_engine(previous)
"""
import os

from chainrule.autograd import anomaly_mode as _anomaly_mode
from chainrule.autograd import engine as _python_engine
from chainrule.autograd import node as _node
from chainrule.autograd import validate as _validate

from . import _engine, _mirror

__all__ = ["CppEngine"]
__version__ = "0.1.0"

_engine.configure(
    accumulate_grad_type=_node.AccumulateGrad,
    run_tensor_pre_hooks=_python_engine._run_tensor_pre_hooks,
    run_node_pre_hooks=_python_engine._run_node_pre_hooks,
    run_node_post_hooks=_python_engine._run_node_post_hooks,
    validate_outputs=_validate.validate_outputs,
    anomaly_state=_anomaly_mode.STATE,
    anomaly_call_node=_anomaly_mode.call_node,
    accumulate=_python_engine._accumulate,
    node_type=_node.Node,
)


def _wanted(variable, matches):
    """A fast path is on unless the environment variable says 0, and only while the
    Python code it mirrors matches (chainrule_engine/_mirror.py)."""
    return os.environ.get(variable, "1") != "0" and matches()


def _configure_table_ops(enabled=None):
    """Note [table-node fast path] in src/op_node.h: on only while core's OpNode.apply
    is the code it mirrors; CHAINRULE_ENGINE_TABLE_OPS=0 (or enabled=False) turns it
    off."""
    from chainrule import _tensor, _version_counter
    from chainrule._ops import _registry
    from chainrule.autograd import saved_tensor
    if enabled is None:
        enabled = _wanted("CHAINRULE_ENGINE_TABLE_OPS", _mirror.table_apply_matches)
    _engine.configure_table_ops(
        enabled=enabled, op_node_type=_registry.OpNode, registry=_registry,
        nondiff=_registry.NONDIFF, not_implemented=_registry.NOT_IMPLEMENTED,
        formula_type=_registry.Formula, saved_type=saved_tensor.SavedTensor,
        counter_type=_version_counter.VersionCounter, tensor_type=_tensor.Tensor)


_configure_table_ops()


def _configure_recorder(enabled=None):
    """Note [recorder fast path] in src/recorder.h: installed in core's recording slot
    (Note [recording slot] in chainrule/_ops/_registry.py) while core's _record is the
    code it mirrors; CHAINRULE_ENGINE_RECORDER=0 (or enabled=False) keeps _record."""
    from chainrule import _tensor, _version_counter
    from chainrule._ops import _registry
    from chainrule.autograd import saved_guard, saved_hooks, saved_tensor
    if enabled is None:
        enabled = _wanted("CHAINRULE_ENGINE_RECORDER", _mirror.record_matches)
    _engine.configure_recorder(
        enabled=enabled, python_record=_registry._record, registry=_registry,
        tensor_type=_tensor.Tensor, op_node_type=_registry.OpNode,
        saved_type=saved_tensor.SavedTensor, counter_type=_version_counter.VersionCounter,
        anomaly_state=_anomaly_mode.STATE, hooks_active=saved_hooks.ACTIVE,
        extras_type=_tensor._Extras, node_module=_node, saved_guard=saved_guard,
        locked_saved_type=saved_tensor.LockedSavedTensor)
    if enabled:
        _registry.set_recorder(_engine.record)
        saved_guard.set_unlocker(_engine.unlock_arrays)   # Note [unlock slot]
    else:
        if _registry._recorder is _engine.record:
            _registry.set_recorder(None)
        if saved_guard._unlocker is _engine.unlock_arrays:
            saved_guard.set_unlocker(None)


_configure_recorder()


def _make_fast_method(kind, op, attrs, python_fn):
    """Note [method slot]'s factory: a FastMethod where src/fast_methods.cc handles
    the method, else None (the Python function stays)."""
    if op.multi_output or (kind == "view" and not _VIEW_METHODS[0]):
        return None
    try:
        if kind == "inplace":
            return _make_inplace_method(op, attrs, python_fn)
        return _engine.FastMethod(kind, op, attrs, python_fn)
    except ValueError:                      # a kind or attrs it does not handle
        return None


def _make_inplace_method(op, attrs, python_fn):
    """Note [in-place fast methods] in src/fast_methods.cc: `self op= other` is
    operators.py's `_inplace_operator` closure, which tries the fast path with its
    `ufunc`."""
    if not _mirror.inplace_match():
        return None
    operator = getattr(python_fn, "__wrapped__", python_fn)   # core's dispatching wrapper
    code = getattr(operator, "__code__", None)
    if code is None or "ufunc" not in code.co_freevars:
        return None
    ufunc = operator.__closure__[code.co_freevars.index("ufunc")].cell_contents
    return _engine.FastMethod("inplace", op, attrs, python_fn, inplace=ufunc)


_VIEW_METHODS = [False]     # whether the "view" entries get FastMethods


def _configure_view_methods(enabled=None):
    """Note [view methods] in src/view_methods.h: the commonest view methods parse their
    arguments in C while the Python functions they mirror are unchanged;
    CHAINRULE_ENGINE_VIEWS=0 (or enabled=False) keeps the Python functions (applied at
    the next _configure_fast_methods)."""
    from chainrule import _tensor, _torch_function
    from chainrule._ops import _registry, indexing, shape
    if enabled is None:
        enabled = _wanted("CHAINRULE_ENGINE_VIEWS", _mirror.view_methods_match)
    _engine.configure_view_methods(
        enabled=enabled, tensor_type=_tensor.Tensor, registry=_registry, shape=shape,
        indexing=indexing, torch_function_on=_torch_function.ON,
        torch_function_modes=_torch_function.MODES, make_view=_engine.make_view)
    _VIEW_METHODS[0] = enabled


_configure_view_methods()


def _configure_fast_methods(enabled=None):
    """Note [fast methods] in src/fast_methods.h: core's hot Tensor methods (Note
    [method slot] in chainrule/_ops/_method_slot.py) dispatched in C while the Python
    code they mirror is unchanged; CHAINRULE_ENGINE_FAST_METHODS=0 (or
    enabled=False) keeps the Python functions."""
    from chainrule import _grad_mode, _tensor, _version_counter
    from chainrule._ops import _common, _method_slot, _registry, operators
    from chainrule.autograd import saved_hooks
    if enabled is None:
        enabled = _wanted("CHAINRULE_ENGINE_FAST_METHODS", _mirror.fast_methods_match)
    _engine.configure_fast_methods(
        tensor_type=_tensor.Tensor, registry=_registry, common=_common,
        grad_state=_grad_mode.STATE, record=_engine.record)
    _engine.configure_inplace_methods(
        operators=operators, bump_version=_tensor.Tensor._bump_version,
        hooks_active=saved_hooks.ACTIVE, extras_type=_tensor._Extras,
        counter_type=_version_counter.VersionCounter)
    _method_slot.set_method_accelerator(_make_fast_method if enabled else None)


_configure_fast_methods()


def _configure_dual_methods(enabled=None):
    """Note [dual fast methods] in src/fast_methods.cc: the fast methods also run the
    forward_ad layer's common path inside a dual level, where its dispatcher is the
    code mirrored; CHAINRULE_ENGINE_DUAL_METHODS=0 (or enabled=False) leaves dual ops
    to Python. Called by the C++ side the first time it meets that dispatcher (the
    layer is imported by then: importing the engine imports no layer)."""
    from chainrule_forward_ad import _over_reverse, _programs, _tangents
    from chainrule._ops import _registry
    if enabled is None:
        enabled = _wanted("CHAINRULE_ENGINE_DUAL_METHODS", _mirror.dual_methods_match)
    _engine.configure_dual_methods(
        enabled=enabled, dispatchers=_registry._DISPATCHERS, dispatch=_tangents.dispatch,
        recording=_over_reverse.recording_dispatch, current=_tangents.CURRENT, paused=_tangents.PAUSED, raw_plans=_tangents._RAW,
        raw_tangent=_tangents._raw_tangent, ref_type=_tangents._Ref,
        jvp_programs=_programs.jvp_programs)


_engine.set_dual_hook(_configure_dual_methods)


def _configure_accumulate(enabled=None):
    """Note [accumulation fast path] in src/accumulate.h: on only while the accumulation
    into .grad is the code it mirrors; CHAINRULE_ENGINE_ACCUMULATE=0 (or
    enabled=False) keeps the Python path."""
    from chainrule import _tensor, _version_counter
    from chainrule.autograd import accumulate
    if enabled is None:
        enabled = _wanted("CHAINRULE_ENGINE_ACCUMULATE", _mirror.accumulate_matches)
    _engine.configure_accumulate(
        enabled=enabled, accumulate_grad_type=_node.AccumulateGrad,
        tensor_type=_tensor.Tensor, counter_type=_version_counter.VersionCounter,
        lock=accumulate._LOCK, stolen=accumulate.STOLEN)


_configure_accumulate()


def _configure_array_fns(enabled=None):
    """src/array_fns.h: ARRAY_NS.conj and .expand in C, through core's Note [array
    function slot], while core's _conj and _expand are the code they mirror;
    CHAINRULE_ENGINE_ARRAY_FNS=0 (or enabled=False) keeps the Python functions."""
    import numpy as np
    from chainrule._ops import _namespaces
    if enabled is None:
        enabled = _wanted("CHAINRULE_ENGINE_ARRAY_FNS", _mirror.array_fns_match)
    _engine.configure_array_fns(python_conj=_namespaces._conj, np_conj=np.conj,
                                python_expand=_namespaces._expand)
    _namespaces.set_array_fn("conj", _engine.array_conj if enabled else None)
    _namespaces.set_array_fn("expand", _engine.array_expand if enabled else None)


_configure_array_fns()


def _configure_view_maker(enabled=None):
    """Note [view maker] in src/view_maker.h: installed in core's view maker slot (Note
    [view maker slot] in chainrule/_ops/views.py) while make_view is the code it
    mirrors; CHAINRULE_ENGINE_VIEWS=0 (or enabled=False) keeps the Python function."""
    from chainrule import _grad_mode, _tensor, _version_counter
    from chainrule._ops import _registry, views
    if enabled is None:
        enabled = _wanted("CHAINRULE_ENGINE_VIEWS", _mirror.view_maker_matches)
    _engine.configure_view_maker(
        python_make_view=views.make_view, registry=_registry, views=views,
        tensor_type=_tensor.Tensor, extras_type=_tensor._Extras, grad_state=_grad_mode.STATE,
        record=_engine.record, counter_of=_version_counter.counter_of, register=views._register)
    views.set_view_maker(_engine.make_view if enabled else None)


_configure_view_maker()


class CppEngine(_engine.Engine):
    """The C++ engine; the interface of ``chainrule.autograd.engine.PythonEngine``:
    ``execute(roots, root_grads, keep_graph, create_graph, targets=None,
    accumulate_grad=True)`` returns the gradients captured for ``targets``."""

    __slots__ = ()

    # A plain C function (no pybind11 dispatch): every OpNode.apply calls it.
    needed_edges = staticmethod(_engine.needed_edges)

    def __repr__(self):
        return "<chainrule_engine.CppEngine>"
