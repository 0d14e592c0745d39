#define PY_ARRAY_UNIQUE_SYMBOL chainrule_engine_ARRAY_API
#define NO_IMPORT_ARRAY
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "recorder.h"

#include <structmember.h>

#include <numpy/arrayobject.h>

#include <stdexcept>
#include <string>
#include <unordered_map>

namespace chainrule_engine {

PyObject* local_attr(PyObject* local, PyObject* name, ThreadLocalDict& cache) {
  PyThreadState* tstate = PyThreadState_Get();
  if (cache.local != local || cache.tstate != tstate || cache.tstate_id != tstate->id) {
    static PyObject* dict_name = PyUnicode_InternFromString("__dict__");
    Ref dict(PyObject_GetAttr(local, dict_name));
    if (!dict || !PyDict_CheckExact(dict.get())) {
      PyErr_Clear();
      return PyObject_GetAttr(local, name);
    }
    cache = {local, tstate, tstate->id, dict.get()};  // borrowed (Note [thread-local reads])
  }
  PyObject* value = PyDict_GetItemWithError(cache.dict, name);
  if (value != nullptr) {
    Py_INCREF(value);
    return value;
  }
  return PyErr_Occurred() ? nullptr : PyObject_GetAttr(local, name);
}

namespace {

// Byte offsets of the __slots__ the recorder reads and writes.
struct NodeSlots {
  Py_ssize_t next, seq, saved, attrs, in_meta, out_meta;
};
struct SavedSlots {
  Py_ssize_t data, tensor, counter, version, output_nr;
};

struct Config {
  bool enabled = false;
  PyObject* python_record = nullptr;  // _registry._record
  PyObject* registry_dict = nullptr;  // _registry.__dict__ (_sequence, grad_accumulator)
  PyTypeObject* tensor = nullptr;
  PyTypeObject* op_node = nullptr;
  PyTypeObject* saved = nullptr;
  PyTypeObject* counter = nullptr;
  PyTypeObject* extras = nullptr;     // _tensor._Extras
  PyObject* anomaly_state = nullptr;  // anomaly_mode.STATE
  PyObject* hooks_active = nullptr;   // saved_hooks.ACTIVE (a one-item list)
  PyObject* node_dict = nullptr;      // autograd/node.py's __dict__ (Note [leaf records])
  PyObject* grad_accumulator = nullptr;  // node.grad_accumulator, the function mirrored
  PyTypeObject* accumulate_grad = nullptr;
  PyObject* guard_dict = nullptr;     // saved_guard.__dict__ (Note [saved exported leaves])
  PyObject* lock_arrays = nullptr;    // saved_guard.lock_arrays, the function mirrored
  PyTypeObject* locked_saved = nullptr;  // LockedSavedTensor
  TensorSlots t{};
  NodeSlots n{};
  SavedSlots s{};
  Py_ssize_t counter_v = 0;
  Py_ssize_t acc_next = 0, acc_seq = 0, acc_variable = 0;  // AccumulateGrad's slots
  Py_ssize_t extras_grad_acc = 0, extras_inference = 0, extras_exported = 0, extras_memory = 0;
};
Config cfg;
PyObject* cfg_refs = nullptr;  // keeps cfg's objects alive

struct RecNames {
  PyObject* node_cls = PyUnicode_InternFromString("node_cls");
  PyObject* multi_output = PyUnicode_InternFromString("multi_output");
  PyObject* differentiable = PyUnicode_InternFromString("differentiable");
  PyObject* plans = PyUnicode_InternFromString("plans");
  PyObject* saved_plan = PyUnicode_InternFromString("saved_plan");
  PyObject* sequence = PyUnicode_InternFromString("_sequence");
  PyObject* grad_accumulator = PyUnicode_InternFromString("grad_accumulator");
  PyObject* result = PyUnicode_InternFromString("result");
  PyObject* accumulate_grad = PyUnicode_InternFromString("AccumulateGrad");
  PyObject* max_sequence = PyUnicode_InternFromString("MAX_SEQUENCE");
  PyObject* locks = PyUnicode_InternFromString("_LOCKS");
  PyObject* mutex = PyUnicode_InternFromString("_MUTEX");
  PyObject* lock_arrays = PyUnicode_InternFromString("lock_arrays");
  PyObject* locked = PyUnicode_InternFromString("locked");
  PyObject* get = PyUnicode_InternFromString("get");
  PyObject* setflags = PyUnicode_InternFromString("setflags");
};
const RecNames& rn() {
  static const RecNames* n = new RecNames();
  return *n;
}

// A new instance, every slot unset (new_instance in slots.h); throws on error.
PyObject* new_object(PyTypeObject* type) { return check(new_instance(type)); }

// VersionCounter(): its __init__ sets v = 0. Note [untracked records]
PyObject* new_counter() {
  PyObject* counter = new_object(cfg.counter);
  steal_slot(counter, cfg.counter_v, PyLong_FromLong(0));
  if (PyObject_GC_IsTracked(counter)) PyObject_GC_UnTrack(counter);
  return counter;
}

// tensor._vc, created when missing (SavedTensor.__init__). Borrowed.
PyObject* counter_of(PyObject* tensor) {
  PyObject* counter = slot(tensor, cfg.t.vc);
  if (counter != Py_None) return counter;
  steal_slot(tensor, cfg.t.vc, new_counter());
  return slot(tensor, cfg.t.vc);
}

bool hooks_active() {
  PyObject* flag = PyList_GET_ITEM(cfg.hooks_active, 0);
  return flag != Py_False && (flag == Py_True || PyObject_IsTrue(flag) != 0);
}

// SavedTensor(tensor, is_output, 0) for a tensor with no extras and no base, while
// no saved-tensor hooks are active: __init__ then only fills its slots.
PyObject* new_saved(PyObject* tensor, bool is_output) {
  Ref saved(new_object(cfg.saved));
  PyObject* counter = counter_of(tensor);
  set_slot(saved.get(), cfg.s.data, slot(tensor, cfg.t.data));
  set_slot(saved.get(), cfg.s.counter, counter);
  set_slot(saved.get(), cfg.s.version, slot(counter, cfg.counter_v));
  set_slot(saved.get(), cfg.s.tensor, is_output ? Py_None : tensor);
  steal_slot(saved.get(), cfg.s.output_nr, PyLong_FromLong(0));
  if (is_output) PyObject_GC_UnTrack(saved.get());  // Note [untracked records]
  return saved.release();
}

// The saved dict leaves the collector's list when every value in it did (a dict of
// saved outputs only). Note [untracked records]
void untrack_if_leaves_only(PyObject* saved) {
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(saved, &pos, &key, &value)) {
    if (PyObject_GC_IsTracked(value)) return;
  }
  if (PyObject_GC_IsTracked(saved)) PyObject_GC_UnTrack(saved);
}

// Extras that change nothing in SavedTensor.__init__ but, maybe, the export lock:
// not an inference tensor (Note [leaf records]), not a detached tensor (its memory is
// another tensor's: memory_root). `exported` is set to its flag.
bool plain_extras(PyObject* extra, bool* exported) {
  *exported = false;
  if (extra == Py_None) return true;
  if (Py_TYPE(extra) != cfg.extras || slot(extra, cfg.extras_inference) != Py_False ||
      slot(extra, cfg.extras_memory) != Py_None) {
    return false;
  }
  PyObject* flag = slot(extra, cfg.extras_exported);
  *exported = flag == Py_True;
  return flag == Py_True || flag == Py_False;
}

PyObject* guard_global(PyObject* name) {
  PyObject* value = PyDict_GetItemWithError(cfg.guard_dict, name);
  if (value == nullptr) {
    if (!PyErr_Occurred()) PyErr_SetObject(PyExc_NameError, name);
    throw_python_error();
  }
  return value;
}

// Note [saved exported leaves]
//     The input of a training step is usually handed in (`from_numpy`), so it is
//     exported (Note [read-only saved arrays] in saved_guard.py) and its SavedTensor
//     locks its array: SavedTensor.__init__, is_exported, lock_arrays and _arrays
//     in Python, every step. For a tensor without base (one array) this is done here
//     with lock_arrays' steps under its `_MUTEX`: the `_LOCKS` entry of id(arr) is
//     counted up, or the array, if writeable, is made read-only (`setflags(False)`,
//     what `flags.writeable = False` runs) and entered with count 1; the arrays
//     locked become the `locked` attribute of a LockedSavedTensor (made as one:
//     `__slots__ = ()`, the same layout, as the class assignment of __init__
//     requires). Only while `saved_guard.lock_arrays` is the function mirrored;
//     lock_arrays, _arrays and LockedSavedTensor are fingerprinted with the recorder.
//     The other half, LockedSavedTensor.__del__'s `unlock_arrays` (once per saved
//     tensor, in the backward), is `unlock_arrays` below, installed in core's unlock
//     slot (Note [unlock slot] in saved_guard.py) with the recorder: the same steps
//     under the same mutex (the count down, the entry removed at 0 and the array made
//     writeable with `setflags(True)`, a ValueError ignored as by _set_writeable).

// lock_arrays' loop for one array, the mutex held: 0, or -1 with an error.
int lock_array_held(PyObject* locks, PyObject* arr, PyObject* locked) {
  Ref key(PyLong_FromVoidPtr(arr));  // id(arr)
  if (!key) return -1;
  Ref entry(PyDict_CheckExact(locks)
                ? Py_XNewRef(PyDict_GetItemWithError(locks, key.get()))
                : PyObject_CallMethodOneArg(locks, rn().get, key.get()));
  if (!entry && PyErr_Occurred()) return -1;
  if (entry && entry.get() != Py_None) {  // entry[1] += 1
    Ref one(PyLong_FromLong(1));
    Ref index(one ? PyLong_FromLong(1) : nullptr);
    Ref count(index ? PyObject_GetItem(entry.get(), index.get()) : nullptr);
    Ref more(count ? PyNumber_InPlaceAdd(count.get(), one.get()) : nullptr);
    if (!more || PyObject_SetItem(entry.get(), index.get(), more.get()) < 0) return -1;
  } else if (PyArray_ISWRITEABLE(reinterpret_cast<PyArrayObject*>(arr))) {
    Ref done(PyObject_CallMethodOneArg(arr, rn().setflags, Py_False));
    Ref one(done ? PyLong_FromLong(1) : nullptr);
    Ref pair(one ? PyList_New(2) : nullptr);
    if (!pair) return -1;
    PyList_SET_ITEM(pair.get(), 0, Py_NewRef(arr));
    PyList_SET_ITEM(pair.get(), 1, one.release());
    if (PyObject_SetItem(locks, key.get(), pair.get()) < 0) return -1;
  } else {
    return 0;
  }
  return PyList_Append(locked, arr);
}

// unlock_arrays' loop for one array, the mutex held: 0, or -1 with an error.
int unlock_array_held(PyObject* locks, PyObject* arr) {
  Ref key(PyLong_FromVoidPtr(arr));  // id(arr)
  if (!key) return -1;
  Ref entry(PyDict_CheckExact(locks)
                ? Py_XNewRef(PyDict_GetItemWithError(locks, key.get()))
                : PyObject_CallMethodOneArg(locks, rn().get, key.get()));
  if (!entry) return PyErr_Occurred() ? -1 : 0;
  if (entry.get() == Py_None) return 0;
  Ref one(PyLong_FromLong(1));
  Ref index(one ? PyLong_FromLong(1) : nullptr);
  Ref count(index ? PyObject_GetItem(entry.get(), index.get()) : nullptr);
  Ref less(count ? PyNumber_InPlaceSubtract(count.get(), one.get()) : nullptr);
  if (!less || PyObject_SetItem(entry.get(), index.get(), less.get()) < 0) return -1;
  Ref now(PyObject_GetItem(entry.get(), index.get()));
  Ref zero(now ? PyLong_FromLong(0) : nullptr);
  int done = zero ? PyObject_RichCompareBool(now.get(), zero.get(), Py_EQ) : -1;
  if (done <= 0) return done;
  if (PyObject_DelItem(locks, key.get()) < 0) return -1;
  // _set_writeable(arr, True): a ValueError (its base still locked) is ignored
  Ref set(PyObject_CallMethodOneArg(arr, rn().setflags, Py_True));
  if (!set && PyErr_ExceptionMatches(PyExc_ValueError)) PyErr_Clear();
  return set || !PyErr_Occurred() ? 0 : -1;
}

// Runs `body` with saved_guard._MUTEX held (a `with _MUTEX:` block).
template <typename Body>
void with_mutex(Body body) {
  with_lock(guard_global(rn().mutex), body);
}

PyObject* save_exported(PyObject* tensor) {
  Ref saved(new_object(cfg.locked_saved));
  PyObject* counter = counter_of(tensor);
  set_slot(saved.get(), cfg.s.data, slot(tensor, cfg.t.data));
  set_slot(saved.get(), cfg.s.counter, counter);
  set_slot(saved.get(), cfg.s.version, slot(counter, cfg.counter_v));
  set_slot(saved.get(), cfg.s.tensor, tensor);
  steal_slot(saved.get(), cfg.s.output_nr, PyLong_FromLong(0));
  // lock_arrays(tensor): a tensor without base has one array. What the body reads
  // is read once the mutex is held (acquiring may let other threads run).
  Ref locked(check(PyList_New(0)));
  with_mutex([&] {
    Ref locks(Py_XNewRef(PyDict_GetItemWithError(cfg.guard_dict, rn().locks)));
    Ref arr(Py_XNewRef(slot(tensor, cfg.t.data)));
    if (!locks) {
      if (!PyErr_Occurred()) PyErr_SetObject(PyExc_NameError, rn().locks);
      return -1;
    }
    return lock_array_held(locks.get(), arr.get(), locked.get());
  });
  if (PyObject_SetAttr(saved.get(), rn().locked, locked.get()) < 0) throw_python_error();
  return saved.release();
}

PyObject* save(PyObject* tensor, bool is_output) {
  bool exported = false;
  if (!is_output && (!plain_extras(slot(tensor, cfg.t.extra), &exported) ||
                     slot(tensor, cfg.t.base) != Py_None || hooks_active() ||
                     (exported && guard_global(rn().lock_arrays) != cfg.lock_arrays))) {
    return check(PyObject_CallFunctionObjArgs(reinterpret_cast<PyObject*>(cfg.saved), tensor,
                                              Py_False, nullptr));
  }
  return exported ? save_exported(tensor) : new_saved(tensor, is_output);
}

// A tensor as the recorder expects it: exactly Tensor, every slot set, an ndarray.
bool plain_tensor(PyObject* t) {
  if (Py_TYPE(t) != cfg.tensor) return false;
  const TensorSlots& s = cfg.t;
  for (Py_ssize_t off : {s.data, s.grad_fn, s.output_nr, s.requires_grad, s.grad, s.vc, s.base,
                         s.extra}) {
    if (slot(t, off) == nullptr) return false;
  }
  PyObject* rg = slot(t, s.requires_grad);
  if (rg != Py_True && rg != Py_False) return false;
  PyObject* vc = slot(t, s.vc);
  if (vc != Py_None && (Py_TYPE(vc) != cfg.counter || slot(vc, cfg.counter_v) == nullptr)) {
    return false;
  }
  return Py_TYPE(slot(t, s.data)) == &PyArray_Type;
}

struct Plan {
  PyObject* node_cls;     // borrowed from op (held by the Ref below)
  Ref node_cls_ref;
  Ref plan;               // (((index, name), ...), save_result)
  long mask = 0;
};

// What the recorder reads of an OpDef: its node class, `differentiable`, the `plans`
// list and `multi_output`. `defop` sets them and nothing rebinds them (`plans` only
// fills up, in place), so they are read once per op and kept (used with the GIL
// held; the memo holds each op, so an address is never reused for another object).
struct OpFacts {
  Ref node_cls;
  Ref differentiable;
  Ref plans;
  bool single_output = false;
  bool ok = false;  // every fact was there
};

OpFacts read_facts(PyObject* op) {
  OpFacts f;
  Ref multi(PyObject_GetAttr(op, rn().multi_output));
  f.node_cls = Ref(PyObject_GetAttr(op, rn().node_cls));
  f.differentiable = Ref(PyObject_GetAttr(op, rn().differentiable));
  f.plans = Ref(PyObject_GetAttr(op, rn().plans));
  f.ok = multi && f.node_cls && f.differentiable && f.plans;
  if (!f.ok) PyErr_Clear();
  f.single_output = multi.get() == Py_False;
  return f;
}

// The op's facts, or nullptr (no error set) when one is missing.
const OpFacts* op_facts(PyObject* op) {
  static auto* memo = new std::unordered_map<PyObject*, OpFacts>();
  static PyObject* last_op = nullptr;
  static const OpFacts* last = nullptr;
  if (op != last_op) {
    auto it = memo->find(op);
    if (it == memo->end()) {
      Py_INCREF(op);
      it = memo->emplace(op, read_facts(op)).first;
    }
    last_op = op;
    last = &it->second;
  }
  return last->ok ? last : nullptr;
}

// The checks of the fast path, with no side effect but caching a plan.
// false: not this path (or a Python error set).
// `inputs`: the items of _record's `inputs` tuple (n of them).
bool prepare(PyObject* op, PyObject* const* inputs, Py_ssize_t n, PyObject* out,
             PyObject* view_base, Plan& p) {
  if (view_base != Py_None || Py_TYPE(out) != &PyArray_Type) return false;
  char kind = PyArray_DESCR(reinterpret_cast<PyArrayObject*>(out))->kind;
  if (kind == 'b' || kind == 'i' || kind == 'u') return false;
  if (hooks_active()) return false;
  thread_local ThreadLocalDict anomaly_dict;
  Ref anomaly(local_attr(cfg.anomaly_state, names.enabled, anomaly_dict));
  if (!anomaly || anomaly.get() != Py_False) return false;
  const OpFacts* facts = op_facts(op);
  if (facts == nullptr || !facts->single_output) return false;
  Py_INCREF(facts->node_cls.get());
  p.node_cls_ref = Ref(facts->node_cls.get());
  PyObject* cls = p.node_cls = p.node_cls_ref.get();
  if (!PyType_Check(cls)) return false;
  PyTypeObject* type = reinterpret_cast<PyTypeObject*>(cls);
  if (!PyType_IsSubtype(type, cfg.op_node) || type->tp_new != PyBaseObject_Type.tp_new ||
      type->tp_basicsize != cfg.op_node->tp_basicsize) {
    return false;
  }
  PyObject* diff = facts->differentiable.get();
  if (!PyTuple_CheckExact(diff)) return false;
  if (n > PyTuple_GET_SIZE(diff) || n > 30) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* t = inputs[i];
    if (!plain_tensor(t)) return false;
    if (slot(t, cfg.t.grad_fn) != Py_None || slot(t, cfg.t.requires_grad) == Py_True) {
      PyObject* bit = PyTuple_GET_ITEM(diff, i);
      if (!PyLong_CheckExact(bit)) return false;
      p.mask |= PyLong_AsLong(bit);
    }
  }
  PyObject* plans = facts->plans.get();
  if (!PyList_CheckExact(plans) || p.mask < 0 || p.mask >= PyList_GET_SIZE(plans)) {
    return false;
  }
  PyObject* plan = PyList_GET_ITEM(plans, p.mask);
  if (plan == Py_None) {
    Ref mask(PyLong_FromLong(p.mask));
    p.plan = Ref(PyObject_CallMethodOneArg(op, rn().saved_plan, mask.get()));
    if (!p.plan) return false;
  } else {
    Py_INCREF(plan);
    p.plan = Ref(plan);
  }
  plan = p.plan.get();
  if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 2) return false;
  PyObject* saved_inputs = PyTuple_GET_ITEM(plan, 0);
  if (!PyTuple_CheckExact(saved_inputs)) return false;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(saved_inputs); ++k) {
    PyObject* pair = PyTuple_GET_ITEM(saved_inputs, k);
    if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) return false;
    PyObject* index = PyTuple_GET_ITEM(pair, 0);
    if (!PyLong_CheckExact(index)) return false;
    long i = PyLong_AsLong(index);
    if (i < 0 || i >= n || !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 1))) return false;
  }
  PyObject* save_result = PyTuple_GET_ITEM(plan, 1);
  return save_result == Py_True || save_result == Py_False;
}

