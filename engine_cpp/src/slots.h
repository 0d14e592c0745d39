// Reading a Python object's __slots__ at their byte offsets, without getattr.
#pragma once

#include "python_api.h"

namespace chainrule_engine {

// obj.<slot>, borrowed (nullptr while the slot is unset).
inline PyObject* slot(PyObject* obj, Py_ssize_t offset) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + offset);
}

// obj.<slot> = value, stealing the reference.
inline void steal_slot(PyObject* obj, Py_ssize_t offset, PyObject* value) {
  PyObject** p = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + offset);
  PyObject* old = *p;
  *p = value;
  Py_XDECREF(old);
}

// obj.<slot> = value (a new reference is taken).
inline void set_slot(PyObject* obj, Py_ssize_t offset, PyObject* value) {
  Py_INCREF(value);
  steal_slot(obj, offset, value);
}

// The byte offset of `type.<name>`, which must be an object slot (a member
// descriptor declared by __slots__); throws otherwise.
Py_ssize_t member_offset(PyObject* type, const char* name);

// Where core's Tensor keeps its fields (chainrule/_tensor.py __slots__).
struct TensorSlots {
  Py_ssize_t data, grad_fn, output_nr, requires_grad, grad, vc, base, extra;
};
TensorSlots tensor_slots(PyObject* tensor_type);

// A new instance of `type` with every slot unset, like `cls.__new__(cls)` (object's
// __new__) but with no attribute storage until an attribute is set. New reference,
// or nullptr with a Python error.
PyObject* new_instance(PyTypeObject* type);

// A new Tensor around the ndarray `arr`, every other slot set: output 0 of
// `grad_fn`, requiring grad (Tensor._make_output), or, with grad_fn None, a leaf
// that needs no grad (Tensor._wrap). New reference, or nullptr with a Python error.
PyObject* new_tensor(PyTypeObject* type, const TensorSlots& s, PyObject* arr,
                     PyObject* grad_fn);

// type.__dict__-level lookup along the MRO (borrowed, nullptr when absent), as
// attribute access sees it before looking at the instance.
inline PyObject* class_attr(PyTypeObject* type, PyObject* name) {
  return _PyType_Lookup(type, name);
}

// The member descriptor of `type.<name>` (borrowed), for comparing classes'
// layouts: a subclass resolves `name` to the same descriptor when it inherits it.
PyObject* slot_descriptor(PyObject* type, const char* name);

// A memo of per-class answers, used with the GIL held: 16 direct-mapped entries
// keyed by the class (and a generation, bumped when the answers are recomputed),
// pointing into a map whose entries never move.
template <typename T>
class RecentClasses {
 public:
  const T* find(PyTypeObject* type, uint64_t generation) const {
    const Entry& e = entries_[index(type)];
    return e.type == type && e.generation == generation ? e.value : nullptr;
  }
  const T* put(PyTypeObject* type, uint64_t generation, const T* value) {
    entries_[index(type)] = Entry{type, generation, value};
    return value;
  }

 private:
  struct Entry {
    PyTypeObject* type = nullptr;
    uint64_t generation = 0;
    const T* value = nullptr;
  };
  static size_t index(PyTypeObject* type) {  // Fibonacci hashing of the address
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(type) >> 4) *
                               0x9E3779B97F4A7C15ull >> 60);
  }
  Entry entries_[16];
};

}  // namespace chainrule_engine
