"""The C++ recorder (Note [recorder fast path] in src/recorder.h) against core's
_record: the same op recorded by each gives the same node, saved tensors and output,
field by field; the cases it hands to _record behave as under _record."""
import numpy as np
import pytest

import chainrule as cr
import chainrule_engine
from chainrule._ops import _registry
from chainrule.autograd import node as node_mod
from chainrule_engine import _engine

from conftest import python_calls


@pytest.fixture(params=["python", "cpp"])
def recorder(request):
    previous = _registry.set_recorder(_engine.record if request.param == "cpp" else None)
    yield request.param
    _registry.set_recorder(previous)


def _describe(value, inputs):
    """A comparable description: objects named by their role, not their identity."""
    for k, t in enumerate(inputs):
        if value is t:
            return ("input", k)
        if value is t._data:
            return ("input data", k)
        if value is t._vc:
            return ("input counter", k)
        if value is t.grad_fn:
            return ("input grad_fn", k)
    if isinstance(value, node_mod.AccumulateGrad):
        return ("accumulator of", _describe(value.variable, inputs))
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, value.tolist())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_describe(v, inputs) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _describe(v, inputs)) for k, v in value.items()))
    if value is None or isinstance(value, (bool, int, float, str, np.dtype)):
        return value
    return type(value).__name__


def _saved_fields(s, out, inputs):
    fields = {f: getattr(s, f) for f in ("data", "tensor", "counter", "version", "output_nr")}
    fields = {f: ("output data" if v is out._data else "output counter" if v is out._vc
                  else _describe(v, inputs)) for f, v in fields.items()}
    extra = {k: _describe(v, inputs) for k, v in getattr(s, "__dict__", {}).items()}
    return (type(s).__name__, fields, extra)


def _leaf_state(t, inputs):
    """A leaf's extras and the accumulator they hold (Note [leaf records])."""
    extra = t._extra
    if extra is None:
        return None
    acc = extra.grad_acc() if callable(extra.grad_acc) else None
    fields = {f: getattr(extra, f) for f in type(extra).__slots__
              if f != "grad_acc" or not callable(extra.grad_acc)}
    fields = {f: ("dict", len(v)) if isinstance(v, dict) else _describe(v, inputs)
              for f, v in fields.items()}      # hook dicts: keyed by handle ids
    if acc is None:
        return (fields, None)
    import gc
    return (fields, (type(acc).__name__, acc._next, acc._seq, acc.variable is t,
                     gc.is_tracked(acc), dict(acc.__dict__), type(extra.grad_acc).__name__))


def snapshot(out, inputs, attrs):
    node = out.grad_fn
    return {
        "leaves": [_leaf_state(t, inputs) for t in inputs],
        "out": (type(out).__name__, out._data.tolist(), out._output_nr, out._requires_grad,
                out._grad, out._base, out._extra, out._vc is None),
        "node": type(node).__name__,
        "next": _describe(node._next, inputs),
        "in_meta": _describe(node._in_meta, inputs),
        "attrs_is_same": node._attrs is attrs,
        "saved": [(k, _saved_fields(s, out, inputs)) for k, s in node._saved.items()],
        "out_meta": node._out_meta,
    }


def record_both(make_inputs, op_name, attrs=None):
    """Record op_name on fresh inputs under each recorder; their snapshots and the
    number of sequence numbers each used."""
    results = []
    for fn in (None, _engine.record):
        previous = _registry.set_recorder(fn)
        try:
            inputs = make_inputs()
            a = dict(attrs or {})
            before = node_mod.next_sequence_nr()
            out = _registry.apply_op(_registry.OPS[op_name], inputs, a)
            used = out.grad_fn._seq - before
            results.append((snapshot(out, inputs, a), used))
        finally:
            _registry.set_recorder(previous)
    return results


def leaf(values=(0.5, -1.0, 2.0), requires_grad=True, dtype=np.float64):
    return cr.tensor(np.array(values, dtype), requires_grad=requires_grad)