PyObject* registry_global(PyObject* name) {
  PyObject* value = PyDict_GetItemWithError(cfg.registry_dict, name);
  if (value == nullptr) {
    if (!PyErr_Occurred()) PyErr_SetObject(PyExc_NameError, name);
    throw_python_error();
  }
  return value;
}

// Note [untracked records]
//     Half of what remained of the recording cost was the cyclic garbage collector:
//     each op leaves ~10 container objects alive, and every 700 allocations a
//     collection scans the young ones. So the recorder allocates fewer, and hides
//     from the collector those that can never be part of a reference cycle:
//     - the version counters it creates leave the collector's list at once (their
//       one slot holds an int);
//     - the (shape, dtype) tuples of `_in_meta` are immutable and hold only ints
//       and a dtype, so equal ones are shared: the last few made are kept and
//       reused (CPython itself untracks such tuples at their first collection;
//       these are untracked from the start);
//     - the `_in_meta` list holds only those tuples and is never written after
//       `_record` (OpNode.apply and validate only read it), so it leaves the
//       collector's list too;
//     - a SavedTensor of an output holds no tensor (Note [saved outputs]): only its
//       array, its counter and ints, set once (saved-tensor hooks, which add to its
//       __dict__, take the Python path), so it leaves the list, and so does the
//       saved dict when it holds nothing else (`_saved` is only read, then dropped).
//     Nothing that can reach a node or a tensor is untracked: hooks may close over
//     tensors, and an untracked link in a garbage cycle would leak the cycle.
struct MetaEntry {
  PyObject* meta = nullptr;  // ((dims...), dtype), owned
  int nd = 0;
  npy_intp dims[8] = {};
};
MetaEntry meta_cache[4];
int meta_next = 0;

