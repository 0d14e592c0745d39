#define PY_ARRAY_UNIQUE_SYMBOL chainrule_engine_ARRAY_API
#define NO_IMPORT_ARRAY
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "view_methods.h"

#include <numpy/arrayobject.h>

#include <cstring>
#include <stdexcept>

#include "slots.h"
#include "view_maker.h"

namespace chainrule_engine {

namespace {

constexpr Py_ssize_t kMaxDims = 32;

struct ViewMethodConfig {
  PyTypeObject* tensor = nullptr;
  TensorSlots t{};
  PyObject* registry_dict = nullptr;  // _registry.__dict__: _dispatch
  PyObject* shape_dict = nullptr;     // shape.__dict__: make_view, _view_fn, the publics
  PyObject* indexing_dict = nullptr;  // indexing.__dict__: make_view, _dual, _select
  PyObject* on = nullptr;             // _torch_function.ON (a one-item list)
  PyObject* modes = nullptr;          // _torch_function.MODES (a one-item list)
  PyObject* zero = nullptr;           // 0
  PyObject* c_make_view = nullptr;    // _engine.make_view: called directly
};
ViewMethodConfig mc;
bool mc_ready = false;
PyObject* mc_refs = nullptr;  // keeps mc's objects alive

struct MethodNames {
  PyObject* make_view = PyUnicode_InternFromString("make_view");
  PyObject* view_fn = PyUnicode_InternFromString("_view_fn");
  PyObject* dual = PyUnicode_InternFromString("_dual");
  PyObject* t_view_fn = PyUnicode_InternFromString("_T_VIEW_FN");
  PyObject* empty = PyUnicode_InternFromString("EMPTY");
  PyObject* transpose = PyUnicode_InternFromString("transpose");
  PyObject* unsqueeze = PyUnicode_InternFromString("unsqueeze");
  PyObject* permute = PyUnicode_InternFromString("permute");
  PyObject* view = PyUnicode_InternFromString("_view");
  PyObject* select = PyUnicode_InternFromString("_select");
  PyObject* select_array = PyUnicode_InternFromString("select_array");
  PyObject* dispatch = PyUnicode_InternFromString("_dispatch");
  PyObject* shape = PyUnicode_InternFromString("shape");
  PyObject* dim0 = PyUnicode_InternFromString("dim0");
  PyObject* dim1 = PyUnicode_InternFromString("dim1");
  PyObject* dim = PyUnicode_InternFromString("dim");
  PyObject* dims = PyUnicode_InternFromString("dims");
  PyObject* index = PyUnicode_InternFromString("index");
};
const MethodNames& mn() {
  static const MethodNames* names = new MethodNames();
  return *names;
}

// A module global (borrowed); nullptr with an error when missing.
PyObject* global(PyObject* dict, PyObject* name) {
  PyObject* value = PyDict_GetItemWithError(dict, name);
  if (value == nullptr && !PyErr_Occurred()) PyErr_SetObject(PyExc_NameError, name);
  return value;
}

// Whether the dispatching wrapper would call the function itself for self (the other
// arguments being ints): with dispatch off, yes; with it on (Note [torch function
// slot]), for an exact Tensor while no mode is active.
bool wrapper_calls_function(PyObject* self) {
  if (PyList_GET_ITEM(mc.on, 0) == Py_False) return PyObject_TypeCheck(self, mc.tensor);
  return Py_TYPE(self) == mc.tensor && PyList_GET_ITEM(mc.modes, 0) == mc.zero;
}

// self's array when the fast path may run at all (Note [view methods]), else nullptr.
PyArrayObject* gate(PyObject* const* args, Py_ssize_t nargs) {
  if (!mc_ready || nargs < 1 || !wrapper_calls_function(args[0])) return nullptr;
  PyObject* dispatch = PyDict_GetItem(mc.registry_dict, mn().dispatch);
  if (dispatch != Py_None) return nullptr;
  PyObject* data = slot(args[0], mc.t.data);
  if (data == nullptr || Py_TYPE(data) != &PyArray_Type) return nullptr;
  return reinterpret_cast<PyArrayObject*>(data);
}

// An exact int as a Py_ssize_t; false (no error) for anything else.
bool exact_int(PyObject* value, Py_ssize_t* out) {
  if (!PyLong_CheckExact(value)) return false;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (overflow || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  *out = static_cast<Py_ssize_t>(v);
  return true;
}

// _wrap_dim(dim, ndim) for an exact int in range; false (no error) otherwise.
bool wrap_dim(PyObject* dim, Py_ssize_t ndim, Py_ssize_t* out) {
  Py_ssize_t d;
  if (!exact_int(dim, &d)) return false;
  Py_ssize_t n = ndim > 1 ? ndim : 1;
  if (d < -n || d >= n) return false;
  *out = d < 0 ? d + n : d;
  return true;
}

// The int arguments of `f(*ints)` or `f(ints)` (a tuple or list), at most kMaxDims.
Py_ssize_t int_args(PyObject* const* args, Py_ssize_t nargs, Py_ssize_t* out) {
  PyObject* const* items = args;
  Py_ssize_t n = nargs;
  if (nargs == 1 && (PyTuple_CheckExact(args[0]) || PyList_CheckExact(args[0]))) {
    items = PySequence_Fast_ITEMS(args[0]);
    n = PySequence_Fast_GET_SIZE(args[0]);
  }
  if (n > kMaxDims) return -1;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!exact_int(items[i], &out[i])) return -1;
  }
  return n;
}

// A tuple of n Python ints.
PyObject* int_tuple(const Py_ssize_t* values, Py_ssize_t n) {
  PyObject* tuple = PyTuple_New(n);
  for (Py_ssize_t i = 0; tuple != nullptr && i < n; ++i) {
    PyObject* v = PyLong_FromSsize_t(values[i]);
    if (v == nullptr) Py_CLEAR(tuple);
    else PyTuple_SET_ITEM(tuple, i, v);
  }
  return tuple;
}

// _infer_shape's successful cases: every size >= 0 with the product numel, or one -1
// standing for numel / (the others' product). False (no error) otherwise.
bool infer_shape(Py_ssize_t* shape, Py_ssize_t n, Py_ssize_t numel) {
  Py_ssize_t known = 1, inferred = -1;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (shape[i] == -1 && inferred < 0) {
      inferred = i;
    } else if (shape[i] < 0 || __builtin_mul_overflow(known, shape[i], &known)) {
      return false;
    }
  }
  if (n == 0) return false;
  if (inferred < 0) return known == numel;
  if (known == 0 || numel % known != 0) return false;
  shape[inferred] = numel / known;
  return true;
}

