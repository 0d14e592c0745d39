// The engine: runs a backward pass over the graph, exactly like engine.py's
// PythonEngine (same order, same hooks, same errors), with the bookkeeping in C++.
#pragma once

#include "python_api.h"

namespace chainrule_engine {

class Engine {
 public:
  // engine.execute(roots, root_grads, keep_graph, create_graph, targets=None,
  //                accumulate_grad=True) -> captured list
  py::object execute(py::object roots, py::object root_grads, py::object keep_graph,
                     py::object create_graph, py::object targets, bool accumulate_grad);

  // Queries used by hooks while a pass runs on this thread (multi-grad hooks).
  bool will_receive_grad(py::handle node) const;
  py::object hook_state() const;
};

}  // namespace chainrule_engine
