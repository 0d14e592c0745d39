#define PY_ARRAY_UNIQUE_SYMBOL chainrule_engine_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "validate.h"

#include <numpy/arrayobject.h>

#include "op_node.h"

namespace chainrule_engine {

void init_numpy() {
  if (_import_array() < 0) throw_python_error();
}

// Whether `grad` is an ndarray with exactly this (shape, dtype) metadata entry, or a
// Tensor (create_graph) holding one: validate.py's checks then pass as well.
static bool fits_exactly(PyObject* grad, PyObject* meta) {
  if (table_ops.tensor != nullptr && Py_TYPE(grad) == table_ops.tensor) {
    grad = slot(grad, table_ops.tensor_slots.data);
    if (grad == nullptr) return false;
  }
  if (!PyArray_CheckExact(grad) || !PyTuple_Check(meta) || PyTuple_GET_SIZE(meta) != 2) {
    return false;
  }
  PyObject* shape = PyTuple_GET_ITEM(meta, 0);
  PyObject* dtype = PyTuple_GET_ITEM(meta, 1);
  auto* array = reinterpret_cast<PyArrayObject*>(grad);
  if (reinterpret_cast<PyObject*>(PyArray_DESCR(array)) != dtype) return false;
  if (!PyTuple_Check(shape)) return false;
  int ndim = PyArray_NDIM(array);
  if (PyTuple_GET_SIZE(shape) != ndim) return false;
  const npy_intp* dims = PyArray_DIMS(array);
  for (int d = 0; d < ndim; ++d) {
    PyObject* item = PyTuple_GET_ITEM(shape, d);
    if (!PyLong_CheckExact(item)) return false;
    long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    if (v != dims[d]) return false;
  }
  return true;
}

static bool all_fit(PyObject* outputs, PyObject* metas, const Edge* edges, uint32_t n) {
  if (!PyList_Check(metas) && !PyTuple_Check(metas)) return false;
  if (PySequence_Fast_GET_SIZE(metas) < static_cast<Py_ssize_t>(n)) return false;
  for (uint32_t i = 0; i < n; ++i) {
    PyObject* grad = PySequence_Fast_GET_ITEM(outputs, i);
    if (grad == Py_None || !is_edge(edges[i])) continue;
    if (!fits_exactly(grad, PySequence_Fast_GET_ITEM(metas, i))) return false;
  }
  return true;
}

PyObject* validate_outputs(PyObject* node, PyObject* outputs, const Edge* edges,
                           uint32_t num_edges) {
  bool sequence = PyList_Check(outputs) || PyTuple_Check(outputs);
  if (sequence && PySequence_Fast_GET_SIZE(outputs) == static_cast<Py_ssize_t>(num_edges)) {
    PyObject* metas = table_in_meta(node);  // Note [reading nodes by slot]
    if (metas != nullptr) {
      Py_INCREF(metas);
    } else {
      metas = PyObject_GetAttr(node, names.in_meta);
    }
    if (metas == nullptr) {
      // getattr(node, "_in_meta", None)
      if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw_python_error();
      PyErr_Clear();
      Py_INCREF(outputs);
      return outputs;
    }
    Ref owned(metas);
    if (metas == Py_None || all_fit(outputs, metas, edges, num_edges)) {
      Py_INCREF(outputs);
      return outputs;
    }
  }
  PyObject* args[] = {node, outputs};
  return check(PyObject_Vectorcall(helpers.validate_outputs, args, 2, nullptr));
}

}  // namespace chainrule_engine
