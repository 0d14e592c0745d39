#include "input_buffer.h"

namespace chainrule_engine {

PyObject* InputBuffer::create(Py_ssize_t size) {
  if (size < 0) size = 0;  // like `[None] * size`
  PyObject* list = check(PyList_New(size));
  for (Py_ssize_t i = 0; i < size; ++i) {
    Py_INCREF(Py_None);
    PyList_SET_ITEM(list, i, Py_None);
  }
  return list;
}

void InputBuffer::add(PyObject* buffer, int64_t slot, PyObject* grad) {
  Py_ssize_t size = PyList_GET_SIZE(buffer);
  int64_t index = slot < 0 ? slot + size : slot;  // Python list indexing
  if (index < 0 || index >= size) {
    PyErr_SetString(PyExc_IndexError, "list index out of range");
    throw_python_error();
  }
  PyObject* old = PyList_GET_ITEM(buffer, index);
  PyObject* value;
  if (old == Py_None) {
    Py_INCREF(grad);
    value = grad;
  } else {
    value = check(PyNumber_Add(old, grad));
  }
  PyList_SET_ITEM(buffer, index, value);
  Py_DECREF(old);
}

}  // namespace chainrule_engine