PyObject* new_meta(PyArrayObject* arr) {
  int nd = PyArray_NDIM(arr);
  Ref shape(check(PyTuple_New(nd)));
  for (int d = 0; d < nd; ++d) {
    PyTuple_SET_ITEM(shape.get(), d, check(PyLong_FromSsize_t(PyArray_DIM(arr, d))));
  }
  PyObject* dtype = reinterpret_cast<PyObject*>(PyArray_DESCR(arr));
  PyObject* meta = check(PyTuple_Pack(2, shape.get(), dtype));
  PyObject_GC_UnTrack(shape.get());
  PyObject_GC_UnTrack(meta);
  return meta;
}

// (shape, dtype) of an ndarray: `(data.shape, data.dtype)`. A new reference.
PyObject* meta_of(PyObject* data) {
  PyArrayObject* arr = reinterpret_cast<PyArrayObject*>(data);
  int nd = PyArray_NDIM(arr);
  PyObject* dtype = reinterpret_cast<PyObject*>(PyArray_DESCR(arr));
  for (MetaEntry& e : meta_cache) {
    if (e.meta == nullptr || e.nd != nd || PyTuple_GET_ITEM(e.meta, 1) != dtype) continue;
    bool same = true;
    for (int d = 0; d < nd && same; ++d) same = e.dims[d] == PyArray_DIM(arr, d);
    if (!same) continue;
    Py_INCREF(e.meta);
    return e.meta;
  }
  PyObject* meta = new_meta(arr);
  if (nd <= 8) {
    MetaEntry& e = meta_cache[meta_next];
    meta_next = (meta_next + 1) % 4;
    PyObject* old = e.meta;
    Py_INCREF(meta);
    e.meta = meta;
    e.nd = nd;
    for (int d = 0; d < nd; ++d) e.dims[d] = PyArray_DIM(arr, d);
    Py_XDECREF(old);
  }
  return meta;
}

