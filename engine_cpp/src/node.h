// What the engine reads from a Python node (chainrule.autograd.node.Node): its
// sequence number, its edges, whether it is an AccumulateGrad, and its hook
// tables. The node itself stays a Python object; see Note [who runs what].
//
// Note [reading nodes by slot]
//     getattr costs ~50 ns a field (more on OpNode, whose __getattr__ puts every
//     lookup through the slower hook), and the engine reads about twenty fields a
//     node. So, per node class and once, the engine checks that the class resolves
//     `_next` and `_seq` to Node's own slots and the hook tables (`_pre_hooks`, ...)
//     to plain class defaults (no descriptor); for such classes it reads the slots
//     at their offsets and the hook tables from the instance __dict__ (falling back
//     to the class default), which is what attribute access would find. Any other
//     class is read with getattr.
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

// Where Node keeps its fields (configure(): from chainrule.autograd.node.Node).
struct NodeLayout {
  PyObject* next_descr = nullptr;  // Node._next, Node._seq (member descriptors)
  PyObject* seq_descr = nullptr;
  Py_ssize_t next = 0, seq = 0;    // their offsets
  PyObject* num_inputs = nullptr;  // Node.num_inputs (returns 1), inlined for its users
};
extern NodeLayout node_layout;
void configure_node_layout(PyObject* node_type);

// node._seq
int64_t read_seq(PyObject* node);

// node._next, a new reference.
PyObject* read_next(PyObject* node);

// isinstance(node, AccumulateGrad)
bool is_accumulate_grad(PyObject* node);

// Whether the tensor pre-hooks must run before the node: tensor hooks or
// retain_grad on one of its outputs, or, for a leaf's AccumulateGrad, hooks on
// the leaf (engine._leaf_has_hooks).
bool needs_tensor_pre_hooks(const NodeRec& rec);

// bool(node._pre_hooks), bool(node._post_hooks)
bool has_pre_hooks(PyObject* node);
bool has_post_hooks(PyObject* node);

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
