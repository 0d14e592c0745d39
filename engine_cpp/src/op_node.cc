#define PY_ARRAY_UNIQUE_SYMBOL chainrule_engine_ARRAY_API
#define NO_IMPORT_ARRAY
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "op_node.h"

#include <numpy/arrayobject.h>

#include <memory>
#include <unordered_map>
#include <vector>

#include "slots.h"

namespace chainrule_engine {

TableOps table_ops;

namespace {

// Attribute names used only here.
struct TableNames {
  PyObject* op = PyUnicode_InternFromString("_op");
  PyObject* multi_output = PyUnicode_InternFromString("multi_output");
  PyObject* saved = PyUnicode_InternFromString("_saved");
  PyObject* attrs = PyUnicode_InternFromString("_attrs");
  PyObject* out_meta = PyUnicode_InternFromString("_out_meta");
  PyObject* shape_keys = PyUnicode_InternFromString("shape_keys");
  PyObject* vjps = PyUnicode_InternFromString("vjps");
  PyObject* fn = PyUnicode_InternFromString("fn");
  PyObject* names = PyUnicode_InternFromString("names");
  PyObject* unpack_hook = PyUnicode_InternFromString("unpack_hook");
  PyObject* array = PyUnicode_InternFromString("array");
  PyObject* array_ns = PyUnicode_InternFromString("ARRAY_NS");
  PyObject* tensor_ns = PyUnicode_InternFromString("TENSOR_NS");
  PyObject* as_tensor = PyUnicode_InternFromString("as_tensor");
};

const TableNames& tn() {
  static const TableNames* n = new TableNames();  // after Python is up; never freed
  return *n;
}

// Thrown to leave the fast path: call node.apply instead.
struct NotHere {};

// One VJP formula of an op: the function and, per parameter after (F, g), its name
// and which input's shape it is (`<input>_shape`), or -1.
struct FormulaInfo {
  PyObject* fn = nullptr;  // null: NONDIFF; `raises`: NOT_IMPLEMENTED or unknown
  bool raises = false;
  std::vector<PyObject*> params;
  std::vector<Py_ssize_t> shape_index;
};

// What the fast path knows of a node class (worked out once; holds references
// for the life of the process, like the class itself).
struct TableClass {
  bool table = false;  // OpNode's apply, num_inputs, release_saved and slots
  bool multi_output = false;
  std::vector<FormulaInfo> formulas;
};

bool same_attr(PyTypeObject* type, PyObject* name, PyObject* expected) {
  return expected != nullptr && class_attr(type, name) == expected;
}

bool has_table_layout(PyTypeObject* type) {
  const TableOps& t = table_ops;
  return same_attr(type, names.apply, t.apply) &&
         same_attr(type, names.num_inputs, t.num_inputs) &&
         same_attr(type, names.release_saved, t.release_saved) &&
         same_attr(type, tn().saved, t.saved_descr) &&
         same_attr(type, tn().attrs, t.attrs_descr) &&
         same_attr(type, names.in_meta, t.in_meta_descr) &&
         same_attr(type, tn().out_meta, t.out_meta_descr);
}

FormulaInfo formula_info(PyObject* formula, PyObject* shape_keys) {
  FormulaInfo info;
  if (formula == table_ops.nondiff) return info;
  if (reinterpret_cast<PyObject*>(Py_TYPE(formula)) != table_ops.formula_type) {
    info.raises = true;  // NOT_IMPLEMENTED (node.apply raises) or something new
    return info;
  }
  info.fn = get_attr(formula, tn().fn).release();
  Ref params = get_attr(formula, tn().names);
  if (!PyTuple_CheckExact(params.get())) throw NotHere();
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(params.get()); ++i) {
    PyObject* name = PyTuple_GET_ITEM(params.get(), i);
    Py_INCREF(name);
    info.params.push_back(name);
    Py_ssize_t index = -1;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(shape_keys) && index < 0; ++j) {
      int eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(shape_keys, j), name, Py_EQ);
      if (eq < 0) throw_python_error();
      if (eq) index = j;
    }
    info.shape_index.push_back(index);
  }
  return info;
}

void read_op(PyTypeObject* type, TableClass& c) {
  PyObject* op = class_attr(type, tn().op);
  if (op == nullptr || op == Py_None) throw NotHere();
  c.multi_output = truthy(get_attr(op, tn().multi_output).get());
  Ref vjps = get_attr(op, tn().vjps);
  Ref shape_keys = get_attr(op, tn().shape_keys);
  if (!PyTuple_CheckExact(vjps.get()) || !PyTuple_CheckExact(shape_keys.get())) throw NotHere();
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(vjps.get()); ++i) {
    c.formulas.push_back(formula_info(PyTuple_GET_ITEM(vjps.get(), i), shape_keys.get()));
  }
}

