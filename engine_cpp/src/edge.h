// Edges: where one gradient a node returns goes. Mirrors a Python node's `_next`
// entries, `(node, input_nr)` or None, with the node replaced by its index in
// the GraphTask (Note [node indices] in graph_task.h).
#pragma once

#include <cstdint>

namespace chainrule_engine {

struct Edge {
  int32_t child;  // index of the node the gradient goes to; kNoEdge for None
  int64_t slot;   // which of the child's inputs (input_nr)
};

constexpr int32_t kNoEdge = -1;

inline bool is_edge(const Edge& e) { return e.child != kNoEdge; }

}  // namespace chainrule_engine
