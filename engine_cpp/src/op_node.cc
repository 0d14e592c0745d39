#include "op_node.h"

#include <unordered_map>

namespace chainrule_engine {

TableOps table_ops;

namespace {

// Attribute names used only here.
struct TableNames {
  PyObject* op = PyUnicode_InternFromString("_op");
  PyObject* multi_output = PyUnicode_InternFromString("multi_output");
  PyObject* saved = PyUnicode_InternFromString("_saved");
  PyObject* attrs = PyUnicode_InternFromString("_attrs");
  PyObject* shape_keys = PyUnicode_InternFromString("shape_keys");
  PyObject* vjps = PyUnicode_InternFromString("vjps");
  PyObject* fn = PyUnicode_InternFromString("fn");
  PyObject* names = PyUnicode_InternFromString("names");
  PyObject* data = PyUnicode_InternFromString("data");
  PyObject* counter = PyUnicode_InternFromString("counter");
  PyObject* version = PyUnicode_InternFromString("version");
  PyObject* v = PyUnicode_InternFromString("v");
  PyObject* unpack_hook = PyUnicode_InternFromString("unpack_hook");
  PyObject* array_ns = PyUnicode_InternFromString("ARRAY_NS");
};

const TableNames& tn() {
  static const TableNames* n = new TableNames();  // after Python is up; never freed
  return *n;
}

// Thrown to leave the fast path: call node.apply instead.
struct NotHere {};

// getattr, where any failure means "not this path".
Ref attr(PyObject* obj, PyObject* name) {
  PyObject* value = PyObject_GetAttr(obj, name);
  if (value == nullptr) {
    PyErr_Clear();
    throw NotHere();
  }
  return Ref(value);
}

// Per node class: does `type(node).apply` resolve to OpNode.apply? (GIL held.)
bool uses_table_apply(PyTypeObject* type) {
  static std::unordered_map<PyTypeObject*, bool>* cache =
      new std::unordered_map<PyTypeObject*, bool>();
  auto it = cache->find(type);
  if (it != cache->end()) return it->second;
  PyObject* fn = PyObject_GetAttr(reinterpret_cast<PyObject*>(type), names.apply);
  if (fn == nullptr) PyErr_Clear();
  bool yes = fn != nullptr && fn == table_ops.apply;
  Py_XDECREF(fn);
  Py_INCREF(type);  // the cache holds the class, so its address is never reused
  cache->emplace(type, yes);
  return yes;
}

// Every saved value is a plain SavedTensor, without hooks, at its saved version.
void check_saved(PyObject* saved) {
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(saved, &pos, &key, &value)) {
    if (reinterpret_cast<PyObject*>(Py_TYPE(value)) != table_ops.saved_type) throw NotHere();
    if (attr(value, tn().unpack_hook).get() != Py_None) throw NotHere();
    Ref counter = attr(value, tn().counter);
    Ref now = attr(counter.get(), tn().v);
    Ref then = attr(value, tn().version);
    int same = PyObject_RichCompareBool(now.get(), then.get(), Py_EQ);
    if (same != 1) {
      if (same < 0) PyErr_Clear();
      throw NotHere();  // node.apply raises the reference's message
    }
  }
}

// The value a formula parameter names, with the priority of OpNode.apply's env:
// saved values, then input shapes, then attributes. A borrowed or owned reference.
Ref lookup(PyObject* name, PyObject* saved, PyObject* shape_keys, PyObject* in_meta,
           PyObject* attrs) {
  PyObject* s = PyDict_GetItemWithError(saved, name);
  if (s != nullptr) return attr(s, tn().data);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw NotHere();
  }
  Py_ssize_t n = PyTuple_GET_SIZE(shape_keys);
  if (PySequence_Fast_GET_SIZE(in_meta) < n) n = PySequence_Fast_GET_SIZE(in_meta);
  for (Py_ssize_t j = 0; j < n; ++j) {
    int eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(shape_keys, j), name, Py_EQ);
    if (eq < 0) {
      PyErr_Clear();
      throw NotHere();
    }
    if (eq == 0) continue;
    PyObject* meta = PySequence_Fast_GET_ITEM(in_meta, j);
    if (!PyTuple_Check(meta) || PyTuple_GET_SIZE(meta) != 2) throw NotHere();
    PyObject* shape = PyTuple_GET_ITEM(meta, 0);
    Py_INCREF(shape);
    return Ref(shape);
  }
  PyObject* a = PyDict_GetItemWithError(attrs, name);
  if (a == nullptr) {
    PyErr_Clear();
    throw NotHere();  // node.apply raises the KeyError
  }
  Py_INCREF(a);
  return Ref(a);
}