// Note [leaf records]
//     Each step of a training loop records its ops on the same leaves (the
//     parameters), and each step's graph dies with its AccumulateGrad nodes (the leaf
//     holds its accumulator weakly, as in the reference), so every recorded op on a
//     parameter ran `grad_accumulator` (three Python frames) and, for a saved
//     parameter, `SavedTensor(t, False)` (a leaf that has an accumulator has extras,
//     which the plain path did not take). Both are done here when nothing unusual is
//     set, with grad_accumulator's and SavedTensor.__init__'s steps:
//     - the accumulator: the leaf has extras (exactly _Extras; `_extras()` makes them
//       otherwise, in Python) whose `grad_acc` is None or a dead weakref, `AccumulateGrad`
//       and `grad_accumulator` are still the objects mirrored; the node gets `_next`
//       `()`, `_seq` MAX_SEQUENCE, `variable` the leaf, and the leaf a weakref to it;
//     - the saved leaf: extras with `inference` False (True raises, in Python), no
//       base, no saved-tensor hooks; `exported` True: Note [saved exported leaves].
//     Fingerprinted with the recorder (AccumulateGrad.__init__, Node.__init__,
//     saved_guard.is_exported are in record_parts()).

// AccumulateGrad(t) and `extra.grad_acc = weakref.ref(acc)`. A new reference.
PyObject* new_accumulator(PyObject* t, PyObject* extra) {
  PyObject* seq = PyDict_GetItemWithError(cfg.node_dict, rn().max_sequence);
  if (seq == nullptr) {
    if (!PyErr_Occurred()) PyErr_SetObject(PyExc_NameError, rn().max_sequence);
    throw_python_error();
  }
  Ref acc(new_object(cfg.accumulate_grad));
  steal_slot(acc.get(), cfg.acc_next, check(PyTuple_New(0)));
  set_slot(acc.get(), cfg.acc_seq, seq);
  set_slot(acc.get(), cfg.acc_variable, t);
  steal_slot(extra, cfg.extras_grad_acc, check(PyWeakref_NewRef(acc.get(), nullptr)));
  return acc.release();
}

