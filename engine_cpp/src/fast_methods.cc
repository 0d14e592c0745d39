#define PY_ARRAY_UNIQUE_SYMBOL chainrule_engine_ARRAY_API
#define NO_IMPORT_ARRAY
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "fast_methods.h"

#include <numpy/arrayobject.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "recorder.h"
#include "view_methods.h"

namespace chainrule_engine {

namespace {

constexpr Py_ssize_t kMaxAttrs = 4;

// One accelerated method (Note [fast methods]).
struct FastMethod {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  Py_ssize_t arity;      // 1: unary `fn(input)`, 2: binary `fn(self, other)`; the
                         // tensor inputs (kind "scalar" is `fn(self, number)`: 1)
  bool scalar;           // kind "scalar": the number is the one attr (Note [scalar
                         // fast methods])
  PyObject* op;          // the OpDef
  PyObject* attrs;       // the attrs dict apply_op receives (the node keeps it)
  PyObject* attr_names;  // attrs' keys when made: the forward's kwnames
  PyObject* python_fn;   // the Python function replaced: the reference and fallback
  PyObject* ufunc;       // kind "inplace" (Note [in-place fast methods]): python_fn's
                         // ufunc; nullptr for the other kinds
  PyObject* programs;    // Note [JVP programs]: the layer's programs for op and attrs,
                         // by mask; nullptr until first needed
  unsigned long programs_gen;  // the dual configuration they were made under
  ViewEntry view;        // kind "view" (Note [view methods]); nullptr for the other kinds
  PyObject* view_keyword;  // its keyword-only parameter (None: as if not given), or nullptr
};

struct FastConfig {
  PyTypeObject* tensor = nullptr;
  PyObject* registry_dict = nullptr;  // _registry.__dict__: _recorder, _plain_output
  PyObject* common_dict = nullptr;    // _common.__dict__: _SCALARS, scalar_tensor
  PyObject* grad_state = nullptr;     // _grad_mode.STATE
  PyObject* record_fn = nullptr;      // _engine.record (called directly when installed)
  TensorSlots t{};                    // Tensor's slots
};
FastConfig fc;
bool fc_ready = false;
PyObject* fc_refs = nullptr;  // keeps fc's objects alive

struct FastNames {
  PyObject* forward = PyUnicode_InternFromString("forward");
  PyObject* grad_enabled = PyUnicode_InternFromString("grad_enabled");
  PyObject* inference = PyUnicode_InternFromString("inference");
  PyObject* recorder = PyUnicode_InternFromString("_recorder");
  PyObject* plain_output = PyUnicode_InternFromString("_plain_output");
  PyObject* wrap_inference = PyUnicode_InternFromString("_wrap_inference");
  PyObject* dispatch = PyUnicode_InternFromString("_dispatch");
  PyObject* scalars = PyUnicode_InternFromString("_SCALARS");
  PyObject* scalar_tensor = PyUnicode_InternFromString("scalar_tensor");
};
const FastNames& fn_names() {
  static const FastNames* n = new FastNames();
  return *n;
}

PyObject* call_python(FastMethod* m, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return PyObject_Vectorcall(m->python_fn, args, nargsf, kwnames);
}

// A Python error met while checking or in the forward: an Exception is cleared (the
// Python function will meet it again, or decide otherwise); anything else
// (KeyboardInterrupt, SystemExit) must propagate. True when cleared.
bool forgive_error() {
  if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) return false;
  PyErr_Clear();
  return true;
}

// The array of a tensor the fast path takes (exactly Tensor, a float or complex
// ndarray, _requires_grad a bool), else nullptr. Borrowed.
PyArrayObject* float_array(PyObject* t) {
  if (Py_TYPE(t) != fc.tensor) return nullptr;
  PyObject* data = slot(t, fc.t.data);
  PyObject* rg = slot(t, fc.t.requires_grad);
  if (data == nullptr || Py_TYPE(data) != &PyArray_Type) return nullptr;
  if (rg != Py_True && rg != Py_False) return nullptr;
  PyArrayObject* arr = reinterpret_cast<PyArrayObject*>(data);
  char kind = PyArray_DESCR(arr)->kind;
  return kind == 'f' || kind == 'c' ? arr : nullptr;
}

// scalar_tensor(value, dtype): the cached constant from `_SCALARS`, else a call to
// scalar_tensor (which caches it). New reference; nullptr (maybe with an error).
PyObject* scalar_operand(PyObject* value, PyObject* dtype) {
  const FastNames& n = fn_names();
  PyObject* cache = PyDict_GetItemWithError(fc.common_dict, n.scalars);
  if (cache == nullptr || !PyDict_CheckExact(cache)) return nullptr;
  Ref key(PyTuple_Pack(3, reinterpret_cast<PyObject*>(Py_TYPE(value)), value, dtype));
  if (!key) return nullptr;
  PyObject* t = PyDict_GetItemWithError(cache, key.get());
  if (t != nullptr) {
    Py_INCREF(t);
    return t;
  }
  PyObject* make = PyErr_Occurred() ? nullptr :
      PyDict_GetItemWithError(fc.common_dict, n.scalar_tensor);
  if (make == nullptr) return nullptr;
  PyObject* args[] = {value, dtype};
  return PyObject_Vectorcall(make, args, 2, nullptr);
}

// binary_operands' fast cases for `a` (a float or complex tensor): `b` itself when it
// is a tensor of the same dtype, the constant for a Python float or int. New
// reference; nullptr (maybe with an error) when the Python function must decide.
PyObject* other_operand(PyArrayObject* a, PyObject* b) {
  PyObject* dtype = reinterpret_cast<PyObject*>(PyArray_DESCR(a));
  if (Py_TYPE(b) == fc.tensor) {
    PyArrayObject* barr = float_array(b);
    if (barr == nullptr || reinterpret_cast<PyObject*>(PyArray_DESCR(barr)) != dtype) {
      return nullptr;
    }
    Py_INCREF(b);
    return b;
  }
  if (PyFloat_CheckExact(b) || PyLong_CheckExact(b)) return scalar_operand(b, dtype);
  return nullptr;
}

// STATE.<name> as 0/1, -1 with an error (Note [thread-local reads]).
int mode_flag(PyObject* name) {
  thread_local ThreadLocalDict state_dict;
  Ref value(local_attr(fc.grad_state, name, state_dict));
  return value ? PyObject_IsTrue(value.get()) : -1;
}

// op.forward(*arrays, **attrs), as apply_op calls it. New reference or nullptr.
PyObject* run_forward(FastMethod* m, PyObject* const* inputs, PyObject* attrs) {
  Py_ssize_t nattrs = PyTuple_GET_SIZE(m->attr_names);
  if (!PyDict_CheckExact(attrs) || PyDict_GET_SIZE(attrs) != nattrs) {
    PyErr_SetString(PyExc_RuntimeError, "attrs changed");  // forgiven: Python decides
    return nullptr;
  }
  PyObject* args[1 + 2 + kMaxAttrs];
  PyObject** argv = args + 1;  // args[0]: room for PY_VECTORCALL_ARGUMENTS_OFFSET
  for (Py_ssize_t i = 0; i < m->arity; ++i) argv[i] = slot(inputs[i], fc.t.data);
  for (Py_ssize_t k = 0; k < nattrs; ++k) {
    PyObject* v = PyDict_GetItemWithError(attrs, PyTuple_GET_ITEM(m->attr_names, k));
    if (v == nullptr) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "attrs changed");
      return nullptr;
    }
    argv[m->arity + k] = v;
  }
  Ref forward(PyObject_GetAttr(m->op, fn_names().forward));
  if (!forward) return nullptr;
  return PyObject_Vectorcall(forward.get(), argv, m->arity | PY_VECTORCALL_ARGUMENTS_OFFSET,
                             nattrs ? m->attr_names : nullptr);
}