// formula.fn(F, g, *[env[n] for n in formula.names])
PyObject* call_formula(PyObject* formula, PyObject* F, PyObject* g, PyObject* saved,
                       PyObject* shape_keys, PyObject* in_meta, PyObject* attrs) {
  Ref fn = attr(formula, tn().fn);
  Ref params = attr(formula, tn().names);
  if (!PyTuple_CheckExact(params.get())) throw NotHere();
  Py_ssize_t n = PyTuple_GET_SIZE(params.get());
  std::vector<Ref> values;
  values.reserve(n);
  std::vector<PyObject*> args(n + 2);
  args[0] = F;
  args[1] = g;
  for (Py_ssize_t i = 0; i < n; ++i) {
    values.push_back(lookup(PyTuple_GET_ITEM(params.get(), i), saved, shape_keys, in_meta,
                            attrs));
    args[i + 2] = values.back().get();
  }
  // An error here is the formula's own: it propagates (node.apply would raise it too).
  return check(PyObject_Vectorcall(fn.get(), args.data(), n + 2, nullptr));
}

PyObject* none_list(Py_ssize_t n) {
  PyObject* list = check(PyList_New(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_INCREF(Py_None);
    PyList_SET_ITEM(list, i, Py_None);
  }
  return list;
}

PyObject* table_apply(const GraphTask& task, const NodeRec& rec, PyObject* grads) {
  PyObject* node = rec.node;
  Ref op = attr(node, tn().op);
  if (truthy(attr(op.get(), tn().multi_output).get())) throw NotHere();
  Ref saved = attr(node, tn().saved);
  if (!PyDict_CheckExact(saved.get())) throw NotHere();  // None: freed (node.apply raises)
  check_saved(saved.get());
  if (!PyList_CheckExact(grads) || PyList_GET_SIZE(grads) < 1) throw NotHere();
  PyObject* g = PyList_GET_ITEM(grads, 0);
  Py_ssize_t n = rec.num_edges;
  if (g == Py_None) return none_list(n);
  Ref vjps = attr(op.get(), tn().vjps);
  if (!PyTuple_CheckExact(vjps.get()) || PyTuple_GET_SIZE(vjps.get()) < n) throw NotHere();
  const Edge* edges = task.edges_of(rec);
  std::vector<PyObject*> todo(n, nullptr);  // the formula to run per edge, or null
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!is_edge(edges[i]) || (task.filtered() && !task.delivers(edges[i]))) continue;
    PyObject* formula = PyTuple_GET_ITEM(vjps.get(), i);
    if (formula == table_ops.nondiff) continue;
    if (reinterpret_cast<PyObject*>(Py_TYPE(formula)) != table_ops.formula_type) {
      throw NotHere();  // NOT_IMPLEMENTED (node.apply raises) or something new
    }
    todo[i] = formula;
  }
  Ref attrs = attr(node, tn().attrs);
  Ref shape_keys = attr(op.get(), tn().shape_keys);
  Ref in_meta_obj = attr(node, names.in_meta);
  if (!PyDict_CheckExact(attrs.get()) || !PyTuple_CheckExact(shape_keys.get())) throw NotHere();
  Ref in_meta(PySequence_Fast(in_meta_obj.get(), ""));
  if (!in_meta) {
    PyErr_Clear();
    throw NotHere();
  }
  Ref F = attr(table_ops.registry, tn().array_ns);
  // From here on the formulas run: errors are theirs and propagate.
  Ref out(none_list(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (todo[i] == nullptr) continue;
    PyObject* grad = call_formula(todo[i], F.get(), g, saved.get(), shape_keys.get(),
                                  in_meta.get(), attrs.get());
    PyObject* old = PyList_GET_ITEM(out.get(), i);
    PyList_SET_ITEM(out.get(), i, grad);
    Py_DECREF(old);
  }
  return out.release();
}

}  // namespace

PyObject* try_table_apply(const GraphTask& task, const NodeRec& rec, PyObject* grads) {
  if (!table_ops.enabled || task.create_graph_flag) return nullptr;
  if (!uses_table_apply(Py_TYPE(rec.node))) return nullptr;
  try {
    return table_apply(task, rec, grads);
  } catch (const NotHere&) {
    return nullptr;
  }
}

}  // namespace chainrule_engine
