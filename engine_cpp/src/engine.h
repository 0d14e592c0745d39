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

// engine.needed_edges(node): which of the node's edges the running pass of this
// thread wants gradients for (a list of bools), or None for all. Called by every
// OpNode.apply, so it is a plain METH_O function (no pybind11 dispatch).
PyObject* needed_edges(PyObject* module, PyObject* node);

}  // namespace chainrule_engine