std::unordered_map<PyTypeObject*, TableClass>& table_classes() {
  static auto* cache = new std::unordered_map<PyTypeObject*, TableClass>();
  return *cache;
}
uint64_t table_generation = 0;  // bumped when the cache is cleared (configure)

// The class's entry, worked out on first use (with the GIL). Recent answers are
// kept, as in node_class (node.cc).
const TableClass& table_class(PyTypeObject* type) {
  static RecentClasses<TableClass> recent;  // GIL held: no thread_local (its TLS call)
  if (const TableClass* hit = recent.find(type, table_generation)) return *hit;
  auto& cache = table_classes();
  auto it = cache.find(type);
  if (it != cache.end()) return *recent.put(type, table_generation, &it->second);
  TableClass c;
  if (table_ops.enabled && has_table_layout(type)) {
    try {
      read_op(type, c);
      c.table = true;
    } catch (const NotHere&) {
      c = TableClass();
    } catch (py::error_already_set&) {
      PyErr_Clear();  // not shaped as expected: leave it to node.apply
      c = TableClass();
    }
  }
  Py_INCREF(type);  // the cache holds the class, so its address is never reused
  return cache.emplace(type, std::move(c)).first->second;
}

// SavedTensor, or a subclass that unpacks like it (LockedSavedTensor: Note
// [read-only saved arrays] only adds what it does when it dies).
bool unpacks_like_saved_tensor(PyTypeObject* type) {
  const TableOps& t = table_ops;
  if (reinterpret_cast<PyObject*>(type) == t.saved_type) return true;
  thread_local PyTypeObject* last_yes = nullptr;
  if (type == last_yes) return true;
  auto* base = reinterpret_cast<PyTypeObject*>(t.saved_type);
  bool yes = PyType_IsSubtype(type, base) &&
             class_attr(type, tn().array) == class_attr(base, tn().array) &&
             class_attr(type, tn().unpack_hook) == class_attr(base, tn().unpack_hook) &&
             type->tp_basicsize == base->tp_basicsize;  // same slots, same offsets
  if (yes) last_yes = type;
  return yes;
}

// Every saved value is a plain SavedTensor, without hooks, at its saved version.
void check_saved(PyObject* saved) {
  const TableOps& t = table_ops;
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(saved, &pos, &key, &value)) {
    if (!unpacks_like_saved_tensor(Py_TYPE(value))) throw NotHere();
    PyObject** dict = _PyObject_GetDictPtr(value);  // unpack_hook is set there by hooks
    if (dict != nullptr && *dict != nullptr) {
      PyObject* hook = PyDict_GetItem(*dict, tn().unpack_hook);
      if (hook != nullptr && hook != Py_None) throw NotHere();
    }
    PyObject* counter = slot(value, t.saved_counter);
    PyObject* then = slot(value, t.saved_version);
    if (counter == nullptr || then == nullptr || slot(value, t.saved_data) == nullptr ||
        reinterpret_cast<PyObject*>(Py_TYPE(counter)) != t.counter_type) {
      throw NotHere();
    }
    PyObject* now = slot(counter, t.counter_v);
    if (now == nullptr) throw NotHere();
    if (now == then) continue;
    int same = PyObject_RichCompareBool(now, then, Py_EQ);
    if (same != 1) {
      if (same < 0) PyErr_Clear();
      throw NotHere();  // node.apply raises the reference's message
    }
  }
}

// OpNode.apply's create_graph env entries for the saved values, in the dict's
// order: SavedTensor.as_tensor(node) each. After check_saved (versions match, no
// hooks) that is a saved input's own tensor; a saved output (`tensor` None) calls
// as_tensor, which rebuilds it on the node (and tells the tangent slot). A new dict.
PyObject* saved_as_tensors(PyObject* node, PyObject* saved) {
  Ref out(check(PyDict_New()));
  Ref items(check(PyDict_Items(saved)));  // as_tensor runs Python: iterate a copy
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items.get()); ++i) {
    PyObject* item = PyList_GET_ITEM(items.get(), i);
    PyObject* value = PyTuple_GET_ITEM(item, 1);
    PyObject* own = slot(value, table_ops.saved_tensor);
    Ref tensor(own != nullptr && own != Py_None
                   ? Py_NewRef(own)
                   : check(PyObject_CallMethodOneArg(value, tn().as_tensor, node)));
    if (PyDict_SetItem(out.get(), PyTuple_GET_ITEM(item, 0), tensor.get()) < 0) {
      throw_python_error();
    }
  }
  return out.release();
}