// {k0: v0, k1: v1}, stealing the values' references (nullptr for an error).
PyObject* attrs_of(PyObject* k0, PyObject* v0, PyObject* k1 = nullptr, PyObject* v1 = nullptr) {
  Ref a(PyDict_New()), r0(v0), r1(v1);
  if (!a || v0 == nullptr || (k1 != nullptr && v1 == nullptr)) return nullptr;
  if (PyDict_SetItem(a.get(), k0, v0) < 0) return nullptr;
  if (k1 != nullptr && PyDict_SetItem(a.get(), k1, v1) < 0) return nullptr;
  return a.release();
}

// `factory(*args)`: a view_fn as `_view_fn(...)` / `_dual(...)` make it, the factory
// read from `dict` now. New reference or nullptr.
PyObject* view_fn_of(PyObject* dict, PyObject* factory_name, PyObject* const* args,
                     Py_ssize_t nargs) {
  PyObject* factory = global(dict, factory_name);
  return factory ? PyObject_Vectorcall(factory, args, nargs, nullptr) : nullptr;
}

// `make_view(op, base, attrs, view_fn)` with the maker now in `dict` (the C one
// called directly). Steals view_fn.
PyObject* make(PyObject* dict, PyObject* op, PyObject* base, PyObject* attrs, PyObject* view_fn) {
  Ref fn(view_fn);
  PyObject* maker = view_fn ? global(dict, mn().make_view) : nullptr;
  if (maker == nullptr) return nullptr;
  PyObject* args[] = {op, base, attrs, view_fn};
  if (maker == mc.c_make_view) return view_make(nullptr, args, 4);
  return PyObject_Vectorcall(maker, args, 4, nullptr);
}

// --- the entries (Note [view methods]) -----------------------------------------------

PyObject* t_entry(PyObject* op, PyObject* const* args, Py_ssize_t nargs, bool* handled) {
  PyArrayObject* a = gate(args, nargs);
  if (a == nullptr || nargs != 1 || PyArray_NDIM(a) > 2) return nullptr;
  *handled = true;
  PyObject* empty = global(mc.shape_dict, mn().empty);
  PyObject* fn = empty ? global(mc.shape_dict, mn().t_view_fn) : nullptr;
  return fn ? make(mc.shape_dict, op, args[0], empty, Py_NewRef(fn)) : nullptr;
}