// Whether grad_accumulator and the class it instantiates are the ones mirrored.
bool accumulator_mirrored(PyObject* python_fn) {
  return python_fn == cfg.grad_accumulator &&
         PyDict_GetItemWithError(cfg.node_dict, rn().accumulate_grad) ==
             reinterpret_cast<PyObject*>(cfg.accumulate_grad);
}

// grad_accumulator(t) (autograd/node.py) for a leaf that requires grad: the live
// accumulator its extras hold weakly, else a new one (Note [leaf records]); the
// Python function when anything is unusual (None for NO_ACCUMULATOR). A new reference.
PyObject* accumulator_of(PyObject* t) {
  PyObject* extra = slot(t, cfg.t.extra);
  bool dead = false;  // no accumulator, or a dead one: made here when mirrored
  if (extra != nullptr && Py_TYPE(extra) == cfg.extras) {
    PyObject* ref = slot(extra, cfg.extras_grad_acc);
    PyObject* acc = ref != nullptr && PyWeakref_CheckRefExact(ref) ? PyWeakref_GetObject(ref)
                                                                   : nullptr;
    if (acc != nullptr && acc != Py_None) {
      Py_INCREF(acc);
      return acc;
    }
    dead = ref == Py_None || acc == Py_None;
  }
  PyObject* python_fn = registry_global(rn().grad_accumulator);
  if (dead && accumulator_mirrored(python_fn)) return new_accumulator(t, extra);
  if (PyErr_Occurred()) throw_python_error();
  return check(PyObject_CallOneArg(python_fn, t));
}