// `_as_tensor(g)` for a Tensor or an ndarray (Tensor._wrap); NotHere otherwise.
// New reference.
PyObject* gradient_as_tensor(PyObject* g) {
  if (PyObject_TypeCheck(g, table_ops.tensor)) return Py_NewRef(g);
  if (Py_TYPE(g) != &PyArray_Type) throw NotHere();
  return check(new_tensor(table_ops.tensor, table_ops.tensor_slots, g, Py_None));
}

// The value a formula parameter names, with the priority of OpNode.apply's env:
// saved values (`tensors`, with create_graph, else the saved arrays), then input
// shapes, then attributes. Borrowed.
PyObject* lookup(const FormulaInfo& f, size_t k, PyObject* saved, PyObject* tensors,
                 PyObject* in_meta, PyObject* attrs) {
  PyObject* name = f.params[k];
  PyObject* s = PyDict_GetItemWithError(tensors != nullptr ? tensors : saved, name);
  if (s != nullptr) return tensors != nullptr ? s : slot(s, table_ops.saved_data);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw NotHere();
  }
  Py_ssize_t j = f.shape_index[k];
  if (j >= 0 && j < PySequence_Fast_GET_SIZE(in_meta)) {
    PyObject* meta = PySequence_Fast_GET_ITEM(in_meta, j);
    if (!PyTuple_Check(meta) || PyTuple_GET_SIZE(meta) != 2) throw NotHere();
    return PyTuple_GET_ITEM(meta, 0);
  }
  PyObject* a = PyDict_GetItemWithError(attrs, name);
  if (a == nullptr) {
    PyErr_Clear();
    throw NotHere();  // node.apply raises the KeyError
  }
  return a;
}

// formula.fn(F, g, *[env[n] for n in formula.names])
PyObject* call_formula(const FormulaInfo& f, PyObject* F, PyObject* g, PyObject* saved,
                       PyObject* tensors, PyObject* in_meta, PyObject* attrs) {
  size_t n = f.params.size();
  PyObject* small[8];
  std::unique_ptr<PyObject*[]> large;
  PyObject** args = small;
  if (n + 2 > 8) {
    large.reset(new PyObject*[n + 2]);
    args = large.get();
  }
  args[0] = F;
  args[1] = g;
  for (size_t i = 0; i < n; ++i) args[i + 2] = lookup(f, i, saved, tensors, in_meta, attrs);
  // An error here is the formula's own: it propagates (node.apply would raise it too).
  return check(PyObject_Vectorcall(f.fn, args, n + 2, nullptr));
}

PyObject* none_list(Py_ssize_t n) {
  PyObject* list = check(PyList_New(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_INCREF(Py_None);
    PyList_SET_ITEM(list, i, Py_None);
  }
  return list;
}

// Which formula runs per edge (nullptr: none); NotHere when one would raise.
std::vector<const FormulaInfo*> formulas_to_run(const GraphTask& task, const NodeRec& rec,
                                                const TableClass& c) {
  Py_ssize_t n = rec.num_edges;
  if (static_cast<Py_ssize_t>(c.formulas.size()) < n) throw NotHere();
  const Edge* edges = task.edges_of(rec);
  std::vector<const FormulaInfo*> todo(n, nullptr);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!is_edge(edges[i]) || (task.filtered() && !task.delivers(edges[i]))) continue;
    const FormulaInfo& f = c.formulas[i];
    if (f.raises) throw NotHere();
    if (f.fn != nullptr) todo[i] = &f;
  }
  return todo;
}