// A one-view op whose attrs are `attrs` and view_fn `_view_fn(op, attrs, public, *rest)`.
PyObject* shape_view(PyObject* op, PyObject* base, PyObject* attrs_new, PyObject* public_name,
                     PyObject* const* rest, Py_ssize_t nrest) {
  Ref attrs(attrs_new);
  PyObject* public_fn = attrs ? global(mc.shape_dict, public_name) : nullptr;
  if (public_fn == nullptr) return nullptr;
  PyObject* args[5] = {op, attrs.get(), public_fn};
  for (Py_ssize_t i = 0; i < nrest; ++i) args[3 + i] = rest[i];
  PyObject* fn = view_fn_of(mc.shape_dict, mn().view_fn, args, 3 + nrest);
  return make(mc.shape_dict, op, base, attrs.get(), fn);
}

PyObject* transpose_entry(PyObject* op, PyObject* const* args, Py_ssize_t nargs,
                          bool* handled) {
  PyArrayObject* a = gate(args, nargs);
  Py_ssize_t nd = a ? PyArray_NDIM(a) : 0, d0, d1;
  if (nd == 0 || nargs != 3 || !wrap_dim(args[1], nd, &d0) || !wrap_dim(args[2], nd, &d1)) {
    return nullptr;
  }
  *handled = true;
  Ref v0(PyLong_FromSsize_t(d0)), v1(PyLong_FromSsize_t(d1));
  if (!v0 || !v1) return nullptr;
  PyObject* rest[] = {v0.get(), v1.get()};
  const MethodNames& n = mn();
  return shape_view(op, args[0], attrs_of(n.dim0, Py_NewRef(v0.get()), n.dim1,
                                          Py_NewRef(v1.get())), n.transpose, rest, 2);
}

PyObject* unsqueeze_entry(PyObject* op, PyObject* const* args, Py_ssize_t nargs,
                          bool* handled) {
  PyArrayObject* a = gate(args, nargs);
  Py_ssize_t d;
  if (a == nullptr || nargs != 2 || !wrap_dim(args[1], PyArray_NDIM(a) + 1, &d)) return nullptr;
  *handled = true;
  Ref v(PyLong_FromSsize_t(d));
  if (!v) return nullptr;
  PyObject* rest[] = {v.get()};
  return shape_view(op, args[0], attrs_of(mn().dim, Py_NewRef(v.get())), mn().unsqueeze,
                    rest, 1);
}

// permute's dims: one per dimension, each in range (wrapped), no two alike.
bool permutation(PyObject* const* args, Py_ssize_t nargs, Py_ssize_t nd, Py_ssize_t* dims) {
  if (nd == 0 || int_args(args, nargs, dims) != nd) return false;
  bool seen[kMaxDims] = {};
  for (Py_ssize_t i = 0; i < nd; ++i) {
    Py_ssize_t d = dims[i] < 0 ? dims[i] + nd : dims[i];
    if (d < 0 || d >= nd || seen[d]) return false;
    seen[d] = true;
    dims[i] = d;
  }
  return true;
}

PyObject* permute_entry(PyObject* op, PyObject* const* args, Py_ssize_t nargs, bool* handled) {
  PyArrayObject* a = gate(args, nargs);
  Py_ssize_t dims[kMaxDims];
  if (a == nullptr || !permutation(args + 1, nargs - 1, PyArray_NDIM(a), dims)) return nullptr;
  *handled = true;
  Ref order(int_tuple(dims, PyArray_NDIM(a)));
  if (!order) return nullptr;
  PyObject* rest[] = {order.get()};
  return shape_view(op, args[0], attrs_of(mn().dims, Py_NewRef(order.get())), mn().permute,
                    rest, 1);
}

// view and reshape: the shape parsed and inferred as _shape_arg and _infer_shape do.
PyObject* shape_entry(PyObject* op, PyObject* const* args, Py_ssize_t nargs, bool* handled,
                      bool reshape) {
  PyArrayObject* a = gate(args, nargs);
  Py_ssize_t shape[kMaxDims];
  Py_ssize_t n = a && nargs > 1 ? int_args(args + 1, nargs - 1, shape) : -1;
  if (n < 0 || !infer_shape(shape, n, PyArray_SIZE(a))) return nullptr;
  if (reshape && !PyArray_IS_C_CONTIGUOUS(a)) return nullptr;   // _viewable decides
  *handled = true;
  Ref sizes(int_tuple(shape, n));
  if (!sizes) return nullptr;
  PyObject* rest[] = {sizes.get()};
  PyObject* out = shape_view(op, args[0], attrs_of(mn().shape, Py_NewRef(sizes.get())),
                             mn().view, rest, 1);
  if (out == nullptr && !reshape && PyErr_ExceptionMatches(PyExc_ValueError)) {
    PyErr_Clear();                       // view's RuntimeError: the Python function's
    *handled = false;
  }
  return out;
}

