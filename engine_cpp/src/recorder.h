// The forward recording of core's table ops (chainrule._ops._registry._record) in C++.
//
// Note [recorder fast path]
//     With the engine in C++, the forward with recording was the larger half of a
//     chain's cost: `_record` (node object, edges and metadata, one SavedTensor and
//     version counter per saved value, the output tensor) was ~1.6 µs of interpreter
//     work per op. core's recording slot (`_registry.set_recorder`, Note [recording
//     slot]) lets this layer install `record` below, which does the same steps with
//     direct slot access. It takes only the common case and otherwise calls
//     `_registry._record` before doing anything: a view or multi-output op, an
//     integer output, anomaly mode, saved-tensor hooks or a mutation context, inputs
//     or arrays of unexpected types. A saved input that is a view or has unusual
//     extras (inference flag) is saved by calling `SavedTensor(t, False)`; an
//     exported leaf's array is locked here (Note [saved exported leaves] in
//     recorder.cc); a leaf's accumulator is read from its extras while alive and
//     made here when it died with the last graph (Note [leaf records]; the Python
//     `grad_accumulator` when the leaf has no extras yet).
//     It is on only while `_record`, `SavedTensor.__init__`, `LockedSavedTensor`,
//     `VersionCounter.__init__`, `grad_accumulator`, the AccumulateGrad and Node
//     constructors, `saved_guard`'s `is_exported`, `lock_arrays` and `_arrays`, and
//     the anomaly-mode state are the code it was written against
//     (chainrule_engine/_mirror.py; tests/test_python_engine_mirror.py says when to
//     update).
#pragma once

#include "python_api.h"
#include "slots.h"

namespace chainrule_engine {

// Note [thread-local reads]
//     Core's modes (`_grad_mode.STATE`, `anomaly_mode.STATE`) are threading.local
//     objects; a getattr on one finds the thread's dict of the local first, ~50 ns,
//     twice per recorded op. That dict is one object for the life of the thread (a
//     local's `__dict__` cannot be replaced), so `local_attr` fetches it once per
//     thread (`getattr(state, "__dict__")`) and then reads the attribute from it.
//     The cache is per OS thread and keyed by the Python thread state and its unique
//     id, so a new thread state never sees another's dict. Exact while the local's
//     class defines no descriptor of that name (its __init__ only sets plain
//     attributes; the class is fingerprinted in chainrule_engine/_mirror.py); a name
//     missing from the dict is left to getattr.
struct ThreadLocalDict {
  PyObject* local = nullptr;     // the threading.local object (identity only)
  PyThreadState* tstate = nullptr;
  uint64_t tstate_id = 0;
  PyObject* dict = nullptr;      // borrowed: lives as long as the thread
};

// getattr(local, name) through `cache` (a thread_local of the caller). New reference,
// or nullptr with an error.
PyObject* local_attr(PyObject* local, PyObject* name, ThreadLocalDict& cache);

// saved_guard.unlock_arrays(arrays) in C (Note [saved exported leaves] in
// recorder.cc), for core's unlock slot (Note [unlock slot] in saved_guard.py).
PyObject* unlock_arrays(PyObject* self, PyObject* arrays);

// record(op, inputs, attrs, out, view_base): `_registry._record`'s signature.
PyObject* record(PyObject* self, PyObject* const* args, Py_ssize_t nargs);

// The same for `view_base` None with the inputs as an array (no tuple is made unless
// _record is called): the entry of the fast methods (fast_methods.h).
PyObject* record_inputs(PyObject* op, PyObject* const* inputs, Py_ssize_t n, PyObject* attrs,
                        PyObject* out);

void configure_recorder(bool enabled, py::object python_record, py::object registry,
                        py::object tensor_type, py::object op_node_type,
                        py::object saved_type, py::object counter_type,
                        py::object anomaly_state, py::object hooks_active,
                        py::object extras_type, py::object node_module,
                        py::object saved_guard, py::object locked_saved_type);
bool recorder_enabled();

}  // namespace chainrule_engine
