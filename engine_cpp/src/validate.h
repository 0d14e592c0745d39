// Checks on what a node returns (validate.py). The common case (ndarrays, or Tensors
// holding them, of exactly the expected shape and dtype, or a node without input
// metadata) is decided here; anything else goes to the Python validate_outputs,
// which sums broadcast gradients down, casts dtypes and raises the errors.
#pragma once

#include "edge.h"
#include "python_api.h"

namespace chainrule_engine {

// Imports NumPy's C API (module init).
void init_numpy();

// The validated outputs (a new reference to a list or tuple).
PyObject* validate_outputs(PyObject* node, PyObject* outputs, const Edge* edges,
                           uint32_t num_edges);

}  // namespace chainrule_engine