// _record's steps, in its order. Errors propagate (as from _record).
PyObject* record_fast(PyObject* const* inputs, Py_ssize_t n, PyObject* attrs, PyObject* out,
                      Plan& p) {
  Ref node(new_object(reinterpret_cast<PyTypeObject*>(p.node_cls)));
  steal_slot(node.get(), cfg.n.seq, check(PyIter_Next(registry_global(rn().sequence))));
  Ref edges(check(PyTuple_New(n)));
  Ref metas(check(PyList_New(n)));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* t = inputs[i];
    PyObject* fn = slot(t, cfg.t.grad_fn);
    PyObject* edge;
    if (fn != Py_None) {
      edge = check(PyTuple_Pack(2, fn, slot(t, cfg.t.output_nr)));
    } else if (slot(t, cfg.t.requires_grad) == Py_True) {
      Ref acc(accumulator_of(t));  // None: a leaf with no accumulator (NO_ACCUMULATOR)
      Ref zero(check(PyLong_FromLong(0)));
      edge = acc.get() == Py_None ? Py_NewRef(Py_None)
                                  : check(PyTuple_Pack(2, acc.get(), zero.get()));
    } else {
      Py_INCREF(Py_None);
      edge = Py_None;
    }
    PyTuple_SET_ITEM(edges.get(), i, edge);
    PyList_SET_ITEM(metas.get(), i, meta_of(slot(t, cfg.t.data)));
  }
  steal_slot(node.get(), cfg.n.next, edges.release());
  PyObject_GC_UnTrack(metas.get());  // Note [untracked records]
  steal_slot(node.get(), cfg.n.in_meta, metas.release());
  set_slot(node.get(), cfg.n.attrs, attrs);
  PyObject* saved_inputs = PyTuple_GET_ITEM(p.plan.get(), 0);
  Ref saved(check(PyDict_New()));
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(saved_inputs); ++k) {
    PyObject* pair = PyTuple_GET_ITEM(saved_inputs, k);
    PyObject* t = inputs[PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0))];
    Ref s(save(t, false));
    if (PyDict_SetItem(saved.get(), PyTuple_GET_ITEM(pair, 1), s.get()) < 0) {
      throw_python_error();
    }
  }
  set_slot(node.get(), cfg.n.out_meta, Py_None);
  // Tensor._make_output, inlined in _record
  Ref outs(check(new_tensor(cfg.tensor, cfg.t, out, node.get())));
  if (PyTuple_GET_ITEM(p.plan.get(), 1) == Py_True) {
    Ref zero(check(PyLong_FromLong(0)));
    Ref s(hooks_active() ? check(PyObject_CallFunctionObjArgs(
                               reinterpret_cast<PyObject*>(cfg.saved), outs.get(), Py_True,
                               zero.get(), nullptr))
                         : new_saved(outs.get(), true));
    if (PyDict_SetItem(saved.get(), rn().result, s.get()) < 0) throw_python_error();
    untrack_if_leaves_only(saved.get());
  }
  steal_slot(node.get(), cfg.n.saved, saved.release());
  return outs.release();
}