// _registry.<name>, read at each call as apply_op does (borrowed; nullptr with an error).
PyObject* registry_global(PyObject* name) {
  PyObject* value = PyDict_GetItemWithError(fc.registry_dict, name);
  if (value == nullptr && !PyErr_Occurred()) PyErr_SetObject(PyExc_NameError, name);
  return value;
}

// apply_op's first check: a layer's dispatcher is registered (Note [dispatch slot] in
// _registry.py), so the op must run through Python. Also true when the name is gone.
bool dispatching() {
  PyObject* d = PyDict_GetItemWithError(fc.registry_dict, fn_names().dispatch);
  if (d == nullptr) {
    PyErr_Clear();
    return true;
  }
  return d != Py_None;
}

// _recorder(op, inputs, attrs, out, None): apply_op's recording call.
PyObject* record_output(FastMethod* m, PyObject* const* inputs, PyObject* attrs,
                        PyObject* out) {
  PyObject* recorder = registry_global(fn_names().recorder);
  if (recorder == nullptr) return nullptr;
  if (recorder == fc.record_fn) return record_inputs(m->op, inputs, m->arity, attrs, out);
  Ref tuple(m->arity == 1 ? PyTuple_Pack(1, inputs[0]) : PyTuple_Pack(2, inputs[0], inputs[1]));
  if (!tuple) return nullptr;
  PyObject* args[] = {m->op, tuple.get(), attrs, out, Py_None};
  return PyObject_Vectorcall(recorder, args, 5, nullptr);
}

// _plain_output(out, None): Tensor._wrap, inlined for an ndarray.
PyObject* plain_output(PyObject* out) {
  if (Py_TYPE(out) != &PyArray_Type) {
    PyObject* fn = registry_global(fn_names().plain_output);
    if (fn == nullptr) return nullptr;
    PyObject* args[] = {out, Py_None};
    return PyObject_Vectorcall(fn, args, 2, nullptr);
  }
  return new_tensor(fc.tensor, fc.t, out, Py_None);
}

// _wrap_inference(op, out): inference mode, rare, left to Python.
PyObject* inference_output(FastMethod* m, PyObject* out) {
  PyObject* fn = registry_global(fn_names().wrap_inference);
  if (fn == nullptr) return nullptr;
  PyObject* args[] = {m->op, out};
  return PyObject_Vectorcall(fn, args, 2, nullptr);
}

// apply_op after the forward, in its order: record when grad mode is on and an input
// requires grad; else an inference tensor in inference mode; else a plain tensor.
PyObject* finish(FastMethod* m, PyObject* const* inputs, PyObject* attrs, PyObject* out) {
  const FastNames& n = fn_names();
  int grad = mode_flag(n.grad_enabled);
  if (grad < 0) return nullptr;
  for (Py_ssize_t i = 0; grad && i < m->arity; ++i) {
    if (slot(inputs[i], fc.t.requires_grad) == Py_True) {
      return record_output(m, inputs, attrs, out);
    }
  }
  int inference = mode_flag(n.inference);
  if (inference < 0) return nullptr;
  return inference ? inference_output(m, out) : plain_output(out);
}

// --- kind "inplace" ------------------------------------------------------------------
// Note [in-place fast methods]
//     An optimizer's update, `p -= lr * p.grad` under no_grad, ran Python frames per
//     parameter: the augmented assignment (operators.py `_inplace_operator`'s
//     `operator`), _try_fast_inplace, _keeps_kind, Tensor._bump_version and
//     _version_counter.bump. A FastMethod of kind "inplace" (Note [method slot]) does
//     the operator's `_try_fast_inplace(self, ufunc, other, 1)` common case itself:
//     self and other exactly Tensor holding float or complex ndarrays of the same
//     dtype (so _keeps_kind is true without np.result_type, and no bool operand meets
//     Note [bool subtraction]), positional arguments, the helpers still the objects
//     mirrored; then _try_fast_inplace's checks in its
//     order (recording needed, inference tensor, saved-tensor hooks, read-only array),
//     `ufunc(arr, value, out=arr, casting="same_kind")` and the version bump.
//     Anything else calls the Python operator before any work, and so does a
//     TypeError or ValueError from the ufunc (what makes _try_fast_inplace give up;
//     the ufunc fails the same way again there, before writing, and the in-place
//     method runs). Fingerprinted (_mirror.INPLACE_FINGERPRINT); installed with the
//     other fast methods.
struct InplaceConfig {
  PyObject* operators_dict = nullptr;   // operators.__dict__ (the helpers, by name)
  PyObject* try_fast = nullptr;         // operators._try_fast_inplace, as mirrored
  PyObject* keeps_kind = nullptr;       // operators._keeps_kind, as mirrored
  PyObject* bump_version = nullptr;     // Tensor._bump_version, as mirrored
  PyObject* hooks_active = nullptr;     // saved_hooks.ACTIVE (a one-item list)
  PyTypeObject* extras = nullptr;       // _tensor._Extras
  Py_ssize_t extras_inference = 0;
  PyObject* counter_type = nullptr;     // VersionCounter
  Py_ssize_t counter_v = 0;
  PyObject* ufunc_kwnames = nullptr;    // ("out", "casting")
  PyObject* same_kind = nullptr;        // "same_kind"
};
InplaceConfig ic;
bool ic_ready = false;
PyObject* ic_refs = nullptr;  // keeps ic's objects alive

struct InplaceNames {
  PyObject* try_fast = PyUnicode_InternFromString("_try_fast_inplace");
  PyObject* keeps_kind = PyUnicode_InternFromString("_keeps_kind");
  PyObject* bump_version = PyUnicode_InternFromString("_bump_version");
};
const InplaceNames& ip_names() {
  static const InplaceNames* n = new InplaceNames();
  return *n;
}

// Whether the helpers the operator runs are still the objects mirrored.
bool inplace_unchanged() {
  const InplaceNames& n = ip_names();
  return class_attr(fc.tensor, n.bump_version) == ic.bump_version &&
         PyDict_GetItemWithError(ic.operators_dict, n.try_fast) == ic.try_fast &&
         PyDict_GetItemWithError(ic.operators_dict, n.keeps_kind) == ic.keeps_kind;
}

// `self._extra is not None and self._extra.inference` is false, and
// `_saved_hooks.ACTIVE[0]` is 0 or False: then _try_fast_inplace goes on.
bool no_inference_no_hooks(PyObject* self) {
  PyObject* extra = slot(self, fc.t.extra);
  if (extra == nullptr || (extra != Py_None && (Py_TYPE(extra) != ic.extras ||
                                                slot(extra, ic.extras_inference) != Py_False))) {
    return false;
  }
  PyObject* flag = PyList_GET_ITEM(ic.hooks_active, 0);
  return flag == Py_False || (PyLong_CheckExact(flag) && PyObject_IsTrue(flag) == 0);
}

