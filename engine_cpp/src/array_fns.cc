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
PyObject* python_expand = nullptr;  // _namespaces._expand, owned

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

// The strides of np.broadcast_to(x, shape) in `strides` and the shape in `dims`;
// false when shape is not a tuple of ints that x broadcasts to (nothing set).
bool broadcast_layout(PyArrayObject* x, PyObject* shape, npy_intp* dims, npy_intp* strides) {
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  int xnd = PyArray_NDIM(x);
  if (nd < xnd || nd > NPY_MAXDIMS) return false;
  Py_ssize_t lead = nd - xnd;
  for (Py_ssize_t i = 0; i < nd; ++i) {
    PyObject* item = PyTuple_GET_ITEM(shape, i);
    if (!PyLong_CheckExact(item)) return false;
    long long size = PyLong_AsLongLong(item);
    if (size < 0) {  // also an overflow (-1 with an error)
      PyErr_Clear();
      return false;
    }
    dims[i] = static_cast<npy_intp>(size);
    if (i < lead) {
      strides[i] = 0;
      continue;
    }
    npy_intp own = PyArray_DIM(x, static_cast<int>(i - lead));
    if (own != 1 && own != dims[i]) return false;
    strides[i] = own == 1 ? 0 : PyArray_STRIDE(x, static_cast<int>(i - lead));
  }
  return true;
}
}  // namespace

void configure_array_fns(PyObject* fallback, PyObject* np_conj, PyObject* expand_fallback) {
  Py_INCREF(fallback);
  Py_INCREF(np_conj);
  Py_INCREF(expand_fallback);
  Py_XSETREF(python_conj, fallback);
  Py_XSETREF(numpy_conj, np_conj);
  Py_XSETREF(python_expand, expand_fallback);
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

PyObject* array_expand(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (python_expand == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "chainrule_engine: array functions not configured");
    return nullptr;
  }
  npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
  if (nargs != 2 || !PyArray_CheckExact(args[0]) || !PyTuple_CheckExact(args[1]) ||
      !broadcast_layout(reinterpret_cast<PyArrayObject*>(args[0]), args[1], dims, strides)) {
    return PyObject_Vectorcall(python_expand, args, nargs, nullptr);  // its result or error
  }
  auto* x = reinterpret_cast<PyArrayObject*>(args[0]);
  PyArray_Descr* descr = PyArray_DESCR(x);
  Py_INCREF(descr);  // stolen below
  int flags = PyArray_FLAGS(x) & NPY_ARRAY_ALIGNED;  // read-only, like broadcast_to's
  PyObject* view = PyArray_NewFromDescr(&PyArray_Type, descr,
                                        static_cast<int>(PyTuple_GET_SIZE(args[1])), dims,
                                        strides, PyArray_DATA(x), flags, nullptr);
  if (view == nullptr) return nullptr;
  Py_INCREF(args[0]);  // stolen by SetBaseObject (which links to the owner of the data)
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(view), args[0]) < 0) {
    Py_DECREF(view);
    return nullptr;
  }
  return view;
}

}  // namespace chainrule_engine
