#define PY_ARRAY_UNIQUE_SYMBOL chainrule_engine_ARRAY_API
#define NO_IMPORT_ARRAY
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "accumulate.h"

#include <numpy/arrayobject.h>

#include "node.h"
#include "slots.h"

namespace chainrule_engine {

namespace {

AccumulateConfig acc;
PyObject* acc_refs = nullptr;  // keeps acc's objects alive

PyObject* own(PyObject* value) {
  Py_INCREF(value);
  return value;
}

// Tensor._wrap(arr) for an ndarray: a leaf that needs no grad.
PyObject* wrap(PyObject* arr) {
  auto* type = reinterpret_cast<PyTypeObject*>(acc.tensor_type);
  return check(new_tensor(type, acc.t, arr, Py_None));
}

// _version_counter.bump(tensor)
void bump(PyObject* tensor) {
  static PyObject* one = PyLong_FromLong(1);
  PyObject* counter = slot(tensor, acc.t.vc);
  if (counter == nullptr || counter == Py_None) {
    counter = check(PyObject_CallNoArgs(acc.counter_type));
    steal_slot(tensor, acc.t.vc, counter);
  }
  steal_slot(counter, acc.counter_v, check(PyNumber_Add(slot(counter, acc.counter_v), one)));
}

// accumulate._same_layout(arr, like)
bool same_layout(PyArrayObject* arr, PyArrayObject* like) {
  if (!PyArray_CHKFLAGS(arr, NPY_ARRAY_OWNDATA) || !PyArray_ISWRITEABLE(arr)) return false;
  if (!PyArray_EquivTypes(PyArray_DESCR(arr), PyArray_DESCR(like))) return false;
  int nd = PyArray_NDIM(arr);
  if (nd != PyArray_NDIM(like)) return false;
  for (int d = 0; d < nd; ++d) {
    if (PyArray_DIM(arr, d) != PyArray_DIM(like, d)) return false;
    if (PyArray_STRIDE(arr, d) != PyArray_STRIDE(like, d)) return false;
  }
  return true;
}

// STOLEN[0] += 1
void count_stolen() {
  PyObject* n = PyList_GET_ITEM(acc.stolen, 0);
  PyObject* next = check(PyNumber_Add(n, Py_True));
  PyList_SET_ITEM(acc.stolen, 0, next);
  Py_DECREF(n);
}

// The first gradient of a leaf: steal `grad` or copy it (accumulate._accumulate).
PyObject* first_grad(PyObject* grad, PyObject* data) {
  auto* g = reinterpret_cast<PyArrayObject*>(grad);
  auto* like = reinterpret_cast<PyArrayObject*>(data);
  // Holders: the engine's list of the leaf's gradients, nothing else.
  if (Py_REFCNT(grad) <= 1 && same_layout(g, like)) {
    count_stolen();
    return wrap(grad);
  }
  Ref fresh(check(PyArray_NewLikeArray(like, NPY_KEEPORDER, nullptr, 1)));
  if (PyArray_CopyInto(reinterpret_cast<PyArrayObject*>(fresh.get()), g) < 0) {
    throw_python_error();
  }
  return wrap(fresh.get());
}

// old._data += arr; old._bump_version()
void add_into(PyObject* old, PyObject* grad) {
  PyObject* data = slot(old, acc.t.data);
  Ref sum(check(PyNumber_InPlaceAdd(data, grad)));
  steal_slot(old, acc.t.data, sum.release());
  bump(old);
}

bool is_plain_tensor(PyObject* obj) {
  return reinterpret_cast<PyObject*>(Py_TYPE(obj)) == acc.tensor_type;
}

bool has_post_acc_hooks(PyObject* variable) {
  PyObject* extra = slot(variable, acc.t.extra);
  if (extra == nullptr) return true;  // unset: let Python raise
  if (extra == Py_None) return false;
  Ref hooks(check(PyObject_GetAttr(extra, names.post_acc_hooks)));
  return truthy(hooks.get());
}

// Whether `.grad` can take this gradient here (try_accumulate then decides how).
bool is_common_case(PyObject* node, PyObject* grads, bool create_graph) {
  if (!acc.enabled || create_graph) return false;
  if (reinterpret_cast<PyObject*>(Py_TYPE(node)) != acc.accumulate_grad_type) return false;
  if (has_pre_hooks(node) || has_post_hooks(node)) return false;
  if (!PyList_CheckExact(grads) || PyList_GET_SIZE(grads) < 1) return false;
  PyObject* grad = PyList_GET_ITEM(grads, 0);
  if (grad != Py_None && !PyArray_CheckExact(grad)) return false;
  PyObject* variable = slot(node, acc.variable);
  if (variable == nullptr || !is_plain_tensor(variable)) return false;
  if (grad != Py_None && has_post_acc_hooks(variable)) return false;
  PyObject* old = slot(variable, acc.t.grad);
  if (old == nullptr || slot(variable, acc.t.data) == nullptr) return false;
  if (old == Py_None) return PyArray_CheckExact(slot(variable, acc.t.data));
  if (!is_plain_tensor(old) || slot(old, acc.t.requires_grad) != Py_False ||
      slot(old, acc.t.grad_fn) != Py_None || slot(old, acc.t.data) == nullptr) {
    return false;
  }
  PyObject* counter = slot(old, acc.t.vc);  // bump() below needs None or a counter
  return counter == Py_None ||
         (counter != nullptr &&
          reinterpret_cast<PyObject*>(Py_TYPE(counter)) == acc.counter_type &&
          slot(counter, acc.counter_v) != nullptr);
}

}  // namespace

void configure_accumulate(bool enabled, PyObject* accumulate_grad_type, PyObject* tensor_type,
                          PyObject* counter_type, PyObject* lock, PyObject* stolen) {
  AccumulateConfig c;
  c.enabled = enabled;
  c.accumulate_grad_type = accumulate_grad_type;
  c.tensor_type = tensor_type;
  c.counter_type = counter_type;
  c.lock = lock;
  c.stolen = stolen;
  c.variable = member_offset(accumulate_grad_type, "variable");
  c.t = tensor_slots(tensor_type);
                  c.counter_v = member_offset(counter_type, "v");
  if (!PyList_CheckExact(stolen) || PyList_GET_SIZE(stolen) < 1) {
    throw py::type_error("configure_accumulate: stolen must be a non-empty list");
  }
  PyObject* refs = check(PyTuple_Pack(5, accumulate_grad_type, tensor_type, counter_type,
                                      lock, stolen));
  Py_XDECREF(acc_refs);
  acc_refs = refs;
  acc = c;
}

bool accumulate_enabled() { return acc.enabled; }

bool try_accumulate(PyObject* node, PyObject* grads, bool create_graph) {
  if (!is_common_case(node, grads, create_graph)) return false;
  PyObject* grad = PyList_GET_ITEM(grads, 0);
  if (grad == Py_None) return true;  // accumulate_into_grad: nothing to do
  PyObject* variable = slot(node, acc.variable);
  Ref keep_variable(own(variable));
  // accumulate.py's lock, held while `.grad` is written (NumPy may release the GIL
  // inside a large in-place addition).
  with_lock(acc.lock, [&] {
    PyObject* old = slot(variable, acc.t.grad);
    if (old == Py_None) {
      steal_slot(variable, acc.t.grad, first_grad(grad, slot(variable, acc.t.data)));
    } else {
      Ref keep_old(own(old));
      add_into(old, grad);
    }
    return 0;
  });
  return true;
}

}  // namespace chainrule_engine