// Tensor._bump_version -> _version_counter.bump(self); 0, or -1 with an error.
int bump_version(PyObject* self) {
  PyObject* counter = slot(self, fc.t.vc);
  if (counter == Py_None) {
    counter = PyObject_CallNoArgs(ic.counter_type);
    if (counter == nullptr) return -1;
    steal_slot(self, fc.t.vc, counter);
  }
  PyObject* v = slot(counter, ic.counter_v);
  static PyObject* one = PyLong_FromLong(1);
  PyObject* next = v == nullptr ? nullptr : PyNumber_Add(v, one);
  if (next == nullptr) {
    if (v == nullptr) PyErr_SetString(PyExc_AttributeError, "v");
    return -1;
  }
  steal_slot(counter, ic.counter_v, next);
  return 0;
}

// The checks of _try_fast_inplace that pass on the common path (no side effect).
bool inplace_common_case(PyObject* self, PyObject* other, PyArrayObject** arr,
                         PyArrayObject** value) {
  PyArrayObject* a = float_array(self);
  PyArrayObject* b = Py_TYPE(other) == fc.tensor ? float_array(other) : nullptr;
  if (a == nullptr || b == nullptr || PyArray_DESCR(a) != PyArray_DESCR(b)) return false;
  if (!inplace_unchanged() || dispatching()) return false;
  int grad = mode_flag(fn_names().grad_enabled);
  if (grad < 0) return false;
  if (grad && (slot(self, fc.t.requires_grad) == Py_True ||
               slot(other, fc.t.requires_grad) == Py_True)) {
    return false;
  }
  if (!no_inference_no_hooks(self) || !PyArray_ISWRITEABLE(a)) return false;
  PyObject* counter = slot(self, fc.t.vc);  // what bump_version reads: None or a counter
  if (counter == nullptr || (counter != Py_None && (Py_TYPE(counter) != reinterpret_cast<
                             PyTypeObject*>(ic.counter_type) || !slot(counter, ic.counter_v)))) {
    return false;
  }
  *arr = a;
  *value = b;
  return true;
}

PyObject* inplace_call(FastMethod* m, PyObject* const* args, size_t nargsf,
                       PyObject* kwnames) {
  PyArrayObject *arr, *value;
  if (!ic_ready || kwnames != nullptr || PyVectorcall_NARGS(nargsf) != 2 ||
      !inplace_common_case(args[0], args[1], &arr, &value)) {
    if (PyErr_Occurred() && !forgive_error()) return nullptr;
    return call_python(m, args, nargsf, kwnames);
  }
  PyObject* a = reinterpret_cast<PyObject*>(arr);
  PyObject* argv[] = {a, reinterpret_cast<PyObject*>(value), a, ic.same_kind};
  Ref written(PyObject_Vectorcall(m->ufunc, argv, 2, ic.ufunc_kwnames));
  if (!written) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError)) {
      return nullptr;
    }
    PyErr_Clear();
    return call_python(m, args, nargsf, kwnames);
  }
  if (bump_version(args[0]) < 0) return nullptr;
  Py_INCREF(args[0]);
  return args[0];
}

// --- forward-mode duals --------------------------------------------------------------
// Note [dual fast methods]
//     Inside a dual level the forward_ad layer's dispatcher is registered (Note
//     [dispatch slot]), so the fast methods above call the Python method, which goes
//     through apply_op and the layer's `dispatch` (chainrule_forward_ad/_tangents.py):
//     several Python frames per op of a forward-mode computation. When that
//     dispatcher is the only one, a FastMethod does what `dispatch` does itself:
//     - no level, or tangents paused (the JVP formulas run on Tensors, recorded, while
//       the level pauses): the op alone, as the fast path runs it without a dispatcher;
//     - a level, not batched, on `dispatch`'s raw path (Note [raw tangent path]): grad
//       mode off, or no input and no tangent requiring grad (the recorded path stays
//       Python); each tangent a bare ndarray or a Tensor (its array is read);
//     it reads the inputs' tangents from the level's dict (id -> (weak reference,
//     tangent)), runs the op as the fast path does (without tangents: exactly that),
//     and with a tangent runs the op's JVP program (Note [JVP programs] in
//     chainrule_forward_ad/_programs.py: the formula's ufunc and operator calls,
//     replayed by run_program) or, where there is none or its result is not a new
//     array of the output's shape and dtype, calls the layer's `_raw_tangent`; it
//     stores the tangent as Level.set_output does (a `_Ref` to the output, keyed by
//     its id, and for a recorded output also by its array), with Level._forget in C
//     as the reference's callback (forget_entry). Anything else, and an op whose raw
//     plan the layer has not made yet (`_RAW`), calls the Python method before any
//     work. The same holds under `recording_dispatch` (Note [untracked forward-over-
//     reverse] in _over_reverse.py), which records the op as usual and always takes
//     the raw path. Configured when the forward_ad layer is installed; fingerprinted
//     (_mirror.DUAL_FINGERPRINT): off while both dispatchers, `Level` and the tracing
//     of programs differ from the code mirrored.
struct DualConfig {
  PyObject* dispatchers = nullptr;  // _registry._DISPATCHERS (handle id -> fn)
  PyObject* dispatch = nullptr;     // the layer's dispatcher function
  PyObject* recording = nullptr;    // _over_reverse.recording_dispatch (Note [dual fast
                                    // methods], last paragraph)
  PyObject* current = nullptr;      // CURRENT, a one-item list: the Level or None
  PyObject* paused = nullptr;       // PAUSED (thread-local, attribute `on`)
  PyObject* raw_plans = nullptr;    // _RAW: op -> raw plan (a tuple) or False
  PyObject* raw_tangent = nullptr;  // _raw_tangent
  PyObject* ref_type = nullptr;     // _Ref
  PyObject* jvp_programs = nullptr; // _programs.jvp_programs (Note [JVP programs])
  Py_ssize_t ref_key = 0;           // _Ref's slot `key`
};
DualConfig dc;
unsigned long dc_gen = 0;           // bumped by each configure_dual_methods
bool dc_ready = false;
PyObject* dc_refs = nullptr;
PyObject* dual_hook = nullptr;  // chainrule_engine._configure_dual_methods (set_dual_hook)
bool dual_hooked = false;        // the hook ran (it runs once)

struct DualNames {
  PyObject* on = PyUnicode_InternFromString("on");
  PyObject* batch = PyUnicode_InternFromString("batch");
  PyObject* tangents = PyUnicode_InternFromString("tangents");
  PyObject* by_array = PyUnicode_InternFromString("by_array");
};
const DualNames& dual_names() {
  static const DualNames* n = new DualNames();
  return *n;
}

// Which of the layer's dispatchers is registered, alone.
enum class DualMode { kNone, kDispatch, kRecording };
DualMode dual_mode() {
  if (!PyDict_CheckExact(dc.dispatchers) || PyDict_GET_SIZE(dc.dispatchers) != 1) {
    return DualMode::kNone;
  }
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  if (!PyDict_Next(dc.dispatchers, &pos, &key, &value)) return DualMode::kNone;
  if (value == dc.dispatch) return DualMode::kDispatch;
  return value == dc.recording && value != nullptr ? DualMode::kRecording : DualMode::kNone;
}

