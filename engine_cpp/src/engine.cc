// Steps (all iterative, Note [no recursion] in graph_task.h), as in engine.py:
// 1. discover the graph, put the root gradients into the roots' input buffers;
// 2. count dependencies (with `inputs=`, restrict to the nodes that matter);
// 3. pop the newest ready node, run its hooks and itself, validate what it
//    returns, route each gradient along its edge, push children whose
//    dependencies reach zero;
// 4. accumulate into `.grad` at the end (Note [atomic accumulation]).
//
// Note [GIL]
//     Steps 1 and 3 call Python (attributes, node.apply, hooks) and hold the GIL.
//     Step 2 touches only the task's C++ arrays: for graphs big enough that it
//     pays, it runs with the GIL released, so other Python threads (e.g. another
//     backward on an independent graph) run meanwhile. Nothing in that phase may
//     touch a Python object, not even a reference count.
//
// Note [errors]
//     Every failed CPython call becomes a C++ exception carrying the Python
//     exception (type, value, traceback); the task's destructor drops its
//     references while unwinding, and pybind11 re-raises the original exception.
//     Signals are checked between nodes, so Ctrl-C stops a long pass with
//     KeyboardInterrupt.
#include "engine.h"

#include "accumulate.h"

#include <vector>

#include "graph_task.h"
#include "input_buffer.h"
#include "node.h"
#include "op_node.h"
#include "ready_queue.h"
#include "validate.h"

namespace chainrule_engine {

namespace {

// Below this many nodes, releasing and re-taking the GIL costs more than it frees.
constexpr size_t kReleaseGilNodes = 2048;

// The passes running on this thread, innermost last (backward may run inside
// a backward: a hook or a custom Function's backward may call it).
thread_local std::vector<GraphTask*> running;

class RunningGuard {
 public:
  explicit RunningGuard(GraphTask* task) { running.push_back(task); }
  ~RunningGuard() { running.pop_back(); }
};

PyObject* call3(PyObject* fn, PyObject* a, PyObject* b, PyObject* c) {
  PyObject* args[] = {a, b, c};
  return check(PyObject_Vectorcall(fn, args, 3, nullptr));
}

PyObject* call4(PyObject* fn, PyObject* a, PyObject* b, PyObject* c, PyObject* d) {
  PyObject* args[] = {a, b, c, d};
  return check(PyObject_Vectorcall(fn, args, 4, nullptr));
}

// Note [node observer slot] (engine.py): the observer the Python engine would call,
// read from the same module global, around a node: enter(node, None, grads) when
// made, exit() by finish() or, when the node raised, by the destructor (the error
// kept as it was).
class NodeObservation {
 public:
  NodeObservation(PyObject* node, PyObject* grads) {
    PyObject* observer = PyDict_GetItemWithError(helpers.engine_globals, names.node_observer);
    if (observer == nullptr && PyErr_Occurred()) throw_python_error();
    if (observer == nullptr || observer == Py_None) return;  // the common case: one lookup
    Py_INCREF(observer);
    observer_ = Ref(observer);
    token_ = Ref(check(PyObject_CallMethodObjArgs(observer, names.enter, node, Py_None, grads,
                                                  nullptr)));
  }
  NodeObservation(const NodeObservation&) = delete;
  NodeObservation& operator=(const NodeObservation&) = delete;
  void finish() {
    if (!token_) return;
    Ref token(token_.release());
    Ref result(check(PyObject_CallMethodOneArg(observer_.get(), names.exit, token.get())));
  }
  ~NodeObservation() {
    if (!token_) return;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject* result = PyObject_CallMethodOneArg(observer_.get(), names.exit, token_.get());
    if (result == nullptr) PyErr_WriteUnraisable(observer_.get());
    Py_XDECREF(result);
    PyErr_Restore(type, value, traceback);
  }

