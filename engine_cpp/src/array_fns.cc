#define PY_ARRAY_UNIQUE_SYMBOL chainrule_engine_ARRAY_API
#define NO_IMPORT_ARRAY
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "array_fns.h"

#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

namespace chainrule_engine {

namespace {
PyObject* python_conj = nullptr;  // _namespaces._conj, owned
PyObject* numpy_conj = nullptr;   // np.conj, owned

// x.dtype.kind for an ndarray or a NumPy scalar; 0 for anything else.
char dtype_kind(PyObject* x) {
  if (PyArray_Check(x)) return PyArray_DESCR(reinterpret_cast<PyArrayObject*>(x))->kind;
  if (!PyArray_IsScalar(x, Generic)) return 0;
  PyArray_Descr* descr = PyArray_DescrFromScalar(x);
  if (descr == nullptr) {
    PyErr_Clear();
    return 0;
  }
  char kind = descr->kind;
  Py_DECREF(descr);
  return kind;
}
}  // namespace

void configure_array_fns(PyObject* fallback, PyObject* np_conj) {
  Py_INCREF(fallback);
  Py_INCREF(np_conj);
  Py_XSETREF(python_conj, fallback);
  Py_XSETREF(numpy_conj, np_conj);
}

PyObject* array_conj(PyObject*, PyObject* x) {
  if (python_conj == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "chainrule_engine: array functions not configured");
    return nullptr;
  }
  char kind = dtype_kind(x);
  if (kind == 0) return PyObject_CallOneArg(python_conj, x);  // its error, or its result
  if (kind == 'c') return PyObject_CallOneArg(numpy_conj, x);
  Py_INCREF(x);
  return x;
}

}  // namespace chainrule_engine
