#include "node.h"

namespace chainrule_engine {

int64_t read_seq(PyObject* node) {
  Ref seq = get_attr(node, names.seq);
  long long value = PyLong_AsLongLong(seq.get());
  if (value == -1 && PyErr_Occurred()) throw_python_error();
  return static_cast<int64_t>(value);
}

bool is_accumulate_grad(PyObject* node) {
  PyObject* type = helpers.accumulate_grad_type;
  if (reinterpret_cast<PyObject*>(Py_TYPE(node)) == type) return true;
  int result = PyObject_IsInstance(node, type);
  if (result < 0) throw_python_error();
  return result != 0;
}

bool needs_tensor_pre_hooks(const NodeRec& rec) {
  if (attr_is_set(rec.node, names.tensor_hooks)) return true;
  if (attr_is_set(rec.node, names.retain_hooks)) return true;
  if (!rec.is_accumulate) return false;
  Ref variable = get_attr(rec.node, names.variable);
  return attr_is_set(variable.get(), names.extra);
}

Py_ssize_t num_inputs(PyObject* node) {
  Ref n(check(PyObject_CallMethodNoArgs(node, names.num_inputs)));
  Py_ssize_t value = PyNumber_AsSsize_t(n.get(), PyExc_OverflowError);
  if (value == -1 && PyErr_Occurred()) throw_python_error();
  return value;
}

bool anomaly_enabled() {
  return attr_truthy(helpers.anomaly_state, names.enabled);
}

PyObject* call_anomaly(PyObject* node, PyObject* grads, PyObject* create_graph) {
  PyObject* args[] = {node, grads, create_graph};
  return check(PyObject_Vectorcall(helpers.anomaly_call_node, args, 3, nullptr));
}

PyObject* call_apply_plain(PyObject* node, PyObject* grads, PyObject* create_graph) {
  // args[0] is scratch space that PY_VECTORCALL_ARGUMENTS_OFFSET lets the callee use.
  PyObject* method_args[] = {nullptr, node, grads, create_graph};
  return check(PyObject_VectorcallMethod(
      names.apply, method_args + 1, 3 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr));
}

void release_saved(PyObject* node) {
  Ref result(check(PyObject_CallMethodNoArgs(node, names.release_saved)));
}

}  // namespace chainrule_engine