// What the dispatcher does with the level it reads: kOff, run the op alone (no level,
// or tangents paused); kOn, the level (set in *level, borrowed) is active and not
// batched; kPython, anything else (batched, unexpected): the Python method decides.
enum class LevelState { kOff, kOn, kPython };
LevelState level_state(PyObject** level_out) {
  if (!PyList_CheckExact(dc.current) || PyList_GET_SIZE(dc.current) < 1) {
    return LevelState::kPython;
  }
  PyObject* level = PyList_GET_ITEM(dc.current, 0);
  if (level == Py_None) return LevelState::kOff;
  const DualNames& n = dual_names();
  thread_local ThreadLocalDict paused_dict;   // Note [thread-local reads]
  Ref on(local_attr(dc.paused, n.on, paused_dict));
  if (on && on.get() == Py_True) return LevelState::kOff;
  Ref batch(on && on.get() == Py_False ? PyObject_GetAttr(level, n.batch) : nullptr);
  if (!batch) {
    PyErr_Clear();
    return LevelState::kPython;
  }
  if (batch.get() != Py_None) return LevelState::kPython;
  *level_out = level;
  return LevelState::kOn;
}

// The tangent of `t` in `tangents` as an ndarray (borrowed) or Py_None; nullptr when
// the Python path must decide (anything unexpected, or a tangent that requires grad
// unless `any_tangent`: then its array is read, as the raw path does).
PyObject* tangent_array(PyObject* tangents, PyObject* t, bool any_tangent) {
  Ref key(PyLong_FromVoidPtr(t));
  PyObject* entry = key ? PyDict_GetItemWithError(tangents, key.get()) : nullptr;
  if (entry == nullptr) {
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return nullptr;
    }
    return Py_None;
  }
  if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2 ||
      !PyWeakref_Check(PyTuple_GET_ITEM(entry, 0))) {
    return nullptr;
  }
  if (PyWeakref_GetObject(PyTuple_GET_ITEM(entry, 0)) != t) return Py_None;
  PyObject* g = PyTuple_GET_ITEM(entry, 1);
  if (Py_TYPE(g) == &PyArray_Type) return g;
  if (Py_TYPE(g) != fc.tensor) return nullptr;
  PyObject* rg = slot(g, fc.t.requires_grad);
  if (rg != Py_False && !(any_tangent && rg == Py_True)) return nullptr;
  g = slot(g, fc.t.data);
  return g != nullptr && Py_TYPE(g) == &PyArray_Type ? g : nullptr;
}

// Level._forget for the entries stored here, in C (the weak reference's callback ran
// a Python frame per dead dual): `entry = tangents.get(ref.key)`; `if entry is not
// None and entry[0] is ref: del tangents[ref.key]`. Bound to the level's dict (a
// Level never replaces it).
PyObject* forget_entry(PyObject* tangents, PyObject* ref) {
  PyObject* key = PyObject_TypeCheck(ref, reinterpret_cast<PyTypeObject*>(dc.ref_type))
                      ? slot(ref, dc.ref_key) : nullptr;
  if (key == nullptr) {
    PyErr_SetString(PyExc_AttributeError, "key");
    return nullptr;
  }
  Ref held(Py_NewRef(key));
  PyObject* entry = PyDict_GetItemWithError(tangents, key);
  if (entry == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_NONE;
  }
  Ref first(PySequence_GetItem(entry, 0));
  if (!first) return nullptr;
  if (first.get() == ref && PyDict_DelItem(tangents, key) < 0) return nullptr;
  Py_RETURN_NONE;
}

PyMethodDef forget_def = {"_forget", forget_entry, METH_O,
                          "Drop a dead dual's tangent (Level._forget)."};

// The callback for the entries of `dict` (the level's `tangents` or `by_array`: their
// callbacks, Level._forget and Level._forget_array, are the same code); borrowed,
// cached for the current level's two dicts.
PyObject* forget_callback(PyObject* dict) {
  static PyObject* dicts[2] = {nullptr, nullptr};
  static PyObject* callbacks[2] = {nullptr, nullptr};
  static int next = 0;
  for (int i = 0; i < 2; ++i) {
    if (dicts[i] == dict) return callbacks[i];
  }
  PyObject* cb = PyCFunction_New(&forget_def, dict);
  if (cb == nullptr) return nullptr;
  Py_XSETREF(callbacks[next], cb);
  Py_XSETREF(dicts[next], Py_NewRef(dict));
  next = 1 - next;
  return cb;
}

// `dispatch`'s store: dict[id(obj)] = (_Ref(obj, <Level._forget>) with .key, r).
int store_tangent(PyObject* dict, PyObject* obj, PyObject* r) {
  PyObject* cb = forget_callback(dict);
  if (cb == nullptr) return -1;
  PyObject* args[] = {obj, cb};
  Ref ref(PyObject_Vectorcall(dc.ref_type, args, 2, nullptr));
  PyObject* key = ref ? PyLong_FromVoidPtr(obj) : nullptr;
  if (key == nullptr) return -1;
  steal_slot(ref.get(), dc.ref_key, key);
  Ref entry(PyTuple_Pack(2, ref.get(), r));
  return entry ? PyDict_SetItem(dict, key, entry.get()) : -1;
}

// Level.set_output: the store, and for a recorded output also by its array (the
// level's `by_array`, Note [tangent slot]).
int store_output_tangent(PyObject* level, PyObject* tangents, PyObject* out, PyObject* r) {
  if (store_tangent(tangents, out, r) < 0) return -1;
  if (slot(out, fc.t.grad_fn) == Py_None) return 0;
  Ref by_array(PyObject_GetAttr(level, dual_names().by_array));
  if (!by_array) return -1;
  if (!PyDict_CheckExact(by_array.get())) {
    PyErr_SetString(PyExc_TypeError, "Level.by_array is not a dict");
    return -1;
  }
  return store_tangent(by_array.get(), slot(out, fc.t.data), r);
}

// --- JVP programs (Note [JVP programs] in chainrule_forward_ad/_programs.py) ----------
constexpr int kMaxJvpRegisters = 32;          // _programs.MAX_REGISTERS
constexpr long kJvpCompare = 8;               // _programs.COMPARE

// The layer's programs for this method (made once per dual configuration); borrowed,
// nullptr (no error) when there are none.
PyObject* method_programs(FastMethod* m) {
  if (m->programs != nullptr && m->programs_gen == dc_gen) return m->programs;
  Py_CLEAR(m->programs);
  if (dc.jvp_programs == nullptr) return nullptr;
  Ref arity(PyLong_FromSsize_t(m->arity));
  PyObject* args[] = {m->op, m->attrs, arity.get()};
  PyObject* programs = arity ? PyObject_Vectorcall(dc.jvp_programs, args, 3, nullptr) : nullptr;
  if (programs == nullptr || !PyTuple_CheckExact(programs) ||
      PyTuple_GET_SIZE(programs) != (Py_ssize_t{1} << m->arity)) {
    Py_XDECREF(programs);
    PyErr_Clear();
    return nullptr;
  }
  m->programs = programs;
  m->programs_gen = dc_gen;
  return programs;
}

