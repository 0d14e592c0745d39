// What the engine reads from a Python node (chainrule.autograd.node.Node): its
// sequence number, its edges, whether it is an AccumulateGrad, and its hook
// tables. The node itself stays a Python object; see Note [who runs what].
#pragma once

#include "python_api.h"

namespace chainrule_engine {

struct NodeRec {
  PyObject* node;       // strong reference, released by the GraphTask
  int64_t seq;          // Note [sequence numbers] in node.py
  uint32_t first_edge;  // this node's edges: GraphTask::edges[first_edge, +num_edges)
  uint32_t num_edges;
  bool is_accumulate;   // isinstance(node, AccumulateGrad)
};

// node._seq
int64_t read_seq(PyObject* node);

// isinstance(node, AccumulateGrad)
bool is_accumulate_grad(PyObject* node);

// Whether the tensor pre-hooks must run before the node: tensor hooks or
// retain_grad on one of its outputs, or, for a leaf's AccumulateGrad, any
// extra state on the leaf (its hooks live there).
bool needs_tensor_pre_hooks(const NodeRec& rec);

// node.num_inputs()
Py_ssize_t num_inputs(PyObject* node);

// Whether anomaly detection is on (anomaly_mode.STATE.enabled).
bool anomaly_enabled();

// anomaly_mode.call_node(node, grads, create_graph): apply with anomaly checks.
PyObject* call_anomaly(PyObject* node, PyObject* grads, PyObject* create_graph);

// node.apply(grads, create_graph); a new reference.
PyObject* call_apply_plain(PyObject* node, PyObject* grads, PyObject* create_graph);

// node.release_saved()
void release_saved(PyObject* node);

}  // namespace chainrule_engine
