"""The C++ engine mirrors Python code of core (chainrule_engine/_mirror.py): the Python
engine, OpNode.apply for the table-node fast path, _record for the recorder, and the
Tensor methods of Note [method slot] for the fast methods. When
that code changes, this test fails until the change is mirrored in engine_cpp/src and the fingerprint in
_mirror.py is updated: core's suite, which runs under both engines, only catches the
differences it happens to exercise.
"""
import chainrule_engine
from chainrule_engine import _engine, _mirror


def test_python_engine_unchanged_since_last_mirrored():
    now = _mirror.fingerprint(_mirror.engine_parts())
    assert now == _mirror.ENGINE_FINGERPRINT, (
        "the Python engine changed: mirror the change in engine_cpp/src/ (engine.cc, "
        "graph_task.cc, ...), then set ENGINE_FINGERPRINT in chainrule_engine/_mirror.py "
        "to %r" % now)


def test_table_apply_unchanged_since_last_mirrored():
    now = _mirror.fingerprint(_mirror.table_apply_parts())
    assert now == _mirror.TABLE_APPLY_FINGERPRINT, (
        "OpNode.apply or a helper it calls changed; the table-node fast path is off "
        "until src/op_node.cc mirrors the change and TABLE_APPLY_FINGERPRINT in "
        "chainrule_engine/_mirror.py is set to %r" % now)


def test_record_unchanged_since_last_mirrored():
    now = _mirror.fingerprint(_mirror.record_parts())
    assert now == _mirror.RECORD_FINGERPRINT, (
        "_registry._record (and _output), SavedTensor.__init__, LockedSavedTensor, saved_guard "
        "(is_exported, lock_arrays, _arrays, unlock_arrays, _set_writeable), "
        "VersionCounter.__init__, AccumulateGrad.__init__, Node.__init__, "
        "node.grad_accumulator or anomaly_mode._AnomalyState changed; the "
        "C++ recorder is off until src/recorder.cc mirrors the change and "
        "RECORD_FINGERPRINT in chainrule_engine/_mirror.py is set to %r" % now)


def test_recorder_is_on():
    assert _engine.recorder_enabled()


def test_table_fast_path_is_on():
    assert chainrule_engine.CppEngine and _engine.table_ops_enabled()


def test_accumulate_unchanged_since_last_mirrored():
    now = _mirror.fingerprint(_mirror.accumulate_parts())
    assert now == _mirror.ACCUMULATE_FINGERPRINT, (
        "the accumulation into .grad (engine._accumulate, AccumulateGrad.apply, "
        "autograd/accumulate.py, Tensor._wrap/_bump_version, _version_counter.bump) "
        "changed; the C++ accumulation is off until src/accumulate.cc mirrors the change "
        "and ACCUMULATE_FINGERPRINT in chainrule_engine/_mirror.py is set to %r" % now)


def test_accumulate_fast_path_is_on():
    assert _engine.accumulate_enabled()


def test_fast_methods_unchanged_since_last_mirrored():
    now = _mirror.fingerprint(_mirror.fast_methods_parts())
    assert now == _mirror.FAST_METHODS_FINGERPRINT, (
        "a Tensor method of Note [method slot] (elementwise._make's fn, "
        "operators._binary_operator) or a helper it calls (apply_binary, binary_operands, "
        "scalar_tensor, float_input, apply_op, run_op, _plain_output, Tensor._wrap, "
        "_grad_mode._ModeState) changed; the "
        "fast methods are off until src/fast_methods.cc mirrors the change and "
        "FAST_METHODS_FINGERPRINT in chainrule_engine/_mirror.py is set to %r" % now)


def test_fast_methods_are_on():
    from chainrule._ops import _method_slot
    assert _mirror.fast_methods_match()
    assert all(_method_slot.method_accelerated(entry[0]) for entry in _method_slot.ACCELERABLE)


def test_inplace_unchanged_since_last_mirrored():
    now = _mirror.fingerprint(_mirror.inplace_parts())
    assert now == _mirror.INPLACE_FINGERPRINT, (
        "an augmented assignment (Tensor.__iadd__, ...), operators._inplace, "
        "_try_fast_inplace, _keeps_kind, Tensor._bump_version, _version_counter.bump or "
        "_grad_mode._ModeState changed; the in-place fast methods are off until "
        "src/fast_methods.cc (Note [in-place fast methods]) mirrors the change and "
        "INPLACE_FINGERPRINT in chainrule_engine/_mirror.py is set to %r" % now)


def test_array_fns_unchanged_since_last_mirrored():
    now = _mirror.fingerprint(_mirror.array_fns_parts())
    assert now == _mirror.ARRAY_FNS_FINGERPRINT, (
        "_namespaces._conj or _expand changed; ARRAY_NS.conj and .expand stay the Python "
        "functions until "
        "src/array_fns.cc mirrors the change and ARRAY_FNS_FINGERPRINT in "
        "chainrule_engine/_mirror.py is set to %r" % now)


def test_array_conj_is_installed():
    from chainrule._ops import _namespaces
    assert _namespaces.ArrayNamespace.conj is _engine.array_conj


def test_view_maker_unchanged_since_last_mirrored():
    now = _mirror.fingerprint(_mirror.view_maker_parts())
    assert now == _mirror.VIEW_MAKER_FINGERPRINT, (
        "views.make_view (or _fast_op, _Extras, _ModeState) changed; the C make_view is "
        "off until src/view_maker.cc mirrors the change and VIEW_MAKER_FINGERPRINT in "
        "chainrule_engine/_mirror.py is set to %r" % now)


def test_view_maker_is_installed():
    from chainrule._ops import indexing, shape
    assert shape.make_view is indexing.make_view is _engine.make_view


def test_view_methods_unchanged_since_last_mirrored():
    now = _mirror.fingerprint(_mirror.view_methods_parts())
    assert now == _mirror.VIEW_METHODS_FINGERPRINT, (
        "a view method of Note [view methods] (shape.t, transpose, unsqueeze, permute, view, "
        "reshape, indexing.getitem or a helper they call) changed; their C entries are off "
        "until src/view_methods.cc mirrors the change and VIEW_METHODS_FINGERPRINT in "
        "chainrule_engine/_mirror.py is set to %r" % now)


def test_view_methods_are_installed():
    from chainrule._ops import _method_slot
    for name in ("t", "transpose", "unsqueeze", "permute", "view", "reshape", "__getitem__"):
        assert _method_slot.method_accelerated(name), name


def test_checking_the_mirrors_keeps_no_source_files_in_memory():
    # inspect caches every file it reads in linecache; the checks made when the engine
    # is imported must not leave core's sources there for the process's life
    import linecache
    linecache.clearcache()
    assert _mirror.record_matches() and _mirror.fast_methods_match()
    assert not any("chainrule" in filename for filename in linecache.cache)
