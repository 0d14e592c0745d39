// The backward of core's table ops (chainrule._ops._registry.OpNode.apply) in C++.
//
// Note [table-node fast path]
//     Measured after the engine moved into C++, `OpNode.apply` was most of what was
//     left of a backward step: ~1.7 µs of interpreter work (the env dict, unpacking
//     the saved tensors with their version checks, one Python call per formula and
//     its argument list) around ~0.6 µs of NumPy. This file does the same steps in
//     C++ and calls the formula itself. It only takes the common case and hands
//     everything else to `node.apply` before doing anything: create_graph, multi-output
//     ops, saved-tensor hooks, a modified saved tensor, a freed graph, a missing
//     formula, a node class that overrides apply, anything not shaped as expected.
//     It is switched on only while `OpNode.apply` and the helpers it mirrors are the
//     code it was written against (chainrule_engine/__init__.py compares their
//     fingerprint; engine_cpp/tests/test_python_engine_mirror.py says when to update).
#pragma once

#include "graph_task.h"
#include "python_api.h"

namespace chainrule_engine {

struct TableOps {
  bool enabled = false;
  PyObject* apply = nullptr;            // OpNode.apply (the function)
  PyObject* registry = nullptr;         // chainrule._ops._registry (for ARRAY_NS)
  PyObject* nondiff = nullptr;          // NONDIFF
  PyObject* not_implemented = nullptr;  // NOT_IMPLEMENTED
  PyObject* formula_type = nullptr;     // Formula
  PyObject* saved_type = nullptr;       // SavedTensor
};
extern TableOps table_ops;

// The node's outputs (a new reference), or nullptr with no Python error set when
// the node is not for this path (then call node.apply).
PyObject* try_table_apply(const GraphTask& task, const NodeRec& rec, PyObject* grads);

}  // namespace chainrule_engine
