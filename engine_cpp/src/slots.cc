#include "slots.h"

#include <structmember.h>

#include <stdexcept>
#include <string>

namespace chainrule_engine {

PyObject* slot_descriptor(PyObject* type, const char* name) {
  Ref descr(check(PyObject_GetAttrString(type, name)));
  if (Py_TYPE(descr.get()) != &PyMemberDescr_Type) {
    throw std::runtime_error(std::string("chainrule_engine: ") + name + " is not a slot");
  }
  PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(descr.get())->d_member;
  if (member->type != T_OBJECT_EX) {
    throw std::runtime_error(std::string("chainrule_engine: ") + name +
                             " is not an object slot");
  }
  return descr.get();  // the class keeps it alive
}

Py_ssize_t member_offset(PyObject* type, const char* name) {
  PyObject* descr = slot_descriptor(type, name);
  return reinterpret_cast<PyMemberDescrObject*>(descr)->d_member->offset;
}

TensorSlots tensor_slots(PyObject* T) {
  return {member_offset(T, "_data"),          member_offset(T, "grad_fn"),
          member_offset(T, "_output_nr"),     member_offset(T, "_requires_grad"),
          member_offset(T, "_grad"),          member_offset(T, "_vc"),
          member_offset(T, "_base"),          member_offset(T, "_extra")};
}

// tp_alloc rather than object.__new__: for a class whose instances have a __dict__
// (nodes, SavedTensor), CPython 3.11's object.__new__ also allocates an array for
// attribute values up front, and the first _PyObject_GetDictPtr (the engine's hook
// reads, op_node's saved-tensor checks) then builds a dict from it: two allocations
// per node or saved tensor that never hold anything in the common case. Without
// them the instance has no attributes until one is set, which attribute access and
// assignment handle as usual (a dict is made on the first assignment).
PyObject* new_instance(PyTypeObject* type) { return type->tp_alloc(type, 0); }

PyObject* new_tensor(PyTypeObject* type, const TensorSlots& s, PyObject* arr,
                     PyObject* grad_fn) {
  PyObject* t = new_instance(type);
  if (t == nullptr) return nullptr;
  PyObject* zero = PyLong_FromLong(0);
  if (zero == nullptr) {
    Py_DECREF(t);
    return nullptr;
  }
  set_slot(t, s.data, arr);
  set_slot(t, s.grad_fn, grad_fn);
  steal_slot(t, s.output_nr, zero);
  set_slot(t, s.requires_grad, grad_fn != Py_None ? Py_True : Py_False);
  for (Py_ssize_t offset : {s.grad, s.vc, s.base, s.extra}) set_slot(t, offset, Py_None);
  return t;
}

}  // namespace chainrule_engine
