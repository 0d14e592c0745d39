// The commonest view methods in C: their argument parsing, then the view maker.
//
// Note [view methods]
//     With make_view in C (Note [view maker]), what was left of `w.t()`, `x.view(-1)`
//     or `x[0]` was Python: the dispatching wrapper (Note [torch function slot]) and
//     the public function parsing its arguments, two frames around one C call. Core
//     lists them in the method slot as kind "view" (Note [method slot]; attrs
//     {"method": name}); a FastMethod of that kind parses the common arguments here
//     and calls the view maker now in the op's module (`make_view` there: the C one
//     directly) with the op, attrs and view_fn the Python function would make, read
//     from the module at each call (`_view_fn`, `_dual`, the public function a
//     view_fn replays). It declines, before any work, calling the Python function,
//     whenever that could decide otherwise: not configured; keyword arguments (but
//     `size=None` / `shape=None` / `dims=None`, as function forms' wrappers pass
//     them on); the dispatching wrapper not calling the function itself (with
//     `_torch_function.ON` set: self not exactly Tensor, or a mode active in some
//     thread; ints never dispatch); a dispatcher registered (a dual level, vmap,
//     ...); self not a Tensor holding an exact ndarray; an argument not an exact int
//     (or, for view/reshape/permute, a tuple or list of them); a dim or index out of
//     range or a shape that does not fit (every error message is Python's); for
//     reshape, an array not C-contiguous; for view, a ValueError from the maker (the
//     forward is pure: the Python function runs it again and raises its
//     RuntimeError). Entries: t, transpose, unsqueeze, permute, view, reshape and
//     __getitem__ with an int. The Python functions mirrored are fingerprinted
//     (_mirror.VIEW_METHODS_FINGERPRINT); CHAINRULE_ENGINE_VIEWS=0 keeps them.
#pragma once

#include "python_api.h"

namespace chainrule_engine {

// A view method's C entry: the view, or nullptr; *handled false (and no error set)
// when the Python function must run instead.
using ViewEntry = PyObject* (*)(PyObject* op, PyObject* const* args, Py_ssize_t nargs,
                                bool* handled);

// The entry for attrs["method"] of a "view" entry of the method slot, or nullptr;
// *keyword: the name of its keyword-only parameter (taken when None), or nullptr.
ViewEntry view_entry(const char* method, const char** keyword);

void configure_view_methods(bool enabled, py::object tensor_type, py::object registry,
                            py::object shape, py::object indexing, py::object torch_function_on,
                            py::object torch_function_modes, py::object c_make_view);

}  // namespace chainrule_engine