// One operator instruction: Python's number protocol, as the formula's `a * b` runs.
PyObject* jvp_operator(long code, PyObject* const* a, Py_ssize_t n) {
  if (code >= kJvpCompare && code < kJvpCompare + 6 && n == 2) {
    return PyObject_RichCompare(a[0], a[1], static_cast<int>(code - kJvpCompare));
  }
  if (n == 1) {
    if (code == 5) return PyNumber_Negative(a[0]);
    if (code == 6) return PyNumber_Positive(a[0]);
  } else if (n == 2) {
    switch (code) {
      case 0: return PyNumber_Add(a[0], a[1]);
      case 1: return PyNumber_Subtract(a[0], a[1]);
      case 2: return PyNumber_Multiply(a[0], a[1]);
      case 3: return PyNumber_TrueDivide(a[0], a[1]);
      case 4: return PyNumber_Power(a[0], a[1], Py_None);
    }
  }
  PyErr_SetString(PyExc_SystemError, "bad JVP program");
  return nullptr;
}

// Runs `program` on the registers' leaves (tangents, input arrays, the result): the
// tangent the formula computes, new reference, or nullptr with an error.
PyObject* run_program(PyObject* program, PyObject* const* leaves, Py_ssize_t nleaves) {
  PyObject* consts = PyTuple_GET_ITEM(program, 0);
  PyObject* code = PyTuple_GET_ITEM(program, 1);
  if (!PyTuple_CheckExact(consts) || !PyTuple_CheckExact(code)) {
    PyErr_SetString(PyExc_SystemError, "bad JVP program");
    return nullptr;
  }
  Py_ssize_t nconst = PyTuple_GET_SIZE(consts), ncode = PyTuple_GET_SIZE(code);
  Py_ssize_t first_temp = nleaves + nconst;
  if (first_temp + ncode > kMaxJvpRegisters) {
    PyErr_SetString(PyExc_SystemError, "bad JVP program");
    return nullptr;
  }
  PyObject* regs[kMaxJvpRegisters];
  for (Py_ssize_t i = 0; i < nleaves; ++i) regs[i] = leaves[i];
  for (Py_ssize_t i = 0; i < nconst; ++i) regs[nleaves + i] = PyTuple_GET_ITEM(consts, i);
  Py_ssize_t n = first_temp;
  PyObject* result = nullptr;
  for (Py_ssize_t k = 0; k < ncode; ++k) {
    PyObject* ins = PyTuple_GET_ITEM(code, k);
    Py_ssize_t nargs = PyTuple_CheckExact(ins) ? PyTuple_GET_SIZE(ins) - 1 : 0;
    PyObject* args[1 + 3];
    bool ok = nargs >= 1 && nargs <= 3;
    for (Py_ssize_t j = 0; ok && j < nargs; ++j) {
      Py_ssize_t r = PyLong_AsSsize_t(PyTuple_GET_ITEM(ins, j + 1));
      ok = r >= 0 && r < n && regs[r] != Py_None;
      if (ok) args[1 + j] = regs[r];
    }
    PyObject* fn = PyTuple_GET_ITEM(ins, 0);
    // an extra reference on each operand: a temporary held only by its register must
    // not look like one NumPy may overwrite (its temporary elision); a later
    // instruction may read it, as the formula's variable would be read
    for (Py_ssize_t j = 0; ok && j < nargs; ++j) Py_INCREF(args[1 + j]);
    PyObject* value = !ok ? nullptr
        : PyLong_CheckExact(fn) ? jvp_operator(PyLong_AsLong(fn), args + 1, nargs)
        : PyObject_Vectorcall(fn, args + 1, nargs | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
    for (Py_ssize_t j = 0; ok && j < nargs; ++j) Py_DECREF(args[1 + j]);
    if (value == nullptr) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "bad JVP program");
      break;
    }
    regs[n++] = value;
  }
  if (n == first_temp + ncode) {
    Py_ssize_t r = PyLong_AsSsize_t(PyTuple_GET_ITEM(program, 2));
    if (r >= first_temp && r < n) result = Py_NewRef(regs[r]);
    else PyErr_SetString(PyExc_SystemError, "bad JVP program");
  }
  for (Py_ssize_t i = first_temp; i < n; ++i) Py_DECREF(regs[i]);
  return result;
}

// What _raw_tangent accepts as is: a new ndarray of the output's shape and dtype.
bool fits_output(PyObject* r, PyArrayObject* data) {
  if (Py_TYPE(r) != &PyArray_Type) return false;
  PyArrayObject* a = reinterpret_cast<PyArrayObject*>(r);
  int nd = PyArray_NDIM(a);
  if (nd != PyArray_NDIM(data) || PyArray_BASE(a) != nullptr) return false;
  for (int i = 0; i < nd; ++i) {
    if (PyArray_DIM(a, i) != PyArray_DIM(data, i)) return false;
  }
  return PyArray_EquivTypes(PyArray_DESCR(a), PyArray_DESCR(data));
}

// The output's tangent by its JVP program (Note [JVP programs]): new reference;
// Py_None (new) when the raw path must run instead (no program, a 0-d output, whose
// ufuncs give NumPy scalars, or a result _raw_tangent would adjust), nullptr with
// an error. With a missing tangent a TypeError or AttributeError also sends it to
// the raw path, which then retries with real zeros (Note [symbolic zero tangents]).
PyObject* program_tangent(FastMethod* m, PyObject* const* inputs, PyObject* out,
                          PyObject* const* t, bool missing) {
  PyObject* out_arr = Py_TYPE(out) == fc.tensor ? slot(out, fc.t.data) : nullptr;
  if (out_arr == nullptr || Py_TYPE(out_arr) != &PyArray_Type) Py_RETURN_NONE;
  PyArrayObject* data = reinterpret_cast<PyArrayObject*>(out_arr);
  if (PyArray_NDIM(data) == 0) Py_RETURN_NONE;
  PyObject* programs = method_programs(m);
  Py_ssize_t mask = 0;
  for (Py_ssize_t i = 0; i < m->arity; ++i) mask |= t[i] != Py_None ? Py_ssize_t{1} << i : 0;
  PyObject* program = programs != nullptr ? PyTuple_GET_ITEM(programs, mask) : Py_None;
  if (!PyTuple_CheckExact(program) || PyTuple_GET_SIZE(program) != 3) Py_RETURN_NONE;
  PyObject* leaves[2 * 2 + 1];
  for (Py_ssize_t i = 0; i < m->arity; ++i) {
    leaves[i] = t[i];
    leaves[m->arity + i] = slot(inputs[i], fc.t.data);
  }
  leaves[2 * m->arity] = out_arr;
  Ref held(Py_NewRef(program)), held_out(Py_NewRef(out_arr));
  PyObject* r = run_program(program, leaves, 2 * m->arity + 1);
  if (r == nullptr) {
    if (!missing || (!PyErr_ExceptionMatches(PyExc_TypeError) &&
                     !PyErr_ExceptionMatches(PyExc_AttributeError))) {
      return nullptr;
    }
    PyErr_Clear();
    Py_RETURN_NONE;
  }
  if (fits_output(r, data)) return r;
  Py_DECREF(r);
  Py_RETURN_NONE;
}