CASES = [
    ("sin of a leaf", lambda: (leaf(),), "sin"),
    ("tanh saves its result", lambda: (leaf(),), "tanh"),
    ("mul by a constant", lambda: (leaf(), leaf(requires_grad=False)), "mul"),
    ("mul, both need grad", lambda: (leaf(), leaf((1.0, 2.0, 3.0))), "mul"),
    ("mul of a non-leaf", lambda: (leaf() * 2.0, leaf(requires_grad=False)), "mul"),
    ("broadcasting mul", lambda: (leaf().reshape(3, 1), leaf((1.0, 2.0)[:1])), "mul"),
    ("float32", lambda: (leaf(dtype=np.float32),), "exp"),
    ("complex", lambda: (leaf(dtype=np.complex128),), "sin"),
    ("saved view input", lambda: (leaf().reshape(3, 1) * 1.0, leaf().view(3, 1)), "mul"),
    ("input with a counter", lambda: (_bumped(),), "sin"),
    ("saved leaf whose accumulator died", lambda: (_stale(),), "sin"),
    ("two stale leaves, both saved", lambda: (_stale(), _stale((1.0, 2.0, 3.0))), "mul"),
    ("stale leaf, not saved", lambda: (_stale(),), "exp"),
    ("stale leaf beside a live one", lambda: (_stale(), leaf() * 1.0), "mul"),
    ("leaf with a tensor hook", lambda: (_hooked(),), "sin"),
    ("exported leaf (locked when saved)", lambda: (_exported(),), "sin"),
    ("exported leaf, stale", lambda: (_stale(_exported()),), "sin"),
    ("view of a stale leaf", lambda: (_stale().view(3, 1),), "sin"),
    ("view made under no_grad (no accumulator)", lambda: (_no_grad_view(), leaf()), "mul"),
]


def _no_grad_view():
    """Note [how a view was made]: requires grad, a leaf, no accumulator."""
    with cr.no_grad():
        return leaf()[:]


def _stale(values=(0.5, -1.0, 2.0)):
    """A leaf that was used once: it has extras, and a weakref to its accumulator,
    which died with that graph (every parameter after a training step)."""
    t = values if isinstance(values, cr.Tensor) else leaf(values)
    t.sin().sum().backward()
    t.grad = None
    assert t._extra is not None and t._extra.grad_acc() is None
    return t


def _hooked():
    t = leaf()
    t.register_hook(lambda g: g * 2)
    return t


def _exported():
    return cr.from_numpy(np.array([0.5, -1.0, 2.0])).requires_grad_()


def _bumped():
    """A leaf modified in place once: its version counter exists and is at 1."""
    t = leaf(requires_grad=False)
    t.add_(1.0)
    t.requires_grad_(True)
    return t


@pytest.mark.parametrize("name,make_inputs,op", CASES, ids=[c[0] for c in CASES])
def test_same_record_as_python(name, make_inputs, op):
    (py, py_used), (cpp, cpp_used) = record_both(make_inputs, op)
    assert cpp == py
    assert cpp_used == py_used


def test_recorder_installed():
    assert _engine.recorder_enabled()
    assert _registry._recorder is _engine.record


def test_inference_tensor_error_is_the_same(recorder):
    with cr.inference_mode():
        t = cr.tensor([1.0, 2.0])
    x = leaf((1.0, 2.0), dtype=np.float32)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        x * t


def test_saved_tensor_hooks_run(recorder):
    packed = []

    def pack(t):
        packed.append(t)
        return t

    x = leaf()
    with cr.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = x.sin().tanh()
    y.sum().backward()
    assert len(packed) == 2
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x._data) * (1 - np.tanh(np.sin(x._data)) ** 2))


def test_anomaly_mode_traces(recorder):
    x = leaf()
    with cr.autograd.detect_anomaly(check_nan=False):
        y = x.sin()
    assert y.grad_fn._metadata is not None or y.grad_fn._anomaly is not None


def test_modified_saved_tensor_raises(recorder):
    x = leaf()
    a = x * 1.0
    b = a.sin()
    a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


def test_integer_and_multi_output_fall_back(recorder):
    x = leaf((3.0, 1.0, 2.0, 4.0))
    values, indices = x.max(), x.argmax()
    parts = x.split(2)
    assert indices.grad_fn is None and not indices.requires_grad
    assert [type(p.grad_fn).__name__ for p in parts] == ["SplitBackward0"] * 2
    (parts[0].sum() + values).backward()
    assert x.grad.tolist() == [1.0, 1.0, 0.0, 1.0]


