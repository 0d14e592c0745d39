// Forward dispatch of core's hot Tensor methods in C (no Python frame per op).
//
// Note [fast methods]
//     With recording in C++ (Note [recorder fast path]), most of what was left of a
//     forward op like `y * 1.0001` or `y.sin()` was Python dispatch: the method,
//     apply_binary, binary_operands, scalar_tensor, apply_op, each a frame (~0.85 µs
//     of ~2 µs). Core lists the Tensor methods whose whole work is one table op
//     (Note [method slot] in chainrule/_ops/_method_slot.py); chainrule_engine puts a
//     FastMethod in their place. A FastMethod is a method descriptor
//     (Py_TPFLAGS_METHOD_DESCRIPTOR: `y.sin()` and the `*` operator call it unbound,
//     no bound method is made) with vectorcall. It does the common case itself and
//     calls the Python function it replaces for anything else, before doing any work:
//     - no dispatcher registered (`_registry._dispatch` is None, apply_op's first
//       check; Note [dispatch slot]), also for the in-place kind;
//     - self exactly Tensor (no subclass) holding a float or complex ndarray (integer
//       and bool inputs are cast or promoted in Python), positional arguments only;
//     - binary: other a Tensor of the very same dtype, or a Python float or int,
//       which becomes the cached 0-d constant of binary_operands (the `_SCALARS`
//       dict is read directly; `scalar_tensor` is called on a miss).
//     Then it runs `op.forward` with the attrs as keywords, as apply_op does. A
//     forward that raises an Exception is forgotten and the Python function runs
//     instead (forwards are pure), so errors (e.g. the broadcast message) are the
//     Python path's by construction. Then apply_op's steps in its order: with grad
//     mode on and an input requiring grad, the output is made by core's recording
//     slot (`_registry._recorder`, the C++ recorder when installed, called
//     directly); in inference mode by `_wrap_inference`; otherwise it is a plain
//     Tensor (`_plain_output`, inlined). The Python code mirrored is fingerprinted in
//     chainrule_engine/_mirror.py: the methods are installed only while it matches;
//     CHAINRULE_ENGINE_FAST_METHODS=0 keeps the Python functions.
#pragma once

#include "python_api.h"

namespace chainrule_engine {

// Adds the type `FastMethod(kind, op, attrs, python_fn)` to the module.
void add_fast_method_type(PyObject* module);

void configure_fast_methods(py::object tensor_type, py::object registry, py::object common,
                            py::object grad_state, py::object record_fn);

// What the methods of kind "inplace" need (Note [in-place fast methods] in
// fast_methods.cc); after configure_fast_methods.
void configure_inplace_methods(py::object operators, py::object bump_version,
                               py::object hooks_active, py::object extras_type,
                               py::object counter_type);

// Note [dual fast methods]: `hook()` is called once, the first time the forward_ad
// layer's dispatcher is the only one, to call configure_dual_methods.
void set_dual_hook(py::object hook);

// What Note [dual fast methods] (fast_methods.cc) needs from the forward_ad layer;
// after configure_fast_methods. enabled=false turns that path off.
void configure_dual_methods(bool enabled, py::object dispatchers, py::object dispatch,
                            py::object recording, py::object current, py::object paused, py::object raw_plans,
                            py::object raw_tangent, py::object ref_type,
                            py::object jvp_programs);

}  // namespace chainrule_engine