// _raw_tangent(raw, inputs, attrs, out, t, missing, False). New reference or nullptr.
PyObject* raw_path_tangent(FastMethod* m, PyObject* raw, PyObject* const* inputs,
                           PyObject* out, PyObject* const* t, bool missing) {
  Ref in_tuple(m->arity == 1 ? PyTuple_Pack(1, inputs[0]) : PyTuple_Pack(2, inputs[0], inputs[1]));
  Ref t_list(in_tuple ? PyList_New(m->arity) : nullptr);
  if (!t_list) return nullptr;
  for (Py_ssize_t i = 0; i < m->arity; ++i) PyList_SET_ITEM(t_list.get(), i, Py_NewRef(t[i]));
  PyObject* argv[] = {raw, in_tuple.get(), m->attrs, out, t_list.get(),
                      missing ? Py_True : Py_False, Py_False};
  return PyObject_Vectorcall(dc.raw_tangent, argv, 7, nullptr);
}

// The op on inputs that carry tangents (`t`, ndarrays or None), then the output's
// tangent by its JVP program or the layer's _raw_tangent. New reference or nullptr with an error;
// *handled false (no error, no work done) when the Python method must run.
PyObject* dual_apply(FastMethod* m, PyObject* level, PyObject* tangents,
                     PyObject* const* inputs, PyObject* const* t, bool missing,
                     bool* handled) {
  PyObject* raw = PyDict_GetItemWithError(dc.raw_plans, m->op);
  if (raw == nullptr || !PyTuple_CheckExact(raw)) {
    PyErr_Clear();
    *handled = false;
    return nullptr;
  }
  Ref held_raw(Py_NewRef(raw));
  Ref out_arr(run_forward(m, inputs, m->attrs));
  if (!out_arr) {
    *handled = !forgive_error();
    return nullptr;
  }
  Ref out(finish(m, inputs, m->attrs, out_arr.get()));
  if (!out) return nullptr;
  Ref r(program_tangent(m, inputs, out.get(), t, missing));
  if (!r) return nullptr;
  if (r.get() == Py_None) r = Ref(raw_path_tangent(m, raw, inputs, out.get(), t, missing));
  if (!r) return nullptr;
  if (r.get() != Py_None && store_output_tangent(level, tangents, out.get(), r.get()) < 0) {
    return nullptr;
  }
  return out.release();
}


// The first time the only dispatcher is the forward_ad layer's (its function's
// __module__), the engine's hook configures this path (importing no layer before:
// core's test_layers). False while it is not configured.
bool dual_configured() {
  if (dc_ready) return true;
  if (dual_hooked || dual_hook == nullptr) return false;
  PyObject* table = PyDict_GetItemString(fc.registry_dict, "_DISPATCHERS");
  if (table == nullptr || !PyDict_CheckExact(table) || PyDict_GET_SIZE(table) != 1) return false;
  Py_ssize_t pos = 0;
  PyObject *key, *fn;
  if (!PyDict_Next(table, &pos, &key, &fn)) return false;
  Ref module(PyObject_GetAttrString(fn, "__module__"));
  if (!module || !PyUnicode_Check(module.get()) ||
      (PyUnicode_CompareWithASCIIString(module.get(), "chainrule_forward_ad._tangents") != 0 &&
       PyUnicode_CompareWithASCIIString(module.get(), "chainrule_forward_ad._over_reverse") != 0)) {
    PyErr_Clear();
    return false;
  }
  dual_hooked = true;
  Ref done(PyObject_CallNoArgs(dual_hook));
  if (!done) PyErr_Clear();          // not configured: the Python path, as before
  return dc_ready;
}

// The op as the dispatcher's `run` (run_op) does it: the fast path's forward and
// finish. *handled false when the Python method must run.
PyObject* plain_call(FastMethod* m, PyObject* const* inputs, bool* handled) {
  Ref out(run_forward(m, inputs, m->attrs));
  if (!out) {
    *handled = !forgive_error();
    return nullptr;
  }
  *handled = true;
  return finish(m, inputs, m->attrs, out.get());
}

// Whether the dispatcher takes its raw path (Note [raw tangent path]) for these
// inputs: `dispatch` does unless grad mode is on and an input or a tangent requires
// grad; `recording_dispatch` always does (its level is never batched here). With no
// input requiring grad (plain forward mode) grad mode is not read, and a tangent that
// requires grad makes tangent_array decline (*any_tangent false): Python decides.
// -1: an error.
int raw_path_for(DualMode mode, PyObject* const* inputs, Py_ssize_t arity, bool* any_tangent) {
  *any_tangent = true;
  if (mode == DualMode::kRecording) return 1;
  bool requires_grad = false;
  for (Py_ssize_t i = 0; i < arity; ++i) {
    requires_grad = requires_grad || slot(inputs[i], fc.t.requires_grad) != Py_False;
  }
  *any_tangent = false;
  if (!requires_grad) return 1;
  int grad = mode_flag(fn_names().grad_enabled);
  if (grad != 0) return grad < 0 ? -1 : 0;    // grad mode on: the recorded path, Python
  *any_tangent = true;
  return 1;
}

// fast_call while a dispatcher is registered. *handled false: call the Python method.
PyObject* dual_call(FastMethod* m, PyObject* const* args, bool* handled) {
  *handled = false;
  if (m->ufunc != nullptr || !dual_configured()) return nullptr;
  DualMode mode = dual_mode();
  PyObject* level = nullptr;
  LevelState state = mode == DualMode::kNone ? LevelState::kPython : level_state(&level);
  PyArrayObject* a = state != LevelState::kPython ? float_array(args[0]) : nullptr;
  if (a == nullptr) return nullptr;
  PyObject* inputs[2] = {args[0], nullptr};
  Ref other;
  if (m->arity == 2) {
    other = Ref(other_operand(a, args[1]));
    if (!other) {
      *handled = !forgive_error();
      return nullptr;
    }
    inputs[1] = other.get();
  }
  if (state == LevelState::kOff) return plain_call(m, inputs, handled);
  bool any_tangent;
  int raw = raw_path_for(mode, inputs, m->arity, &any_tangent);
  if (raw <= 0) {
    if (raw < 0) *handled = !forgive_error();
    return nullptr;
  }
  Ref tangents(PyObject_GetAttr(level, dual_names().tangents));
  if (!tangents || !PyDict_CheckExact(tangents.get())) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* t[2] = {Py_None, Py_None};
  Ref held[2];                       // the dict's entries may change while Python runs
  bool found = false, missing = false;
  for (Py_ssize_t i = 0; i < m->arity; ++i) {
    t[i] = tangent_array(tangents.get(), inputs[i], any_tangent);
    if (t[i] == nullptr) return nullptr;
    held[i] = Ref(Py_NewRef(t[i]));
    found = found || t[i] != Py_None;
    missing = missing || t[i] == Py_None;
  }
  if (!found) return plain_call(m, inputs, handled);   // as `dispatch` runs it
  *handled = true;
  Ref keep_level(Py_NewRef(level));
  return dual_apply(m, level, tangents.get(), inputs, t, missing, handled);
}

PyObject* scalar_call(FastMethod* m, PyObject* const* args, size_t nargsf, PyObject* kwnames);

// Whether the keyword arguments are only `keyword=None` (how the dispatching wrapper
// passes a keyword-only parameter on): the same as not giving it.
bool unset_keyword(PyObject* kwnames, PyObject* const* values, PyObject* keyword) {
  return keyword != nullptr && PyTuple_GET_SIZE(kwnames) == 1 && values[0] == Py_None &&
         PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, 0), keyword) == 0;
}