def test_chain_gradients_match():
    grads = []
    for fn in (None, _engine.record):
        previous = _registry.set_recorder(fn)
        try:
            x = leaf()
            y = x
            for k in range(40):
                y = [lambda v: v * 1.0001, lambda v: v.sin(), lambda v: v + x,
                     lambda v: v.tanh()][k % 4](y)
            y.sum().backward()
            grads.append(x.grad.tolist())
        finally:
            _registry.set_recorder(previous)
    assert grads[0] == grads[1]


def test_graphs_in_reference_cycles_are_collected(recorder):
    """Note [untracked records]: only what cannot be in a cycle leaves the collector's
    view, so a graph tied into a cycle by a hook is still freed."""
    import gc
    import weakref
    x = leaf()
    y = x.sin()
    z = y.exp()
    y.register_hook(lambda g: g * z.sum())
    node = weakref.ref(z.grad_fn)
    del y, z
    gc.collect()
    assert node() is None


def test_in_meta_matches_inputs_across_shapes_and_dtypes(recorder):
    """Note [untracked records]: shared (shape, dtype) tuples never mix up shapes."""
    shapes = [(), (1,), (16,), (4, 4), (2, 8), (8, 2), (1, 1, 1, 1, 1, 1, 1, 1, 1), (0, 3)]
    for dtype in (np.float64, np.float32, np.complex128, np.float64):
        for shape in shapes * 2:
            x = cr.tensor(np.ones(shape, dtype), requires_grad=True)
            y = x.sin()
            assert y.grad_fn._in_meta == [(shape, np.dtype(dtype))]
            assert type(y.grad_fn._in_meta) is list


def test_in_meta_list_is_untracked():
    """Note [untracked records]: the list holds only shared (shape, dtype) tuples."""
    import gc
    y = leaf().sin()
    assert not gc.is_tracked(y.grad_fn._in_meta)
    assert gc.is_tracked(y.grad_fn) and gc.is_tracked(y.grad_fn._next)


def test_saved_outputs_are_untracked_saved_inputs_are_not():
    """Note [untracked records]: a saved output holds no tensor; a saved input does."""
    import gc
    y = leaf().sin()
    z = y.tanh()                                  # saves its result only
    assert not gc.is_tracked(z.grad_fn._saved["result"])
    assert not gc.is_tracked(z.grad_fn._saved)
    assert gc.is_tracked(y.grad_fn._saved["self"]) and gc.is_tracked(y.grad_fn._saved)
    with cr.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        w = y.tanh()                              # hooks: the Python path, tracked
    assert gc.is_tracked(w.grad_fn._saved["result"])
    (z.sum() + w.sum()).backward()


def test_a_cycle_through_a_saved_output_is_collected(recorder):
    """The untracked saved output does not hide the cycle node -> hook -> output."""
    import gc
    import weakref
    z = leaf().sin().tanh()
    z.grad_fn.register_hook(lambda gi, go: z)
    node = weakref.ref(z.grad_fn)
    del z
    gc.collect()
    assert node() is None


def test_live_leaf_accumulator_is_reused_without_python(recorder, monkeypatch):
    """The recorder reads a leaf's live AccumulateGrad from its extras; it calls
    grad_accumulator only when there is none (first use, or freed)."""
    calls = []
    python_grad_accumulator = _registry.grad_accumulator

    def counting(t):
        calls.append(t)
        return python_grad_accumulator(t)
    monkeypatch.setattr(_registry, "grad_accumulator", counting)
    x = leaf()
    first = x * 2.0
    second = x.sin()
    assert first.grad_fn._next[0][0] is second.grad_fn._next[0][0]
    assert len(calls) == (2 if recorder == "python" else 1)
    del first, second                      # the accumulator dies with the graphs
    third = x.exp()
    assert len(calls) == (3 if recorder == "python" else 2)
    assert type(third.grad_fn._next[0][0]) is node_mod.AccumulateGrad
    third.sum().backward()
    assert x.grad.tolist() == np.exp(x._data).tolist()


def test_stale_leaf_is_recorded_without_python(recorder):
    """Note [leaf records]: a parameter whose accumulator died with the last step is
    given a new one and saved without Python frames (the Python recorder runs
    grad_accumulator, AccumulateGrad.__init__ and SavedTensor.__init__)."""
    x, w = _stale(), _stale((1.0, 2.0, 3.0))
    y, names = python_calls(lambda: _registry.apply_op(_registry.OPS["mul"], (x, w), {}))
    python_frames = {"grad_accumulator", "__init__", "_extras"} & set(names)
    if recorder == "cpp":
        assert not python_frames
    else:
        assert python_frames == {"grad_accumulator", "_extras", "__init__"}
    y.sum().backward()
    assert x.grad.tolist() == w._data.tolist() and w.grad.tolist() == x._data.tolist()


