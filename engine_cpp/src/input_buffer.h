// Input buffers: where the gradients for one node's outputs gather until it runs.
// A buffer is a Python list (what node.apply receives), one entry per input of
// the node, None until a gradient arrives. See Note [gradients are raw arrays or
// tensors] in input_buffer.py: the entries are ndarrays or chainrule Tensors and
// `old + new` works for both.
#pragma once

#include "python_api.h"

namespace chainrule_engine {

class InputBuffer {
 public:
  // [None] * size, a new reference.
  static PyObject* create(Py_ssize_t size);

  // buffer[slot] = grad if buffer[slot] is None else buffer[slot] + grad
  // (out of place: a gradient array may be shared by several edges).
  static void add(PyObject* buffer, int64_t slot, PyObject* grad);
};

}  // namespace chainrule_engine