PyObject* fast_call(PyObject* callable, PyObject* const* args, size_t nargsf,
                    PyObject* kwnames) {
  FastMethod* m = reinterpret_cast<FastMethod*>(callable);
  if (m->view != nullptr) {                     // Note [view methods]
    bool handled = false;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject* result = kwnames == nullptr || unset_keyword(kwnames, args + nargs, m->view_keyword)
        ? m->view(m->op, args, nargs, &handled) : nullptr;
    return handled ? result : call_python(m, args, nargsf, kwnames);
  }
  if (m->ufunc != nullptr) return inplace_call(m, args, nargsf, kwnames);
  if (m->scalar) return scalar_call(m, args, nargsf, kwnames);
  if (!fc_ready || kwnames != nullptr || PyVectorcall_NARGS(nargsf) != m->arity) {
    return call_python(m, args, nargsf, kwnames);
  }
  if (dispatching()) {               // Note [dual fast methods]
    bool handled;
    PyObject* result = dual_call(m, args, &handled);
    return handled ? result : call_python(m, args, nargsf, kwnames);
  }
  PyArrayObject* a = float_array(args[0]);
  if (a == nullptr) return call_python(m, args, nargsf, kwnames);
  PyObject* inputs[2] = {args[0], nullptr};
  Ref other;
  if (m->arity == 2) {
    other = Ref(other_operand(a, args[1]));
    if (!other && !forgive_error()) return nullptr;
    if (!other) return call_python(m, args, nargsf, kwnames);
    inputs[1] = other.get();
  }
  Ref out(run_forward(m, inputs, m->attrs));
  if (!out) return forgive_error() ? call_python(m, args, nargsf, kwnames) : nullptr;
  return finish(m, inputs, m->attrs, out.get());
}

// --- kind "scalar" -------------------------------------------------------------------
// Note [scalar fast methods]
//     `x ** 2` and `x.pow(0.5)` are one table op whose attr is the Python number
//     (elementwise.pow: `apply_op(POW_SCALAR, (base,), {"exponent": exponent})`,
//     where `base = _meeting_scalar(input, exponent)` is the input itself for a float
//     or complex tensor and an int or float number). A FastMethod of kind "scalar"
//     does that case: self exactly Tensor holding a float or complex ndarray, the
//     number exactly float or int (a bool, a complex number or a Tensor: Python),
//     no dispatcher registered; the attrs are a new dict per call (the node keeps
//     them), then the forward and apply_op's steps as for the other kinds.
PyObject* scalar_call(FastMethod* m, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  PyObject* number = PyVectorcall_NARGS(nargsf) == 2 ? args[1] : nullptr;
  if (!fc_ready || kwnames != nullptr || number == nullptr || dispatching() ||
      float_array(args[0]) == nullptr ||
      !(PyFloat_CheckExact(number) || PyLong_CheckExact(number))) {
    if (PyErr_Occurred() && !forgive_error()) return nullptr;
    return call_python(m, args, nargsf, kwnames);
  }
  Ref attrs(PyDict_New());
  if (!attrs || PyDict_SetItem(attrs.get(), PyTuple_GET_ITEM(m->attr_names, 0), number) < 0) {
    return nullptr;
  }
  PyObject* inputs[1] = {args[0]};
  Ref out(run_forward(m, inputs, attrs.get()));
  if (!out) return forgive_error() ? call_python(m, args, nargsf, kwnames) : nullptr;
  return finish(m, inputs, attrs.get(), out.get());
}

// --- the type ------------------------------------------------------------------------

// Kind "view": the entry named by attrs["method"] (Note [view methods]) and the name
// of its keyword-only parameter (nullptr: none); nullptr for an unknown method.
ViewEntry view_method(PyObject* attrs, PyObject** keyword) {
  PyObject* name = PyDict_GetItemString(attrs, "method");
  const char* s = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
  if (s == nullptr) PyErr_Clear();
  const char* kw = nullptr;
  ViewEntry entry = s ? view_entry(s, &kw) : nullptr;
  *keyword = kw ? PyUnicode_InternFromString(kw) : nullptr;
  return entry;
}

PyObject* fm_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  static const char* kwlist[] = {"kind", "op", "attrs", "python_fn", "inplace", nullptr};
  const char* kind;
  PyObject *op, *attrs, *fn, *inplace = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "sOO!O|O:FastMethod",
                                   const_cast<char**>(kwlist), &kind, &op, &PyDict_Type,
                                   &attrs, &fn, &inplace)) {
    return nullptr;
  }
  std::string k(kind);
  Py_ssize_t arity = k == "unary" || k == "scalar" || k == "view" ? 1
                     : k == "binary" || k == "inplace" ? 2 : 0;
  PyObject* view_keyword = nullptr;
  ViewEntry view = k == "view" ? view_method(attrs, &view_keyword) : nullptr;
  // inplace: the operator's ufunc (Note [in-place fast methods])
  bool inplace_ok = k == "inplace" ? PyCallable_Check(inplace) && PyDict_GET_SIZE(attrs) == 0
                                   : inplace == Py_None;
  bool attrs_ok = k == "scalar" ? PyDict_GET_SIZE(attrs) == 1   // the number's name
                                : PyDict_GET_SIZE(attrs) <= kMaxAttrs;
  if (arity == 0 || !inplace_ok || !attrs_ok || !PyCallable_Check(fn) ||
      (k == "view" && view == nullptr)) {
    PyErr_Format(PyExc_ValueError, "FastMethod: unsupported method (kind %s)", kind);
    return nullptr;
  }
  Ref names(PyDict_Keys(attrs));
  if (!names) return nullptr;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names.get()); ++i) {
    if (!PyUnicode_CheckExact(PyList_GET_ITEM(names.get(), i))) {
      PyErr_SetString(PyExc_ValueError, "FastMethod: attrs keys must be str");
      return nullptr;
    }
  }
  Ref kwnames(PyList_AsTuple(names.get()));
  if (!kwnames) return nullptr;
  FastMethod* m = reinterpret_cast<FastMethod*>(type->tp_alloc(type, 0));
  if (m == nullptr) return nullptr;
  m->vectorcall = fast_call;
  m->arity = arity;
  m->scalar = k == "scalar";
  Py_INCREF(op);
  Py_INCREF(attrs);
  Py_INCREF(fn);
  m->op = op;
  m->attrs = attrs;
  m->attr_names = kwnames.release();
  m->python_fn = fn;
  m->ufunc = inplace != Py_None ? Py_NewRef(inplace) : nullptr;
  m->programs = nullptr;
  m->programs_gen = 0;
  m->view = view;
  m->view_keyword = view_keyword;
  return reinterpret_cast<PyObject*>(m);
}

int fm_traverse(PyObject* self, visitproc visit, void* arg) {
  FastMethod* m = reinterpret_cast<FastMethod*>(self);
  Py_VISIT(m->op);
  Py_VISIT(m->attrs);
  Py_VISIT(m->attr_names);
  Py_VISIT(m->python_fn);
  Py_VISIT(m->ufunc);
  Py_VISIT(m->programs);
  return 0;
}