def test_replaced_grad_accumulator_is_called(monkeypatch):
    """A grad_accumulator other than the one mirrored is called, as by _record."""
    calls = []
    python_grad_accumulator = _registry.grad_accumulator
    x = _stale()
    monkeypatch.setattr(_registry, "grad_accumulator",
                        lambda t: calls.append(t) or python_grad_accumulator(t))
    y = x.sin()
    assert len(calls) == 1 and calls[0] is x
    assert y.grad_fn._next[0][0] is x._extra.grad_acc()


def test_stale_inference_flag_still_raises(recorder):
    """Extras that are not plain (here: an inference tensor) take SavedTensor.__init__,
    which raises the reference's error."""
    with cr.inference_mode():
        t = cr.tensor(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        _stale() * t


def _lock_state(arrays):
    """Per array: writeable, and its saved_guard._LOCKS count (None: no entry)."""
    from chainrule.autograd import saved_guard
    return [(a.flags.writeable, (saved_guard._LOCKS.get(id(a)) or [None, None])[1])
            for a in arrays]


def _exported_lifecycle():
    """Save an exported leaf twice, a read-only one once, then free them in turn: the
    lock states seen along the way and the saved tensors' types and locked lists."""
    arr = np.array([0.5, -1.0, 2.0])
    frozen = np.array([1.0, 2.0, 3.0])
    frozen.flags.writeable = False
    x = cr.from_numpy(arr).requires_grad_()
    r = cr.from_numpy(frozen).requires_grad_()
    states = [_lock_state([arr, frozen])]
    a, b, c = x.sin(), x.cos(), r.sin()
    saved = [y.grad_fn._saved["self"] for y in (a, b, c)]
    states.append([(type(s).__name__, [v is arr for v in s.__dict__.get("locked", [])])
                   for s in saved])
    states.append(_lock_state([arr, frozen]))
    del saved
    a.sum().backward()
    states.append(_lock_state([arr, frozen]))
    del a, b
    states.append(_lock_state([arr, frozen]))
    del c
    states.append(_lock_state([arr, frozen]))
    return states


def test_exported_leaf_lock_lifecycle_matches_python():
    """Note [saved exported leaves]: the C++ recorder locks as lock_arrays does."""
    from chainrule.autograd import saved_guard
    states = []
    for fn, unlock in ((None, None), (_engine.record, _engine.unlock_arrays)):
        previous = _registry.set_recorder(fn)
        previous_unlock = saved_guard.set_unlocker(unlock)
        try:
            states.append(_exported_lifecycle())
        finally:
            _registry.set_recorder(previous)
            saved_guard.set_unlocker(previous_unlock)
    assert states[1] == states[0]
    assert states[0][2] == [(False, 2), (False, None)]      # the counts it must reach


def test_exported_leaf_is_saved_without_python(recorder):
    arr = np.array([0.5, -1.0, 2.0])
    x = cr.from_numpy(arr).requires_grad_()
    y, names = python_calls(x.sin)
    python_frames = {"__init__", "is_exported", "lock_arrays", "_arrays"} & set(names)
    assert python_frames == (set() if recorder == "cpp" else
                             {"__init__", "is_exported", "lock_arrays", "_arrays"})
    assert type(y.grad_fn._saved["self"]).__name__ == "LockedSavedTensor"
    with pytest.raises(ValueError, match="read-only"):
        arr[0] = 1.0


def test_replaced_lock_arrays_is_called(monkeypatch):
    from chainrule.autograd import saved_guard
    calls = []
    python_lock = saved_guard.lock_arrays
    monkeypatch.setattr(saved_guard, "lock_arrays", lambda t: calls.append(t) or python_lock(t))
    x = cr.from_numpy(np.array([0.5, -1.0, 2.0])).requires_grad_()
    y = x.sin()
    assert len(calls) == 1 and calls[0] is x
    assert y.grad_fn._saved["self"].__dict__["locked"] == [x._data]


def _unlock_scenario(unlock):
    """unlock(...) over hand-made lock states: the states and errors it leaves."""
    from chainrule.autograd import saved_guard
    a, b, c = np.zeros(2), np.ones(3), np.arange(4.0)
    view = c[1:]
    for arr in (a, b, c):
        arr.flags.writeable = False
    view.flags.writeable = False
    saved_guard._LOCKS.update({id(a): [a, 2], id(b): [b, 1], id(c): [c, 1], id(view): [view, 1]})
    seen = []
    try:
        unlock([a, b])                        # a: 2 -> 1; b: unlocked
        seen.append(_lock_state([a, b]))
        unlock((x for x in [a]))              # any iterable; a: unlocked
        seen.append(_lock_state([a, b]))
        unlock([view])                        # its base is still read-only: ValueError ignored
        seen.append(_lock_state([view, c]))
        unlock([c, np.ones(1)])               # an array it never locked is skipped
        seen.append(_lock_state([view, c]))
        unlock(())
        for bad in (None, [a, 3]):
            try:
                unlock(bad)
            except Exception as e:            # noqa: BLE001 - compared by the caller
                seen.append((type(e).__name__, str(e)))
    finally:
        for arr in (a, b, c, view):
            saved_guard._LOCKS.pop(id(arr), None)
    return seen


def test_unlock_arrays_matches_python():
    """Note [unlock slot]: the C unlock leaves _LOCKS and the flags as unlock_arrays."""
    from chainrule.autograd import saved_guard
    python = _unlock_scenario(saved_guard.unlock_arrays)
    fast = _unlock_scenario(_engine.unlock_arrays)
    assert fast == python
    assert python[:2] == [[(False, 1), (True, None)], [(True, None), (True, None)]]


def test_unlock_slot_is_installed_with_the_recorder():
    from chainrule.autograd import saved_guard
    assert saved_guard._unlocker is _engine.unlock_arrays
    chainrule_engine._configure_recorder(enabled=False)
    try:
        assert saved_guard._unlocker is saved_guard.unlock_arrays
    finally:
        chainrule_engine._configure_recorder()
    assert saved_guard._unlocker is _engine.unlock_arrays


def test_recorded_nodes_get_attribute_storage_only_when_set():
    """new_instance (src/slots.cc): a node or saved tensor the recorder makes holds no
    attribute dict, and a backward pass (which reads hook tables and checks saved
    tensors) does not make one; setting an attribute later works as usual."""
    import gc

    def held_dicts(obj):
        return sum(type(r) is dict for r in gc.get_referents(obj))

    x = leaf()
    y = (x * 1.0).sin()                  # saves a non-leaf: a SavedTensor made in C++
    z = y * 2.0
    node, saved = y.grad_fn, y.grad_fn._saved["self"]
    before = held_dicts(node), held_dicts(saved)
    z.sum().backward(retain_graph=True)
    assert (held_dicts(node), held_dicts(saved)) == before
    node.metadata["tag"] = 1
    handle = node.register_hook(lambda grad_inputs, grad_outputs: None)
    assert held_dicts(node) == before[0] + 1
    assert node.metadata == {"tag": 1} and len(node._post_hooks) == 1
    handle.remove()
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.cos(x.detach().numpy()))


REDUCE_ALL = {"dim": None, "keepdim": False, "dtype": None}


@pytest.mark.parametrize("op", ["sum", "mean", "prod"])
def test_full_reduction_scalar_output_same_record_as_python(op):
    """A full reduction's forward gives a NumPy scalar: both recorders record it as a
    0-d array (_output's np.asarray)."""
    for make_inputs in (lambda: (leaf(),), lambda: (leaf(dtype=np.float32) * 2.0,)):
        (py, py_used), (cpp, cpp_used) = record_both(make_inputs, op, REDUCE_ALL)
        assert cpp == py and cpp_used == py_used
        assert py["out"][1] == cpp["out"][1] and py["node"].endswith("Backward0")


def test_full_reduction_is_recorded_without_python(recorder):
    w = leaf()
    x = w * 1.0
    y, names = python_calls(
        lambda: _registry.apply_op(_registry.OPS["sum"], (x,), dict(REDUCE_ALL)))
    assert ("_record" in names) == (recorder == "python")
    assert type(y._data) is np.ndarray and y._data.shape == ()
    y.backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0] and y.grad_fn.name() == "SumBackward0"
