#include "node.h"

#include <unordered_map>

#include "op_node.h"
#include "recorder.h"
#include "slots.h"

namespace chainrule_engine {

NodeLayout node_layout;

void configure_node_layout(PyObject* node_type) {
  NodeLayout layout;
  layout.next_descr = slot_descriptor(node_type, "_next");
  layout.seq_descr = slot_descriptor(node_type, "_seq");
  layout.next = member_offset(node_type, "_next");
  layout.seq = member_offset(node_type, "_seq");
  layout.num_inputs = check(PyObject_GetAttr(node_type, names.num_inputs));  // kept
  PyObject* old = node_layout.num_inputs;
  node_layout = layout;
  Py_XDECREF(old);
}

namespace {

// A hook table (or any field) held as a plain class default: not a descriptor.
bool plain_default(PyTypeObject* type, PyObject* name) {
  PyObject* value = class_attr(type, name);
  return value == nullptr || Py_TYPE(value)->tp_descr_get == nullptr;
}

struct NodeClass {
  bool slots = false;          // _next and _seq are Node's slots
  bool plain_hooks = false;    // the hook tables are plain class defaults
  bool no_hooks_default = false;  // ... and all four defaults are None
  bool node_num_inputs = false;   // ... and num_inputs is Node's (`return 1`)
  unsigned int version_tag = 0;   // the class's tp_version_tag when checked
};

NodeClass examine(PyTypeObject* type) {
  NodeClass c;
  c.slots = node_layout.next_descr != nullptr &&
            class_attr(type, names.next) == node_layout.next_descr &&
            class_attr(type, names.seq) == node_layout.seq_descr;
  static PyObject* object_getattribute = class_attr(&PyBaseObject_Type, names.getattribute);
  c.plain_hooks = class_attr(type, names.getattribute) == object_getattribute;
  c.no_hooks_default = true;
  for (PyObject* name : {names.pre_hooks, names.post_hooks, names.tensor_hooks,
                         names.retain_hooks}) {
    c.plain_hooks = c.plain_hooks && plain_default(type, name);
    c.no_hooks_default = c.no_hooks_default && class_attr(type, name) == Py_None;
  }
  c.node_num_inputs = c.plain_hooks && node_layout.num_inputs != nullptr &&
                      class_attr(type, names.num_inputs) == node_layout.num_inputs;
  c.version_tag = type->tp_version_tag;  // assigned by the lookups above
  return c;
}

// Note [reading nodes by slot]: the check, once per class (with the GIL), again
// when the class (or a base) is modified (CPython then changes its version tag).
// The engine asks several times per node: recent answers are kept in a small
// direct-mapped table (map entries are never removed or moved).
const NodeClass& node_class(PyTypeObject* type) {
  static auto* cache = new std::unordered_map<PyTypeObject*, NodeClass>();
  static RecentClasses<NodeClass> recent;  // GIL held: no thread_local (its TLS call)
  const NodeClass* hit = recent.find(type, 0);
  if (hit == nullptr) {
    auto it = cache->find(type);
    if (it == cache->end()) {
      Py_INCREF(type);  // the cache holds the class, so its address is never reused
      it = cache->emplace(type, examine(type)).first;
    }
    hit = recent.put(type, 0, &it->second);
  }
  if (hit->version_tag == 0 || hit->version_tag != type->tp_version_tag) {
    *const_cast<NodeClass*>(hit) = examine(type);
  }
  return *hit;
}

// node.<name> for a plain-default field: the instance __dict__ entry, else the
// class default (borrowed); getattr for other classes (owned, in `keep`).
PyObject* hook_field(PyObject* node, PyObject* name, Ref& keep) {
  const NodeClass& c = node_class(Py_TYPE(node));
  if (c.plain_hooks) {
    PyObject** dict = _PyObject_GetDictPtr(node);
    if (dict != nullptr && *dict != nullptr) {
      PyObject* value = PyDict_GetItemWithError(*dict, name);
      if (value != nullptr) return value;
      if (PyErr_Occurred()) throw_python_error();
    }
    if (c.no_hooks_default) return Py_None;  // checked with the class's version tag
    PyObject* value = class_attr(Py_TYPE(node), name);
    if (value != nullptr) return value;
  }
  keep = get_attr(node, name);
  return keep.get();
}

bool hook_field_set(PyObject* node, PyObject* name) {
  Ref keep;
  return hook_field(node, name, keep) != Py_None;
}

bool hook_field_truthy(PyObject* node, PyObject* name) {
  Ref keep;
  PyObject* value = hook_field(node, name, keep);
  return value != Py_None && truthy(value);
}

}  // namespace

int64_t read_seq(PyObject* node) {
  PyObject* seq = node_class(Py_TYPE(node)).slots ? slot(node, node_layout.seq) : nullptr;
  Ref keep;
  if (seq == nullptr) {
    keep = get_attr(node, names.seq);
    seq = keep.get();
  }
  long long value = PyLong_AsLongLong(seq);
  if (value == -1 && PyErr_Occurred()) throw_python_error();
  return static_cast<int64_t>(value);
}

PyObject* read_next(PyObject* node) {
  PyObject* next = node_class(Py_TYPE(node)).slots ? slot(node, node_layout.next) : nullptr;
  if (next == nullptr) return get_attr(node, names.next).release();
  Py_INCREF(next);
  return next;
}

bool is_accumulate_grad(PyObject* node) {
  PyObject* type = helpers.accumulate_grad_type;
  if (reinterpret_cast<PyObject*>(Py_TYPE(node)) == type) return true;
  int result = PyObject_IsInstance(node, type);
  if (result < 0) throw_python_error();
  return result != 0;
}

bool needs_tensor_pre_hooks(const NodeRec& rec) {
  if (hook_field_set(rec.node, names.tensor_hooks)) return true;
  if (hook_field_set(rec.node, names.retain_hooks)) return true;
  if (!rec.is_accumulate) return false;
  // engine._leaf_has_hooks(node.variable)
  Ref variable = get_attr(rec.node, names.variable);
  Ref extra = get_attr(variable.get(), names.extra);
  return extra.get() != Py_None && attr_truthy(extra.get(), names.hooks);
}

bool has_pre_hooks(PyObject* node) { return hook_field_truthy(node, names.pre_hooks); }

bool has_post_hooks(PyObject* node) { return hook_field_truthy(node, names.post_hooks); }

// Node.num_inputs (`return 1`) when the node's class resolves num_inputs to it and
// the instance __dict__ does not shadow it (an AccumulateGrad, every pass).
bool inherits_node_num_inputs(PyObject* node) {
  if (!node_class(Py_TYPE(node)).node_num_inputs) return false;
  PyObject** dict = _PyObject_GetDictPtr(node);
  if (dict == nullptr || *dict == nullptr) return true;
  PyObject* own = PyDict_GetItemWithError(*dict, names.num_inputs);
  if (own == nullptr && PyErr_Occurred()) throw_python_error();
  return own == nullptr;
}

Py_ssize_t num_inputs(PyObject* node) {
  Py_ssize_t fast = table_num_inputs(node);  // Note [table-node fast path]
  if (fast >= 0) return fast;
  if (inherits_node_num_inputs(node)) return 1;
  Ref n(check(PyObject_CallMethodNoArgs(node, names.num_inputs)));
  Py_ssize_t value = PyNumber_AsSsize_t(n.get(), PyExc_OverflowError);
  if (value == -1 && PyErr_Occurred()) throw_python_error();
  return value;
}

bool anomaly_enabled() {
  thread_local ThreadLocalDict cache;  // Note [thread-local reads] (recorder.h)
  Ref enabled(check(local_attr(helpers.anomaly_state, names.enabled, cache)));
  return truthy(enabled.get());
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
  if (table_release_saved(node)) return;  // Note [table-node fast path]
  Ref result(check(PyObject_CallMethodNoArgs(node, names.release_saved)));
}

}  // namespace chainrule_engine