int fm_clear(PyObject* self) {
  FastMethod* m = reinterpret_cast<FastMethod*>(self);
  Py_CLEAR(m->op);
  Py_CLEAR(m->attrs);
  Py_CLEAR(m->attr_names);
  Py_CLEAR(m->python_fn);
  Py_CLEAR(m->ufunc);
  Py_CLEAR(m->programs);
  Py_CLEAR(m->view_keyword);
  return 0;
}

void fm_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  fm_clear(self);
  Py_TYPE(self)->tp_free(self);
}

// Tensor.sin is the descriptor itself; t.sin a bound method (like a function).
PyObject* fm_descr_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

PyObject* fm_repr(PyObject* self) {
  FastMethod* m = reinterpret_cast<FastMethod*>(self);
  return PyUnicode_FromFormat("<chainrule_engine fast method %R>", m->python_fn);
}

// __doc__, __name__, ... are the Python function's (help() and doctests see it).
PyObject* fm_forward_attr(PyObject* self, void* name) {
  FastMethod* m = reinterpret_cast<FastMethod*>(self);
  if (m->python_fn == nullptr) Py_RETURN_NONE;
  return PyObject_GetAttrString(m->python_fn, static_cast<const char*>(name));
}

PyObject* fm_wrapped(PyObject* self, void*) {
  FastMethod* m = reinterpret_cast<FastMethod*>(self);
  PyObject* fn = m->python_fn != nullptr ? m->python_fn : Py_None;
  Py_INCREF(fn);
  return fn;
}

PyObject* fm_get_op(PyObject* self, void*) {
  PyObject* op = reinterpret_cast<FastMethod*>(self)->op;
  Py_INCREF(op != nullptr ? op : Py_None);
  return op != nullptr ? op : Py_None;
}

PyGetSetDef fm_getset[] = {
    {"__doc__", fm_forward_attr, nullptr, nullptr, const_cast<char*>("__doc__")},
    {"__name__", fm_forward_attr, nullptr, nullptr, const_cast<char*>("__name__")},
    {"__qualname__", fm_forward_attr, nullptr, nullptr, const_cast<char*>("__qualname__")},
    {"__module__", fm_forward_attr, nullptr, nullptr, const_cast<char*>("__module__")},
    {"__wrapped__", fm_wrapped, nullptr, nullptr, nullptr},
    {"op", fm_get_op, nullptr, const_cast<char*>("the OpDef it runs"), nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject FastMethodType{};

void init_type() {
  PyTypeObject& t = FastMethodType;
  Py_SET_REFCNT(reinterpret_cast<PyObject*>(&t), 1);  // PyVarObject_HEAD_INIT(nullptr, 0)
  t.tp_name = "chainrule_engine._engine.FastMethod";
  t.tp_basicsize = sizeof(FastMethod);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
               Py_TPFLAGS_METHOD_DESCRIPTOR;
  t.tp_vectorcall_offset = offsetof(FastMethod, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_new = fm_new;
  t.tp_dealloc = fm_dealloc;
  t.tp_traverse = fm_traverse;
  t.tp_clear = fm_clear;
  t.tp_descr_get = fm_descr_get;
  t.tp_repr = fm_repr;
  t.tp_getset = fm_getset;
}

}  // namespace

void add_fast_method_type(PyObject* module) {
  init_type();
  if (PyType_Ready(&FastMethodType) < 0) throw_python_error();
  if (PyModule_AddType(module, &FastMethodType) < 0) throw_python_error();
  fn_names();
}

void configure_fast_methods(py::object tensor_type, py::object registry, py::object common,
                            py::object grad_state, py::object record_fn) {
  py::object registry_dict = registry.attr("__dict__");
  py::object common_dict = common.attr("__dict__");
  PyObject* T = tensor_type.ptr();
  FastConfig c;
  c.tensor = reinterpret_cast<PyTypeObject*>(T);
  c.registry_dict = registry_dict.ptr();
  c.common_dict = common_dict.ptr();
  c.grad_state = grad_state.ptr();
  c.record_fn = record_fn.ptr();
  c.t = tensor_slots(T);
  py::tuple keep = py::make_tuple(tensor_type, registry_dict, common_dict, grad_state, record_fn);
  PyObject* old = fc_refs;
  fc_refs = keep.release().ptr();
  fc = c;
  fc_ready = true;
  Py_XDECREF(old);
}

void set_dual_hook(py::object hook) {
  PyObject* old = dual_hook;
  dual_hook = hook.is_none() ? nullptr : hook.release().ptr();
  dual_hooked = false;
  Py_XDECREF(old);
}

void configure_dual_methods(bool enabled, py::object dispatchers, py::object dispatch,
                            py::object recording, py::object current, py::object paused, py::object raw_plans,
                            py::object raw_tangent, py::object ref_type,
                            py::object jvp_programs) {
  DualConfig c;
  c.dispatchers = dispatchers.ptr();
  c.dispatch = dispatch.ptr();
  c.recording = recording.is_none() ? nullptr : recording.ptr();
  c.current = current.ptr();
  c.paused = paused.ptr();
  c.raw_plans = raw_plans.ptr();
  c.raw_tangent = raw_tangent.ptr();
  c.ref_type = ref_type.ptr();
  c.ref_key = member_offset(ref_type.ptr(), "key");
  c.jvp_programs = jvp_programs.is_none() ? nullptr : jvp_programs.ptr();
  py::tuple keep = py::make_tuple(dispatchers, dispatch, recording, current, paused,
                                  raw_plans, raw_tangent, ref_type, jvp_programs);
  dual_names();
  PyObject* old = dc_refs;
  dc_refs = keep.release().ptr();
  dc = c;
  ++dc_gen;
  dc_ready = enabled && fc_ready;
  Py_XDECREF(old);
}

void configure_inplace_methods(py::object operators, py::object bump_version,
                               py::object hooks_active, py::object extras_type,
                               py::object counter_type) {
  if (!PyList_CheckExact(hooks_active.ptr()) || PyList_GET_SIZE(hooks_active.ptr()) < 1) {
    throw std::runtime_error("inplace methods: hooks_active must be a one-item list");
  }
  py::object operators_dict = operators.attr("__dict__");
  py::object try_fast = operators.attr("_try_fast_inplace");
  py::object keeps_kind = operators.attr("_keeps_kind");
  py::object kwnames = py::make_tuple("out", "casting");
  py::str same_kind("same_kind");
  InplaceConfig c;
  c.operators_dict = operators_dict.ptr();
  c.try_fast = try_fast.ptr();
  c.keeps_kind = keeps_kind.ptr();
  c.bump_version = bump_version.ptr();
  c.hooks_active = hooks_active.ptr();
  c.extras = reinterpret_cast<PyTypeObject*>(extras_type.ptr());
  c.extras_inference = member_offset(extras_type.ptr(), "inference");
  c.counter_type = counter_type.ptr();
  c.counter_v = member_offset(counter_type.ptr(), "v");
  c.ufunc_kwnames = kwnames.ptr();
  c.same_kind = same_kind.ptr();
  py::tuple keep = py::make_tuple(operators_dict, try_fast, keeps_kind, bump_version,
                                  hooks_active, extras_type, counter_type, kwnames, same_kind);
  ip_names();
  PyObject* old = ic_refs;
  ic_refs = keep.release().ptr();
  ic = c;
  ic_ready = fc_ready;
  Py_XDECREF(old);
}

}  // namespace chainrule_engine