 private:
  Ref observer_, token_;
};

PyObject* buffer_of(GraphTask& task, int32_t index) {
  PyObject*& buffer = task.buffers[index];
  if (buffer == nullptr) buffer = InputBuffer::create(num_inputs(task.nodes[index].node));
  return buffer;
}

// captured[i] = grad if old is None or grad is None else old + grad
void capture(GraphTask& task, int32_t index, PyObject* grads) {
  const std::vector<Capture>* captures = task.captures_of(index);
  if (captures == nullptr) return;
  Ref seq(check(PySequence_Fast(grads, "gradients must be a sequence")));
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
  for (const Capture& c : *captures) {
    if (c.slot < 0 || c.slot >= n) continue;  // enumerate(grads) never yields it
    PyObject* grad = PySequence_Fast_GET_ITEM(seq.get(), c.slot);
    PyObject* old = PyList_GET_ITEM(task.captured, c.index);
    PyObject* value;
    if (old == Py_None || grad == Py_None) {
      Py_INCREF(grad);
      value = grad;
    } else {
      value = check(PyNumber_Add(old, grad));
    }
    PyList_SET_ITEM(task.captured, c.index, value);
    Py_DECREF(old);
  }
}

// Node pre-hooks, the node, release of its saved values, node post-hooks and the
// validation of what it returned (engine.py _call_node).
Ref call_node(GraphTask& task, const NodeRec& rec, Ref grads) {
  PyObject* node = rec.node;
  if (has_pre_hooks(node)) {
    grads = Ref(call3(helpers.run_node_pre_hooks, node, grads.get(), task.create_graph));
  }
  Ref outputs;
  if (anomaly_enabled()) {
    outputs = Ref(call_anomaly(node, grads.get(), task.create_graph));
  } else {
    outputs = Ref(try_table_apply(task, rec, grads.get()));  // Note [table-node fast path]
    if (!outputs) outputs = Ref(call_apply_plain(node, grads.get(), task.create_graph));
  }
  if (!task.keep_graph_flag) release_saved(node);
  if (has_post_hooks(node)) {
    outputs = Ref(call4(helpers.run_node_post_hooks, node, outputs.get(), grads.get(),
                        task.create_graph));
  }
  return Ref(validate_outputs(node, outputs.get(), task.edges_of(rec), rec.num_edges));
}

// Each gradient along its edge; children whose last gradient arrived are ready.
void route(GraphTask& task, const NodeRec& rec, PyObject* outputs, ReadyQueue& queue) {
  Ref seq(check(PySequence_Fast(outputs, "gradients must be a sequence")));
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
  if (n > static_cast<Py_ssize_t>(rec.num_edges)) n = rec.num_edges;  // zip()
  const Edge* edges = task.edges_of(rec);
  for (Py_ssize_t i = 0; i < n; ++i) {
    const Edge& e = edges[i];
    if (!task.delivers(e)) continue;
    PyObject* grad = PySequence_Fast_GET_ITEM(seq.get(), i);
    if (grad != Py_None) InputBuffer::add(buffer_of(task, e.child), e.slot, grad);
    if (--task.dependencies[e.child] == 0) queue.push(task.nodes[e.child].seq, e.child);
  }
}

void evaluate(GraphTask& task, int32_t index, ReadyQueue& queue) {
  const NodeRec& rec = task.nodes[index];
  Ref grads(task.buffers[index]);
  task.buffers[index] = nullptr;
  if (!grads) grads = Ref(InputBuffer::create(num_inputs(rec.node)));  // [None] * num_inputs()
  if (needs_tensor_pre_hooks(rec)) {
    grads = Ref(call3(helpers.run_tensor_pre_hooks, rec.node, grads.get(), task.create_graph));
  }
  capture(task, index, grads.get());
  if (!task.should_run(index)) return;
  if (rec.is_accumulate) {
    task.pending_accumulations.emplace_back(index, grads.release());
    return;
  }
  NodeObservation observation(rec.node, grads.get());  // Note [node observer slot]
  Ref outputs = call_node(task, rec, std::move(grads));
  observation.finish();
  route(task, rec, outputs.get(), queue);
}

void add_root_grads(GraphTask& task, PyObject* roots, PyObject* root_grads) {
  Ref r(check(PySequence_Fast(roots, "roots must be a sequence")));
  Ref g(check(PySequence_Fast(root_grads, "root_grads must be a sequence")));
  Py_ssize_t n = PySequence_Fast_GET_SIZE(r.get());
  if (PySequence_Fast_GET_SIZE(g.get()) < n) n = PySequence_Fast_GET_SIZE(g.get());  // zip()
  for (Py_ssize_t i = 0; i < n; ++i) {
    Ref pair(check(PySequence_Fast(PySequence_Fast_GET_ITEM(r.get(), i),
                                   "roots must be (node, input_nr) pairs")));
    int32_t node = task.index_of(PySequence_Fast_GET_ITEM(pair.get(), 0));
    long long slot = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(pair.get(), 1));
    if (slot == -1 && PyErr_Occurred()) throw_python_error();
    InputBuffer::add(buffer_of(task, node), slot, PySequence_Fast_GET_ITEM(g.get(), i));
  }
}

// engine._accumulate(node, grads, create_graph): the node's pre-hooks, the write
// into .grad, its post-hooks (the common case in C++: Note [accumulation fast
// path] in accumulate.h).
void run_pending_accumulations(GraphTask& task) {
  for (auto& entry : task.pending_accumulations) {
    PyObject* node = task.nodes[entry.first].node;
    NodeObservation observation(node, entry.second);  // Note [node observer slot]
    if (!try_accumulate(node, entry.second, task.create_graph_flag)) {  // Note
      Ref result(call3(helpers.accumulate, node, entry.second, task.create_graph));
    }
    observation.finish();
  }
}

PyObject* wanted_list(const GraphTask& task, PyObject* node) {
  int32_t index = task.index_of(node);
  if (index >= 0) {
    const NodeRec& rec = task.nodes[index];
    const Edge* edges = task.edges_of(rec);
    PyObject* list = check(PyList_New(rec.num_edges));
    for (uint32_t i = 0; i < rec.num_edges; ++i) {
      PyObject* flag = task.delivers(edges[i]) ? Py_True : Py_False;
      Py_INCREF(flag);
      PyList_SET_ITEM(list, i, flag);
    }
    return list;
  }
  // A node outside the pass (e.g. the op that CopySlices runs on a view's part):
  // its edges may still lead into it.
  Ref next(read_next(node));
  Ref entries(check(PySequence_Fast(next.get(), "node._next must be a sequence")));
  Py_ssize_t n = PySequence_Fast_GET_SIZE(entries.get());
  Ref list(check(PyList_New(n)));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* flag = task.wants(PySequence_Fast_GET_ITEM(entries.get(), i)) ? Py_True : Py_False;
    Py_INCREF(flag);
    PyList_SET_ITEM(list.get(), i, flag);
  }
  return list.release();
}

}  // namespace