PyObject* table_apply(const GraphTask& task, const NodeRec& rec, PyObject* grads,
                      const TableClass& c) {
  PyObject* node = rec.node;
  if (c.multi_output) throw NotHere();
  PyObject* saved = slot(node, table_ops.saved);
  if (saved == nullptr || !PyDict_CheckExact(saved)) throw NotHere();  // None: freed
  check_saved(saved);
  if (!PyList_CheckExact(grads) || PyList_GET_SIZE(grads) < 1) throw NotHere();
  PyObject* g = PyList_GET_ITEM(grads, 0);
  bool create_graph = task.create_graph_flag;
  if (create_graph && g != Py_None && !PyObject_TypeCheck(g, table_ops.tensor) &&
      Py_TYPE(g) != &PyArray_Type) {
    throw NotHere();
  }
  Ref tensors(create_graph ? saved_as_tensors(node, saved) : nullptr);
  Py_ssize_t n = rec.num_edges;
  if (g == Py_None) return none_list(n);
  std::vector<const FormulaInfo*> todo = formulas_to_run(task, rec, c);
  PyObject* attrs = slot(node, table_ops.attrs);
  PyObject* in_meta = slot(node, table_ops.in_meta);
  if (attrs == nullptr || !PyDict_CheckExact(attrs) || in_meta == nullptr ||
      !(PyList_CheckExact(in_meta) || PyTuple_CheckExact(in_meta))) {
    throw NotHere();
  }
  PyObject* F = PyDict_GetItemWithError(PyModule_GetDict(table_ops.registry),
                                        create_graph ? tn().tensor_ns : tn().array_ns);
  if (F == nullptr || F == Py_None) {
    PyErr_Clear();
    throw NotHere();
  }
  Py_INCREF(F);  // a formula could rebind ARRAY_NS
  Ref keep_F(F);
  Ref g_ref(create_graph ? gradient_as_tensor(g) : Py_NewRef(g));
  // From here on the formulas run: errors are theirs and propagate.
  Ref out(none_list(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (todo[i] == nullptr) continue;
    PyObject* grad = call_formula(*todo[i], F, g_ref.get(), saved, tensors.get(), in_meta,
                                  attrs);
    PyObject* old = PyList_GET_ITEM(out.get(), i);
    PyList_SET_ITEM(out.get(), i, grad);
    Py_DECREF(old);
  }
  return out.release();
}

}  // namespace

void configure_table_layout(TableOps& t, PyObject* op_node_type) {
  t.saved_descr = slot_descriptor(op_node_type, "_saved");
  t.attrs_descr = slot_descriptor(op_node_type, "_attrs");
  t.in_meta_descr = slot_descriptor(op_node_type, "_in_meta");
  t.out_meta_descr = slot_descriptor(op_node_type, "_out_meta");
  t.saved = member_offset(op_node_type, "_saved");
  t.attrs = member_offset(op_node_type, "_attrs");
  t.in_meta = member_offset(op_node_type, "_in_meta");
  t.out_meta = member_offset(op_node_type, "_out_meta");
  t.saved_data = member_offset(t.saved_type, "data");
  t.saved_counter = member_offset(t.saved_type, "counter");
  t.saved_version = member_offset(t.saved_type, "version");
  t.counter_v = member_offset(t.counter_type, "v");
  t.saved_tensor = member_offset(t.saved_type, "tensor");
  t.tensor_slots = tensor_slots(reinterpret_cast<PyObject*>(t.tensor));
  table_classes().clear();  // what the classes resolve to may have changed
  ++table_generation;
}

PyObject* try_table_apply(const GraphTask& task, const NodeRec& rec, PyObject* grads) {
  if (!table_ops.enabled) return nullptr;
  const TableClass& c = table_class(Py_TYPE(rec.node));
  if (!c.table) return nullptr;
  try {
    return table_apply(task, rec, grads, c);
  } catch (const NotHere&) {
    return nullptr;
  }
}

Py_ssize_t table_num_inputs(PyObject* node) {
  if (!table_ops.enabled || !table_class(Py_TYPE(node)).table) return -1;
  PyObject* out_meta = slot(node, table_ops.out_meta);
  if (out_meta == nullptr) return -1;  // unset: node.num_inputs raises
  if (out_meta == Py_None) return 1;
  Py_ssize_t n = PyObject_Length(out_meta);
  if (n < 0) throw_python_error();
  return n;
}

bool table_release_saved(PyObject* node) {
  if (!table_ops.enabled || !table_class(Py_TYPE(node)).table) return false;
  PyObject* saved = slot(node, table_ops.saved);
  if (saved == nullptr) return false;  // unset: node.release_saved raises
  if (truthy(saved)) set_slot(node, table_ops.saved, Py_None);  // may free saved tensors
  return true;
}

PyObject* table_in_meta(PyObject* node) {
  if (!table_ops.enabled || !table_class(Py_TYPE(node)).table) return nullptr;
  return slot(node, table_ops.in_meta);
}

}  // namespace chainrule_engine
