// Writing a leaf's gradient into `.grad` (chainrule.autograd.accumulate) in C++.
//
// Note [accumulation fast path]
//     Every leaf of a backward pass ends in engine._accumulate -> AccumulateGrad.apply
//     -> accumulate_into_grad -> accumulate._accumulate: five Python frames, a lock and
//     a refcount test, ~3-4 µs a leaf (an MLP step has a weight and a bias per layer).
//     This file does the common case in C++ with the same steps and the same lock:
//     an AccumulateGrad without node hooks, create_graph off, an ndarray gradient, a
//     plain Tensor leaf without post-accumulate hooks, and `.grad` either None (steal
//     the array when nothing else holds it and its layout is the leaf's, Note [stealing
//     gradients]; else copy it into an array laid out like the leaf) or a Tensor that
//     carries no graph (add in place, bump its version). Anything else goes to
//     engine._accumulate before anything is done. It is on only while the Python code
//     it mirrors has the fingerprint it was written against (chainrule_engine/_mirror.py).
#pragma once

#include "python_api.h"
#include "slots.h"

namespace chainrule_engine {

struct AccumulateConfig {
  bool enabled = false;
  PyObject* accumulate_grad_type = nullptr;  // AccumulateGrad (exact type)
  PyObject* tensor_type = nullptr;           // Tensor (exact type)
  PyObject* counter_type = nullptr;          // VersionCounter
  PyObject* lock = nullptr;                  // accumulate._LOCK
  PyObject* stolen = nullptr;                // accumulate.STOLEN (a one-item list)
  Py_ssize_t variable = 0;                   // AccumulateGrad.variable
  TensorSlots t{};                           // Tensor's slots
  Py_ssize_t counter_v = 0;                  // VersionCounter.v
};

void configure_accumulate(bool enabled, PyObject* accumulate_grad_type, PyObject* tensor_type,
                          PyObject* counter_type, PyObject* lock, PyObject* stolen);
bool accumulate_enabled();

// engine._accumulate(node, grads, create_graph) when it is the common case (true);
// false, having done nothing, otherwise.
bool try_accumulate(PyObject* node, PyObject* grads, bool create_graph);

}  // namespace chainrule_engine