py::object Engine::execute(py::object roots, py::object root_grads, py::object keep_graph,
                           py::object create_graph, py::object targets, bool accumulate_grad) {
  if (!helpers_ready()) {
    throw py::import_error("chainrule_engine was not configured: import chainrule_engine");
  }
  GraphTask task(keep_graph.ptr(), create_graph.ptr(), accumulate_grad);
  task.discover(roots.ptr());
  bool has_targets = !targets.is_none();
  if (has_targets) task.add_targets(targets.ptr());
  {
    // Note [GIL]
    std::unique_ptr<py::gil_scoped_release> nogil;
    if (task.size() >= kReleaseGilNodes) nogil = std::make_unique<py::gil_scoped_release>();
    if (has_targets) task.init_to_execute();
    task.compute_dependencies();
  }
  add_root_grads(task, roots.ptr(), root_grads.ptr());
  ReadyQueue queue;
  for (int32_t root : task.root_nodes) {
    if (task.dependencies[root] == 0) queue.push(task.nodes[root].seq, root);
  }
  RunningGuard guard(&task);
  while (!queue.empty()) {
    if (PyErr_CheckSignals() < 0) throw_python_error();
    evaluate(task, queue.pop(), queue);
  }
  run_pending_accumulations(task);
  return py::reinterpret_borrow<py::object>(task.captured);
}

PyObject* needed_edges(PyObject*, PyObject* node) {
  if (running.empty() || !running.back()->filtered()) Py_RETURN_NONE;
  try {
    return wanted_list(*running.back(), node);
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  }
}

bool Engine::will_receive_grad(py::handle node) const {
  if (running.empty()) return false;
  const GraphTask* task = running.back();
  int32_t index = task->index_of(node.ptr());
  return index >= 0 && task->reachable(index);
}

py::object Engine::hook_state() const {
  if (running.empty()) throw py::index_error("list index out of range");
  GraphTask* task = running.back();
  if (task->hook_state == nullptr) task->hook_state = check(PyDict_New());
  return py::reinterpret_borrow<py::object>(task->hook_state);
}

}  // namespace chainrule_engine
