// The backward of core's table ops (chainrule._ops._registry.OpNode.apply) in C++.
//
// Note [table-node fast path]
//     Measured after the engine moved into C++, `OpNode.apply` was most of what was
//     left of a backward step: ~1.7 µs of interpreter work (the env dict, unpacking
//     the saved tensors with their version checks, one Python call per formula and
//     its argument list) around ~0.6 µs of NumPy. This file does the same steps in
//     C++ and calls the formula itself. With create_graph it takes OpNode.apply's
//     other branch too: the formulas run on TENSOR_NS with the saved values as
//     SavedTensor.as_tensor gives them (a saved input's own tensor inline, a saved
//     output through as_tensor itself, which rebuilds it and tells the tangent
//     slot), gradients wrapped as `_as_tensor` does; the Tensors they return are
//     checked in C by validate.cc. It only takes the common case and hands
//     everything else to `node.apply` before doing anything: multi-output
//     ops, saved-tensor hooks, a modified saved tensor, a freed graph, a missing
//     formula, a node class that overrides apply, anything not shaped as expected.
//     What it knows of an op (its formulas, the names they take, where each name is
//     found) is worked out once per node class; the node's and saved tensors' fields
//     are read at their slot offsets (Note [reading nodes by slot] in node.h).
//     `OpNode.num_inputs` and `OpNode.release_saved` are inlined here too.
//     It is switched on only while `OpNode.apply` and the helpers it mirrors are the
//     code it was written against (chainrule_engine/__init__.py compares their
//     fingerprint; engine_cpp/tests/test_python_engine_mirror.py says when to update).
#pragma once

#include "graph_task.h"
#include "python_api.h"
#include "slots.h"

namespace chainrule_engine {

struct TableOps {
  bool enabled = false;
  PyObject* apply = nullptr;            // OpNode.apply (the function)
  PyObject* num_inputs = nullptr;       // OpNode.num_inputs
  PyObject* release_saved = nullptr;    // OpNode.release_saved
  PyObject* registry = nullptr;         // chainrule._ops._registry (for ARRAY_NS)
  PyObject* nondiff = nullptr;          // NONDIFF
  PyObject* not_implemented = nullptr;  // NOT_IMPLEMENTED
  PyObject* formula_type = nullptr;     // Formula
  PyObject* saved_type = nullptr;       // SavedTensor
  PyObject* counter_type = nullptr;     // VersionCounter
  PyTypeObject* tensor = nullptr;       // Tensor (create_graph: wrapping gradients)
  TensorSlots tensor_slots{};
  // Slot descriptors and offsets: OpNode's _saved, _attrs, _in_meta, _out_meta;
  // SavedTensor's data, counter, version; VersionCounter's v.
  PyObject* saved_descr = nullptr;
  PyObject* attrs_descr = nullptr;
  PyObject* in_meta_descr = nullptr;
  PyObject* out_meta_descr = nullptr;
  Py_ssize_t saved = 0, attrs = 0, in_meta = 0, out_meta = 0;
  Py_ssize_t saved_data = 0, saved_counter = 0, saved_version = 0, counter_v = 0;
  Py_ssize_t saved_tensor = 0;          // SavedTensor's `tensor` (None for an output)
};
extern TableOps table_ops;

// Set table_ops from the Python objects (configure_table_ops in module.cc).
void configure_table_layout(TableOps& t, PyObject* op_node_type);

// The node's outputs (a new reference), or nullptr with no Python error set when
// the node is not for this path (then call node.apply).
PyObject* try_table_apply(const GraphTask& task, const NodeRec& rec, PyObject* grads);

// OpNode.num_inputs(node) for table nodes; -1 for any other node.
Py_ssize_t table_num_inputs(PyObject* node);

// OpNode.release_saved(node) for table nodes (true); false for any other node.
bool table_release_saved(PyObject* node);

// node._in_meta for table nodes (borrowed; nullptr for any other node or unset).
PyObject* table_in_meta(PyObject* node);

}  // namespace chainrule_engine
