// core's make_view in C (Note [view maker slot] in chainrule/_ops/views.py).
//
// Note [view maker]
//     Every view op (`x.view(-1)`, `w.t()`, `x[0]`, `x.unsqueeze(1)`, ...) ends in
//     views.make_view: the forward, the recording (or a plain Tensor), then the links
//     of Note [views share memory and version] (`_base`, the root's version counter,
//     new `_Extras` holding the view_fn, the weak listing on the root). In Python
//     that is ~15k instructions around a forward of a few thousand. `make_view` here
//     mirrors its fast path (Note [view fast path]) in the same order: it declines,
//     before any work, where the Python function would take its general path (an op
//     not in `_FAST_OPS` as True, a dispatcher registered) and for whatever it does
//     not handle (a base not exactly Tensor, extras not exactly _Extras, inference
//     mode, attrs not a dict), calling core's make_view. The forward's errors are
//     Python's (it is the same call); the recording is core's recording slot (the C++
//     recorder called directly when installed); composing view_fns (`_compose`),
//     and a first version counter (`counter_of`) are the Python functions; the weak
//     listing (`_register`) is done here where the root has its _Extras (Python's
//     otherwise, which makes them), and so are the marks of a view made under no_grad
//     (`_made_under_no_grad`, Note [how a view was made]). Installed while make_view
//     and _Extras have the fingerprints it was written against
//     (chainrule_engine/_mirror.py); CHAINRULE_ENGINE_VIEWS=0 keeps the Python function.
#pragma once

#include "python_api.h"

namespace chainrule_engine {

void configure_view_maker(py::object python_make_view, py::object registry, py::object views,
                          py::object tensor_type, py::object extras_type,
                          py::object grad_state, py::object record_fn,
                          py::object counter_of, py::object python_register);

// make_view(op, base, attrs, view_fn): a METH_FASTCALL function.
PyObject* view_make(PyObject* self, PyObject* const* args, Py_ssize_t nargs);

}  // namespace chainrule_engine