// The fast path, or false (no error set) when _record must decide.
bool try_fast(PyObject* op, PyObject* const* inputs, Py_ssize_t n, PyObject* attrs,
              PyObject* out, PyObject** result) {
  if (!cfg.enabled) return false;
  // A full reduction's forward returns a NumPy scalar; _record wraps it with
  // np.asarray (in _output) and records the 0-d array, which this path then does.
  // (The type test first: the scalar check walks NumPy's scalar types, every op.)
  Ref as_array;
  if (Py_TYPE(out) != &PyArray_Type && PyArray_CheckAnyScalarExact(out)) {
    as_array = Ref(PyArray_FromScalar(out, nullptr));
    if (!as_array) {
      PyErr_Clear();
      return false;
    }
    out = as_array.get();
  }
  Plan p;
  bool here = prepare(op, inputs, n, out, Py_None, p);
  if (PyErr_Occurred()) PyErr_Clear();  // a failed check: _record decides
  if (!here) return false;
  try {
    *result = record_fast(inputs, n, attrs, out, p);
  } catch (py::error_already_set& e) {
    e.restore();
    *result = nullptr;
  }
  return true;
}

}  // namespace

PyObject* unlock_arrays(PyObject*, PyObject* arrays) {
  try {
    with_mutex([&] {  // as in lock: read once the mutex is held
      Ref items(PyObject_GetIter(arrays));
      if (!items) return -1;
      Ref locks(Py_XNewRef(PyDict_GetItemWithError(cfg.guard_dict, rn().locks)));
      if (!locks) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_NameError, rn().locks);
        return -1;
      }
      while (PyObject* arr = PyIter_Next(items.get())) {
        int status = unlock_array_held(locks.get(), arr);
        Py_DECREF(arr);
        if (status < 0) return -1;
      }
      return PyErr_Occurred() ? -1 : 0;
    });
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* record(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  PyObject* result;
  if (nargs == 5 && args[4] == Py_None && PyTuple_CheckExact(args[1]) &&
      try_fast(args[0], reinterpret_cast<PyTupleObject*>(args[1])->ob_item,
               PyTuple_GET_SIZE(args[1]), args[2], args[3], &result)) {
    return result;
  }
  return PyObject_Vectorcall(cfg.python_record, args, nargs, nullptr);
}

