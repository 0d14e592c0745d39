#define PY_ARRAY_UNIQUE_SYMBOL chainrule_engine_ARRAY_API
#define NO_IMPORT_ARRAY
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "view_maker.h"

#include <numpy/arrayobject.h>

#include "recorder.h"
#include "slots.h"

namespace chainrule_engine {

namespace {

struct ViewConfig {
  PyObject* python_make_view = nullptr;  // views.make_view: the reference and fallback
  PyObject* registry_dict = nullptr;     // _registry.__dict__: _dispatch, _recorder
  PyObject* views_dict = nullptr;        // views.__dict__: _FAST_OPS, _compose, _register
  PyTypeObject* tensor = nullptr;
  PyTypeObject* extras = nullptr;        // _tensor._Extras
  PyObject* grad_state = nullptr;        // _grad_mode.STATE
  PyObject* record_fn = nullptr;         // _engine.record
  PyObject* counter_of = nullptr;        // _version_counter.counter_of
  TensorSlots t{};
  // _Extras' slots: those __init__ sets to None, then to False
  Py_ssize_t e_none[8] = {}, e_false[3] = {};
  Py_ssize_t e_view_fn = 0, e_inference = 0, e_views = 0, e_creation = 0, e_grad_acc = 0;
  PyObject* python_register = nullptr;   // views._register, as mirrored
};
ViewConfig vc;
bool vc_ready = false;
PyObject* vc_refs = nullptr;  // keeps vc's objects alive

struct ViewNames {
  PyObject* forward = PyUnicode_InternFromString("forward");
  PyObject* dispatch = PyUnicode_InternFromString("_dispatch");
  PyObject* recorder = PyUnicode_InternFromString("_recorder");
  PyObject* fast_ops = PyUnicode_InternFromString("_FAST_OPS");
  PyObject* compose = PyUnicode_InternFromString("_compose");
  PyObject* reg = PyUnicode_InternFromString("_register");
  PyObject* grad_enabled = PyUnicode_InternFromString("grad_enabled");
  PyObject* inference = PyUnicode_InternFromString("inference");
  PyObject* wrap = PyUnicode_InternFromString("_wrap");
  PyObject* no_grad_view = PyUnicode_InternFromString("NO_GRAD_VIEW");
  PyObject* inference_view = PyUnicode_InternFromString("INFERENCE_VIEW");
  PyObject* no_accumulator = PyUnicode_InternFromString("NO_ACCUMULATOR");
};
const ViewNames& vn() {
  static const ViewNames* names = new ViewNames();
  return *names;
}

PyObject* fallback(PyObject* const* args, Py_ssize_t nargs) {
  return PyObject_Vectorcall(vc.python_make_view, args, nargs, nullptr);
}

// STATE.<name> as 0/1, -1 with an error (Note [thread-local reads]).
int mode_flag(PyObject* name) {
  thread_local ThreadLocalDict state_dict;
  Ref value(local_attr(vc.grad_state, name, state_dict));
  return value ? PyObject_IsTrue(value.get()) : -1;
}

// A dict global of a module (borrowed); nullptr with no error when missing.
PyObject* global(PyObject* dict, PyObject* name) {
  PyObject* value = PyDict_GetItemWithError(dict, name);
  if (value == nullptr && !PyErr_Occurred()) PyErr_SetObject(PyExc_NameError, name);
  return value;
}

// Whether make_view's fast path applies (before any work); -1 with an error.
int takes_fast_path(PyObject* op, PyObject* base, PyObject* attrs) {
  if (Py_TYPE(base) != vc.tensor || !PyDict_CheckExact(attrs)) return 0;
  PyObject* extra = slot(base, vc.t.extra);
  if (extra != Py_None && Py_TYPE(extra) != vc.extras) return 0;
  PyObject* fast_ops = global(vc.views_dict, vn().fast_ops);
  if (fast_ops == nullptr) return -1;
  PyObject* fast = PyDict_GetItemWithError(fast_ops, op);
  if (fast != Py_True) return PyErr_Occurred() ? -1 : 0;   // unknown yet: Python decides
  PyObject* dispatch = global(vc.registry_dict, vn().dispatch);
  if (dispatch == nullptr) return -1;
  return dispatch == Py_None;
}

// The output Tensor, recorded or plain (make_view's first branch and its last).
PyObject* output(PyObject* op, PyObject* base, PyObject* attrs, PyObject* out, bool grad) {
  if (grad && slot(base, vc.t.requires_grad) == Py_True) {
    PyObject* recorder = global(vc.registry_dict, vn().recorder);
    if (recorder == nullptr) return nullptr;
    if (recorder == vc.record_fn) return record_inputs(op, &base, 1, attrs, out);
    Ref inputs(PyTuple_Pack(1, base));
    if (!inputs) return nullptr;
    PyObject* args[] = {op, inputs.get(), attrs, out, Py_None};
    return PyObject_Vectorcall(recorder, args, 5, nullptr);
  }
  if (Py_TYPE(out) == &PyArray_Type) return new_tensor(vc.tensor, vc.t, out, Py_None);
  Ref wrap(PyObject_GetAttr(reinterpret_cast<PyObject*>(vc.tensor), vn().wrap));
  return wrap ? PyObject_CallOneArg(wrap.get(), out) : nullptr;
}

// _Extras() for the view: its view_fn (composed with the base's), inference flag and
// creation mark (Note [how a view was made] in _ops/views.py).
PyObject* view_extras(PyObject* base_extra, PyObject* view_fn) {
  Ref e(new_instance(vc.extras));
  if (!e) return nullptr;
  for (Py_ssize_t offset : vc.e_none) set_slot(e.get(), offset, Py_None);
  for (Py_ssize_t offset : vc.e_false) set_slot(e.get(), offset, Py_False);
  if (base_extra == Py_None) {
    set_slot(e.get(), vc.e_view_fn, view_fn);
    return e.release();
  }
  PyObject* compose = global(vc.views_dict, vn().compose);
  if (compose == nullptr) return nullptr;
  PyObject* args[] = {slot(base_extra, vc.e_view_fn), view_fn};
  PyObject* composed = PyObject_Vectorcall(compose, args, 2, nullptr);
  if (composed == nullptr) return nullptr;
  steal_slot(e.get(), vc.e_view_fn, composed);
  set_slot(e.get(), vc.e_inference, slot(base_extra, vc.e_inference));
  set_slot(e.get(), vc.e_creation, slot(base_extra, vc.e_creation));
  return e.release();
}

// _made_under_no_grad(view, base) for a view made with grad mode off (Note [how a view
// was made]): its creation mark (an INFERENCE_VIEW mark is kept) and, where the base
// requires grad, requires_grad with no accumulator; nothing for a view of an inference
// tensor.
bool mark_no_grad(PyObject* view, PyObject* base) {
  PyObject* extra = slot(view, vc.t.extra);
  if (slot(extra, vc.e_inference) != Py_False) return true;
  PyObject* mark = global(vc.views_dict, vn().no_grad_view);
  PyObject* inference_mark = global(vc.views_dict, vn().inference_view);
  if (mark == nullptr || inference_mark == nullptr) return false;
  PyObject* previous = slot(extra, vc.e_creation);
  int kept = PyObject_RichCompareBool(previous, inference_mark, Py_EQ);
  if (kept < 0) return false;
  if (!kept) set_slot(extra, vc.e_creation, mark);
  if (slot(base, vc.t.requires_grad) != Py_True) return true;
  PyObject* no_accumulator = global(vc.views_dict, vn().no_accumulator);
  if (no_accumulator == nullptr) return false;
  set_slot(view, vc.t.requires_grad, Py_True);
  set_slot(extra, vc.e_grad_acc, no_accumulator);
  return true;
}

// A dead weakref's slot in the root's list: what _register's pruning drops.
bool dead(PyObject* ref) {
  return PyWeakref_GET_OBJECT(ref) == Py_None;
}

// _register(view) for a view made with grad mode on: a weak reference to it on its
// root's `_extra.views`, the list pruned of dead entries at each power of two from 64.
// The Python function where the root has no _Extras yet (root._extras() makes one),
// or where something is not what it mirrors.
bool register_view(PyObject* view) {
  PyObject* reg = global(vc.views_dict, vn().reg);
  if (reg == nullptr) return false;
  PyObject* root = slot(view, vc.t.base);
  PyObject* extra = Py_TYPE(root) == vc.tensor ? slot(root, vc.t.extra) : nullptr;
  PyObject* refs = extra != nullptr && Py_TYPE(extra) == vc.extras ? slot(extra, vc.e_views)
                                                                  : nullptr;
  if (reg != vc.python_register || refs == nullptr ||
      (refs != Py_None && !PyList_CheckExact(refs))) {
    Ref done(PyObject_CallOneArg(reg, view));
    return static_cast<bool>(done);
  }
  Ref ref(PyWeakref_NewRef(view, nullptr));
  if (!ref) return false;
  if (refs == Py_None) {
    PyObject* list = PyList_New(1);
    if (list == nullptr) return false;
    PyList_SET_ITEM(list, 0, ref.release());
    steal_slot(extra, vc.e_views, list);
    return true;
  }
  if (PyList_Append(refs, ref.get()) < 0) return false;
  Py_ssize_t n = PyList_GET_SIZE(refs);
  if (n < 64 || (n & (n - 1)) != 0) return true;
  Ref live(PyList_New(0));
  for (Py_ssize_t i = 0; live && i < n; ++i) {
    PyObject* r = PyList_GET_ITEM(refs, i);
    if (!dead(r) && PyList_Append(live.get(), r) < 0) return false;
  }
  return live && PyList_SetSlice(refs, 0, n, live.get()) == 0;
}

// The links of Note [views share memory and version], as make_view sets them.
bool link(PyObject* view, PyObject* base, PyObject* view_fn, bool grad) {
  PyObject* root = slot(base, vc.t.base);
  PyObject* base_extra = slot(base, vc.t.extra);
  // Note [views of a detached tensor] (_ops/_registry.py): a base that is no view
  // (no view_fn) is the root of its views
  if (root == Py_None || base_extra == Py_None || slot(base_extra, vc.e_view_fn) == Py_None)
    root = base;
  set_slot(view, vc.t.base, root);
  PyObject* counter = slot(root, vc.t.vc);
  if (counter == Py_None) {
    counter = PyObject_CallOneArg(vc.counter_of, root);
    if (counter == nullptr) return false;
    steal_slot(view, vc.t.vc, counter);
  } else {
    set_slot(view, vc.t.vc, counter);
  }
  PyObject* extras = view_extras(base_extra, view_fn);
  if (extras == nullptr) return false;
  steal_slot(view, vc.t.extra, extras);
  return grad ? register_view(view) : mark_no_grad(view, base);
}

}  // namespace

PyObject* view_make(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!vc_ready || nargs != 4) return fallback(args, nargs);
  PyObject *op = args[0], *base = args[1], *attrs = args[2], *view_fn = args[3];
  int fast = takes_fast_path(op, base, attrs);
  if (fast <= 0) return fast < 0 ? nullptr : fallback(args, nargs);
  int grad = mode_flag(vn().grad_enabled);
  if (grad < 0) return nullptr;
  if (!grad || slot(base, vc.t.requires_grad) != Py_True) {   // not recorded
    int inference = mode_flag(vn().inference);
    if (inference < 0) return nullptr;
    if (inference) return fallback(args, nargs);
  }
  Ref forward(PyObject_GetAttr(op, vn().forward));
  if (!forward) return nullptr;
  PyObject* data = slot(base, vc.t.data);
  Ref out(PyObject_VectorcallDict(forward.get(), &data, 1, attrs));
  if (!out) return nullptr;            // make_view raises the forward's error too
  Ref view(output(op, base, attrs, out.get(), grad));
  if (!view || !link(view.get(), base, view_fn, grad)) return nullptr;
  return view.release();
}

