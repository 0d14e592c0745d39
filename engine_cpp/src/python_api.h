// Shared by every file of the engine: the CPython/pybind11 headers, the interned
// attribute names and the Python helpers the engine calls back into.
//
// Note [who runs what]
//     The graph walk, dependency counts, ready queue, input buffers, captures and
//     the bookkeeping of a pass are C++. Python runs only what is Python by nature:
//     the nodes themselves (node.apply, node.release_saved, node.num_inputs), the
//     hooks, and the slow paths of validation (summing a broadcast gradient down,
//     casting, the error messages). For those the engine calls the Python engine's
//     own helpers, so behaviour and messages are the Python engine's by
//     construction.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

namespace chainrule_engine {

namespace py = pybind11;

// Attribute and method names, interned once (module init).
struct Names {
  PyObject* next;           // _next
  PyObject* seq;            // _seq
  PyObject* tensor_hooks;   // _tensor_hooks
  PyObject* retain_hooks;   // _retain_hooks
  PyObject* pre_hooks;      // _pre_hooks
  PyObject* post_hooks;     // _post_hooks
  PyObject* variable;       // variable (AccumulateGrad)
  PyObject* extra;          // _extra (Tensor)
  PyObject* hooks;          // hooks (a Tensor's extras)
  PyObject* post_acc_hooks; // post_acc_hooks (a Tensor's extras)
  PyObject* getattribute;   // __getattribute__
  PyObject* apply;          // apply
  PyObject* release_saved;  // release_saved
  PyObject* num_inputs;     // num_inputs
  PyObject* in_meta;        // _in_meta
  PyObject* enabled;        // enabled (anomaly mode state)
  PyObject* acquire;        // acquire, release (a lock's)
  PyObject* release;
  PyObject* node_observer;  // _node_observer (engine.py), its enter and exit
  PyObject* enter;
  PyObject* exit;
};
extern Names names;
void init_names();

// The Python pieces the engine uses, handed over by chainrule_engine/__init__.py
// (configure()). Borrowed from a module-level tuple that keeps them alive.
struct Helpers {
  PyObject* accumulate_grad_type = nullptr;  // chainrule.autograd.node.AccumulateGrad
  PyObject* run_tensor_pre_hooks = nullptr;  // engine._run_tensor_pre_hooks
  PyObject* run_node_pre_hooks = nullptr;    // engine._run_node_pre_hooks
  PyObject* run_node_post_hooks = nullptr;   // engine._run_node_post_hooks
  PyObject* validate_outputs = nullptr;      // validate.validate_outputs
  PyObject* anomaly_state = nullptr;         // anomaly_mode.STATE
  PyObject* anomaly_call_node = nullptr;     // anomaly_mode.call_node
  PyObject* accumulate = nullptr;            // engine._accumulate (deferred AccumulateGrad)
  PyObject* engine_globals = nullptr;        // engine.py's module dict (_accumulate's globals)
};
extern Helpers helpers;
bool helpers_ready();

// A CPython call returned NULL: turn the pending Python exception (type, value,
// traceback) into a C++ exception; pybind11 restores it when it reaches Python.
[[noreturn]] inline void throw_python_error() { throw py::error_already_set(); }

inline PyObject* check(PyObject* result) {
  if (result == nullptr) throw_python_error();
  return result;
}

// An owned reference, released on scope exit (also while unwinding).
class Ref {
 public:
  Ref() = default;
  explicit Ref(PyObject* owned) : p_(owned) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& other) noexcept : p_(other.p_) { other.p_ = nullptr; }
  Ref& operator=(Ref&& other) noexcept {
    if (this != &other) {
      Py_XDECREF(p_);
      p_ = other.p_;
      other.p_ = nullptr;
    }
    return *this;
  }
  ~Ref() { Py_XDECREF(p_); }
  PyObject* get() const { return p_; }
  PyObject* release() {
    PyObject* p = p_;
    p_ = nullptr;
    return p;
  }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  PyObject* p_ = nullptr;
};

// getattr(obj, name), as an owned reference; throws on error.
inline Ref get_attr(PyObject* obj, PyObject* name) {
  return Ref(check(PyObject_GetAttr(obj, name)));
}

// `getattr(obj, name) is not None`.
inline bool attr_is_set(PyObject* obj, PyObject* name) {
  Ref value = get_attr(obj, name);
  return value.get() != Py_None;
}

// `bool(getattr(obj, name))`.
inline bool attr_truthy(PyObject* obj, PyObject* name) {
  Ref value = get_attr(obj, name);
  int truth = PyObject_IsTrue(value.get());
  if (truth < 0) throw_python_error();
  return truth != 0;
}

inline bool truthy(PyObject* obj) {
  int truth = PyObject_IsTrue(obj);
  if (truth < 0) throw_python_error();
  return truth != 0;
}

// `with lock: body()` for a Python lock (core's accumulate._LOCK, saved_guard._MUTEX):
// released also when the body fails, and the body's error, if any, wins over a
// failing release. `body` returns 0, or -1 with a Python error set, or throws.
template <typename Body>
void with_lock(PyObject* lock, Body body) {
  Ref taken(check(PyObject_CallMethodNoArgs(lock, names.acquire)));
  int status;
  try {
    status = body();
  } catch (py::error_already_set& e) {
    e.restore();
    status = -1;
  }
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  if (status < 0) PyErr_Fetch(&type, &value, &traceback);
  Ref released(PyObject_CallMethodNoArgs(lock, names.release));
  if (type != nullptr) {
    if (!released) PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    throw_python_error();
  }
  if (!released) throw_python_error();
}

}  // namespace chainrule_engine