PyObject* record_inputs(PyObject* op, PyObject* const* inputs, Py_ssize_t n, PyObject* attrs,
                        PyObject* out) {
  PyObject* result;
  if (try_fast(op, inputs, n, attrs, out, &result)) return result;
  Ref tuple(PyTuple_New(n));
  if (!tuple) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_INCREF(inputs[i]);
    PyTuple_SET_ITEM(tuple.get(), i, inputs[i]);
  }
  PyObject* args[] = {op, tuple.get(), attrs, out, Py_None};
  return PyObject_Vectorcall(cfg.python_record, args, 5, nullptr);
}

void configure_recorder(bool enabled, py::object python_record, py::object registry,
                        py::object tensor_type, py::object op_node_type,
                        py::object saved_type, py::object counter_type,
                        py::object anomaly_state, py::object hooks_active,
                        py::object extras_type, py::object node_module,
                        py::object saved_guard, py::object locked_saved_type) {
  if (!PyList_CheckExact(hooks_active.ptr()) || PyList_GET_SIZE(hooks_active.ptr()) < 1) {
    throw std::runtime_error("recorder: hooks_active must be a one-item list");
  }
  py::object registry_dict = registry.attr("__dict__");
  Config c;
  c.enabled = enabled;
  c.python_record = python_record.ptr();
  c.registry_dict = registry_dict.ptr();
  c.tensor = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
  c.op_node = reinterpret_cast<PyTypeObject*>(op_node_type.ptr());
  c.saved = reinterpret_cast<PyTypeObject*>(saved_type.ptr());
  c.counter = reinterpret_cast<PyTypeObject*>(counter_type.ptr());
  c.anomaly_state = anomaly_state.ptr();
  c.hooks_active = hooks_active.ptr();
  PyObject* T = tensor_type.ptr();
  c.t = tensor_slots(T);
  PyObject* N = op_node_type.ptr();
  c.n = {member_offset(N, "_next"),    member_offset(N, "_seq"),
         member_offset(N, "_saved"),   member_offset(N, "_attrs"),
         member_offset(N, "_in_meta"), member_offset(N, "_out_meta")};
  PyObject* S = saved_type.ptr();
  c.s = {member_offset(S, "data"), member_offset(S, "tensor"), member_offset(S, "counter"),
         member_offset(S, "version"), member_offset(S, "output_nr")};
  c.counter_v = member_offset(counter_type.ptr(), "v");
  c.extras = reinterpret_cast<PyTypeObject*>(extras_type.ptr());
  c.extras_grad_acc = member_offset(extras_type.ptr(), "grad_acc");
  c.extras_inference = member_offset(extras_type.ptr(), "inference");
  c.extras_exported = member_offset(extras_type.ptr(), "exported");
  c.extras_memory = member_offset(extras_type.ptr(), "memory");
  py::object node_dict = node_module.attr("__dict__");
  py::object grad_accumulator = node_module.attr("grad_accumulator");
  py::object accumulate_grad = node_module.attr("AccumulateGrad");
  c.node_dict = node_dict.ptr();
  c.grad_accumulator = grad_accumulator.ptr();
  c.accumulate_grad = reinterpret_cast<PyTypeObject*>(accumulate_grad.ptr());
  if (!PyType_Check(accumulate_grad.ptr()) ||
      c.accumulate_grad->tp_new != PyBaseObject_Type.tp_new) {
    throw std::runtime_error("recorder: AccumulateGrad must be a plain class");
  }
  PyObject* A = accumulate_grad.ptr();
  c.acc_next = member_offset(A, "_next");
  c.acc_seq = member_offset(A, "_seq");
  c.acc_variable = member_offset(A, "variable");
  py::object guard_dict = saved_guard.attr("__dict__");
  py::object lock_arrays = saved_guard.attr("lock_arrays");
  c.guard_dict = guard_dict.ptr();
  c.lock_arrays = lock_arrays.ptr();
  c.locked_saved = reinterpret_cast<PyTypeObject*>(locked_saved_type.ptr());
  if (!PyType_Check(locked_saved_type.ptr()) ||
      !PyType_IsSubtype(c.locked_saved, c.saved) ||
      c.locked_saved->tp_basicsize != c.saved->tp_basicsize ||
      c.locked_saved->tp_new != PyBaseObject_Type.tp_new) {
    throw std::runtime_error("recorder: LockedSavedTensor must share SavedTensor's layout");
  }
  py::tuple keep = py::make_tuple(python_record, registry_dict, tensor_type, op_node_type,
                                  saved_type, counter_type, anomaly_state, hooks_active,
                                  extras_type, node_dict, grad_accumulator, accumulate_grad,
                                  guard_dict, lock_arrays, locked_saved_type);
  rn();
  PyObject* old = cfg_refs;
  cfg_refs = keep.release().ptr();
  cfg = c;
  Py_XDECREF(old);
}

bool recorder_enabled() { return cfg.enabled; }

}  // namespace chainrule_engine
