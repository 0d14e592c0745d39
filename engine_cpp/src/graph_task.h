// GraphTask: the state of one backward pass (one call of backward or grad),
// like graph_task.py: dependency counts, input buffers, which nodes run when only
// some inputs are wanted (`inputs=`), where gradients are captured, and the
// accumulations deferred to the end (Note [atomic accumulation] in engine.py).
//
// Note [node indices]
//     The task first discovers every node reachable from the roots (with the
//     GIL: it reads each node's `_next` and `_seq` once) and numbers them. From
//     then on the graph is plain C++ data (NodeRec + Edge arrays), so the walks
//     that decide what runs and count dependencies run without the GIL (Note
//     [GIL] in engine.cc), and per-node state is a vector lookup, not a hash.
//
// Note [no recursion]
//     Every walk uses an explicit stack or queue: graphs may be 1,000,000 nodes
//     deep.
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "edge.h"
#include "node.h"
#include "python_api.h"

namespace chainrule_engine {

// Python object identity -> node index (open addressing, linear probing).
class PtrMap {
 public:
  PtrMap();
  int32_t find(PyObject* key) const;              // -1 when absent
  void insert(PyObject* key, int32_t value);      // key must be absent

 private:
  void grow();
  size_t slot_of(PyObject* key) const;
  std::vector<std::pair<PyObject*, int32_t>> slots_;
  size_t mask_;
  size_t count_ = 0;
};

struct Capture {
  int64_t slot;   // which input of the node
  int32_t index;  // where in `captured` its gradient goes
};

class GraphTask {
 public:
  GraphTask(PyObject* keep_graph, PyObject* create_graph, bool accumulate_grad);
  ~GraphTask();  // with the GIL: drops every reference the task holds
  GraphTask(const GraphTask&) = delete;
  GraphTask& operator=(const GraphTask&) = delete;

  // -- with the GIL ----------------------------------------------------------------
  // The root nodes, deduplicated in order (dict.fromkeys), then everything
  // reachable from them.
  void discover(PyObject* roots);
  // targets: (node, slot) pairs whose incoming gradient is wanted.
  void add_targets(PyObject* targets);

  // -- without the GIL -------------------------------------------------------------
  // Restrict the pass to nodes on a path from the roots to a target.
  void init_to_execute();
  // Count, for every node, the edges that will deliver a gradient to it.
  void compute_dependencies();

  // -- queries ---------------------------------------------------------------------
  int32_t index_of(PyObject* node) const { return index_.find(node); }
  bool filtered() const { return filtered_; }
  bool should_run(int32_t i) const { return !filtered_ || should_run_[i]; }
  bool is_captured(int32_t node, int64_t slot) const;
  const std::vector<Capture>* captures_of(int32_t node) const;
  bool reachable(int32_t node) const { return reachable_[node] != 0; }
  // The edge may deliver a gradient in this pass (compute_dependencies' filter).
  bool delivers(const Edge& e) const {
    return is_edge(e) && (should_run(e.child) || is_captured(e.child, e.slot));
  }

  // For a `_next` entry of any node, also one outside the pass:
  // `e is not None and (e[0] in should_run or e in captures)`.
  bool wants(PyObject* entry) const;

  size_t size() const { return nodes.size(); }
  const Edge* edges_of(const NodeRec& rec) const { return edges.data() + rec.first_edge; }

  PyObject* keep_graph;     // as passed (truthiness decides; Python callbacks get the object)
  PyObject* create_graph;
  bool keep_graph_flag;
  bool create_graph_flag;
  bool accumulate_grad;

  std::vector<NodeRec> nodes;
  std::vector<Edge> edges;
  std::vector<int32_t> root_nodes;
  std::vector<int32_t> dependencies;
  std::vector<PyObject*> buffers;    // per node: its input buffer (a list) or null
  PyObject* captured = nullptr;      // list; returned by execute
  PyObject* hook_state = nullptr;    // dict, made on first use
  std::vector<std::pair<int32_t, PyObject*>> pending_accumulations;  // (node, grads)

 private:
  int32_t intern(PyObject* node, std::vector<int32_t>& to_expand);
  void expand(int32_t index, std::vector<int32_t>& to_expand);
  void read_edge(PyObject* entry, std::vector<int32_t>& to_expand);

  PtrMap index_;
  std::vector<int32_t> target_nodes_;
  bool filtered_ = false;            // false: every reachable node runs
  std::vector<uint8_t> should_run_;
  std::vector<uint8_t> reachable_;   // nodes seen by compute_dependencies
  std::unordered_map<int32_t, std::vector<Capture>> captures_;
  // Targets outside the pass (unreachable from the roots): (node, slot), borrowed
  // from the caller's `targets` for the length of the pass.
  std::vector<std::pair<PyObject*, int64_t>> outside_targets_;
};

}  // namespace chainrule_engine