PyObject* view_entry_fn(PyObject* op, PyObject* const* args, Py_ssize_t nargs, bool* handled) {
  return shape_entry(op, args, nargs, handled, false);
}

PyObject* reshape_entry(PyObject* op, PyObject* const* args, Py_ssize_t nargs, bool* handled) {
  return shape_entry(op, args, nargs, handled, true);
}

// `self[i]` for an int i in range: _select(self, 0, i % n).
PyObject* getitem_entry(PyObject* op, PyObject* const* args, Py_ssize_t nargs, bool* handled) {
  PyArrayObject* a = gate(args, nargs);
  Py_ssize_t i;
  if (a == nullptr || nargs != 2 || PyArray_NDIM(a) == 0 || !exact_int(args[1], &i)) {
    return nullptr;
  }
  Py_ssize_t n = PyArray_DIM(a, 0);
  if (i < -n || i >= n) return nullptr;
  *handled = true;
  const MethodNames& names = mn();
  Ref zero(PyLong_FromLong(0)), index(PyLong_FromSsize_t(i < 0 ? i + n : i));
  if (!zero || !index) return nullptr;
  Ref attrs(attrs_of(names.dim, Py_NewRef(zero.get()), names.index, Py_NewRef(index.get())));
  if (!attrs) return nullptr;
  PyObject* dict = mc.indexing_dict;
  PyObject* array_fn = global(dict, names.select_array);
  PyObject* select = array_fn ? global(dict, names.select) : nullptr;
  if (select == nullptr) return nullptr;
  PyObject* fn_args[] = {array_fn, select, zero.get(), index.get()};
  PyObject* fn = view_fn_of(dict, names.dual, fn_args, 4);
  return make(dict, op, args[0], attrs.get(), fn);
}

}  // namespace

ViewEntry view_entry(const char* method, const char** keyword) {
  struct Named { const char* name; ViewEntry entry; const char* keyword; };
  static const Named entries[] = {
      {"t", t_entry, nullptr}, {"transpose", transpose_entry, nullptr},
      {"unsqueeze", unsqueeze_entry, nullptr}, {"permute", permute_entry, "dims"},
      {"view", view_entry_fn, "size"}, {"reshape", reshape_entry, "shape"},
      {"getitem", getitem_entry, nullptr}};
  for (const Named& e : entries) {
    if (std::strcmp(e.name, method) == 0) {
      *keyword = e.keyword;
      return e.entry;
    }
  }
  return nullptr;
}

void configure_view_methods(bool enabled, py::object tensor_type, py::object registry,
                            py::object shape, py::object indexing, py::object torch_function_on,
                            py::object torch_function_modes, py::object c_make_view) {
  for (PyObject* flag : {torch_function_on.ptr(), torch_function_modes.ptr()}) {
    if (!PyList_CheckExact(flag) || PyList_GET_SIZE(flag) < 1) {
      throw std::runtime_error("view methods: ON and MODES must be one-item lists");
    }
  }
  py::object zero = py::int_(0);
  py::object registry_dict = registry.attr("__dict__");
  py::object shape_dict = shape.attr("__dict__");
  py::object indexing_dict = indexing.attr("__dict__");
  ViewMethodConfig c;
  c.tensor = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
  c.t = tensor_slots(tensor_type.ptr());
  c.registry_dict = registry_dict.ptr();
  c.shape_dict = shape_dict.ptr();
  c.indexing_dict = indexing_dict.ptr();
  c.on = torch_function_on.ptr();
  c.modes = torch_function_modes.ptr();
  c.zero = zero.ptr();
  c.c_make_view = c_make_view.ptr();
  mn();
  py::tuple keep = py::make_tuple(tensor_type, registry_dict, shape_dict, indexing_dict,
                                  torch_function_on, torch_function_modes, zero,
                                  c_make_view);
  PyObject* old = mc_refs;
  mc_refs = keep.release().ptr();
  mc = c;
  mc_ready = enabled;
  Py_XDECREF(old);
}

}  // namespace chainrule_engine