void configure_view_maker(py::object python_make_view, py::object registry, py::object views,
                          py::object tensor_type, py::object extras_type,
                          py::object grad_state, py::object record_fn,
                          py::object counter_of, py::object python_register) {
  py::object registry_dict = registry.attr("__dict__");
  py::object views_dict = views.attr("__dict__");
  PyObject* E = extras_type.ptr();
  ViewConfig c;
  c.python_make_view = python_make_view.ptr();
  c.registry_dict = registry_dict.ptr();
  c.views_dict = views_dict.ptr();
  c.tensor = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
  c.extras = reinterpret_cast<PyTypeObject*>(E);
  c.grad_state = grad_state.ptr();
  c.record_fn = record_fn.ptr();
  c.counter_of = counter_of.ptr();
  c.t = tensor_slots(tensor_type.ptr());
  const char* none_slots[] = {"hooks", "post_acc_hooks", "grad_acc", "view_fn", "name",
                              "views", "creation", "memory"};
  for (int i = 0; i < 8; ++i) c.e_none[i] = member_offset(E, none_slots[i]);
  const char* false_slots[] = {"retains_grad", "inference", "exported"};
  for (int i = 0; i < 3; ++i) c.e_false[i] = member_offset(E, false_slots[i]);
  c.e_view_fn = member_offset(E, "view_fn");
  c.e_inference = member_offset(E, "inference");
  c.e_views = member_offset(E, "views");
  c.e_creation = member_offset(E, "creation");
  c.e_grad_acc = member_offset(E, "grad_acc");
  c.python_register = python_register.ptr();
  vn();
  py::tuple keep = py::make_tuple(python_make_view, registry_dict, views_dict, tensor_type,
                                  extras_type, grad_state, record_fn, counter_of,
                                  python_register);
  PyObject* old = vc_refs;
  vc_refs = keep.release().ptr();
  vc = c;
  vc_ready = true;
  Py_XDECREF(old);
}

}  // namespace chainrule_engine
