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

}  // namespace chainrule_engine
