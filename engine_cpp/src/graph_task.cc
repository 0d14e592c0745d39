#include "graph_task.h"

#include <limits>
#include <stdexcept>

namespace chainrule_engine {

// -- PtrMap ---------------------------------------------------------------------------
PtrMap::PtrMap() : slots_(64, {nullptr, -1}), mask_(63) {}

size_t PtrMap::slot_of(PyObject* key) const {
  // Objects are 16-byte aligned: drop the low bits, then mix (Fibonacci hashing).
  auto bits = reinterpret_cast<uintptr_t>(key) >> 4;
  return static_cast<size_t>(bits * 0x9E3779B97F4A7C15ull) & mask_;
}

int32_t PtrMap::find(PyObject* key) const {
  for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
    const auto& s = slots_[i];
    if (s.first == key) return s.second;
    if (s.first == nullptr) return -1;
  }
}

void PtrMap::insert(PyObject* key, int32_t value) {
  if ((count_ + 1) * 2 > slots_.size()) grow();
  size_t i = slot_of(key);
  while (slots_[i].first != nullptr) i = (i + 1) & mask_;
  slots_[i] = {key, value};
  ++count_;
}

void PtrMap::grow() {
  std::vector<std::pair<PyObject*, int32_t>> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, {nullptr, -1});
  mask_ = slots_.size() - 1;
  count_ = 0;
  for (const auto& s : old) {
    if (s.first != nullptr) insert(s.first, s.second);
  }
}

// -- GraphTask ------------------------------------------------------------------------
GraphTask::GraphTask(PyObject* keep, PyObject* create, bool accumulate)
    : keep_graph(keep),
      create_graph(create),
      keep_graph_flag(truthy(keep)),
      create_graph_flag(truthy(create)),
      accumulate_grad(accumulate) {
  captured = check(PyList_New(0));
}

GraphTask::~GraphTask() {
  for (auto& entry : pending_accumulations) Py_XDECREF(entry.second);
  for (PyObject* buffer : buffers) Py_XDECREF(buffer);
  for (const NodeRec& rec : nodes) Py_DECREF(rec.node);
  Py_XDECREF(captured);
  Py_XDECREF(hook_state);
}

int32_t GraphTask::intern(PyObject* node, std::vector<int32_t>& to_expand) {
  int32_t index = index_.find(node);
  if (index >= 0) return index;
  if (nodes.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw std::length_error("chainrule_engine: graph has too many nodes");
  }
  index = static_cast<int32_t>(nodes.size());
  Py_INCREF(node);
  nodes.push_back(NodeRec{node, 0, 0, 0, false});
  index_.insert(node, index);
  to_expand.push_back(index);
  return index;
}

void GraphTask::read_edge(PyObject* entry, std::vector<int32_t>& to_expand) {
  if (entry == Py_None) {
    edges.push_back(Edge{kNoEdge, 0});
    return;
  }
  Ref pair(check(PySequence_Fast(entry, "graph edges must be (node, input_nr) pairs")));
  if (PySequence_Fast_GET_SIZE(pair.get()) != 2) {
    PyErr_SetString(PyExc_ValueError, "graph edges must be (node, input_nr) pairs");
    throw_python_error();
  }
  PyObject* child = PySequence_Fast_GET_ITEM(pair.get(), 0);
  long long slot = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(pair.get(), 1));
  if (slot == -1 && PyErr_Occurred()) throw_python_error();
  int32_t child_index = intern(child, to_expand);
  edges.push_back(Edge{child_index, static_cast<int64_t>(slot)});
}

void GraphTask::expand(int32_t index, std::vector<int32_t>& to_expand) {
  PyObject* node = nodes[index].node;
  int64_t seq = read_seq(node);
  bool is_acc = is_accumulate_grad(node);
  Ref next(read_next(node));
  Ref entries(check(PySequence_Fast(next.get(), "node._next must be a sequence")));
  Py_ssize_t n = PySequence_Fast_GET_SIZE(entries.get());
  auto first = static_cast<uint32_t>(edges.size());
  for (Py_ssize_t i = 0; i < n; ++i) {
    read_edge(PySequence_Fast_GET_ITEM(entries.get(), i), to_expand);
  }
  NodeRec& rec = nodes[index];  // after the pushes: `nodes` may have moved
  rec.seq = seq;
  rec.is_accumulate = is_acc;
  rec.first_edge = first;
  rec.num_edges = static_cast<uint32_t>(n);
}

void GraphTask::discover(PyObject* roots) {
  std::vector<int32_t> to_expand;
  Ref seq(check(PySequence_Fast(roots, "roots must be a sequence")));
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
  for (Py_ssize_t i = 0; i < n; ++i) {
    Ref pair(check(PySequence_Fast(PySequence_Fast_GET_ITEM(seq.get(), i),
                                   "roots must be (node, input_nr) pairs")));
    size_t before = nodes.size();
    int32_t index = intern(PySequence_Fast_GET_ITEM(pair.get(), 0), to_expand);
    if (nodes.size() != before) root_nodes.push_back(index);
  }
  while (!to_expand.empty()) {
    int32_t index = to_expand.back();
    to_expand.pop_back();
    expand(index, to_expand);
  }
  buffers.assign(nodes.size(), nullptr);
}

void GraphTask::add_targets(PyObject* targets) {
  Ref seq(check(PySequence_Fast(targets, "targets must be a sequence")));
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
  for (Py_ssize_t i = 0; i < n; ++i) {
    Ref pair(check(PySequence_Fast(PySequence_Fast_GET_ITEM(seq.get(), i),
                                   "targets must be (node, input_nr) pairs")));
    int32_t node = index_of(PySequence_Fast_GET_ITEM(pair.get(), 0));
    long long slot = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(pair.get(), 1));
    if (slot == -1 && PyErr_Occurred()) throw_python_error();
    if (node < 0) {  // unreachable: never evaluated, never captured
      outside_targets_.emplace_back(PySequence_Fast_GET_ITEM(pair.get(), 0), slot);
      continue;
    }
    target_nodes_.push_back(node);
    if (!is_captured(node, slot)) {  // captures.setdefault: the first index wins
      captures_[node].push_back(Capture{slot, static_cast<int32_t>(i)});
    }
  }
  Py_DECREF(captured);
  captured = check(PyList_New(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_INCREF(Py_None);
    PyList_SET_ITEM(captured, i, Py_None);
  }
  should_run_.assign(nodes.size(), 0);
  filtered_ = true;
}

bool GraphTask::wants(PyObject* entry) const {
  if (entry == Py_None) return false;
  Ref pair(check(PySequence_Fast(entry, "graph edges must be (node, input_nr) pairs")));
  if (PySequence_Fast_GET_SIZE(pair.get()) != 2) return false;
  PyObject* child = PySequence_Fast_GET_ITEM(pair.get(), 0);
  long long slot = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(pair.get(), 1));
  if (slot == -1 && PyErr_Occurred()) throw_python_error();
  int32_t index = index_of(child);
  if (index >= 0) return should_run(index) || is_captured(index, slot);
  for (const auto& target : outside_targets_) {
    if (target.first == child && target.second == slot) return true;
  }
  return false;
}

bool GraphTask::is_captured(int32_t node, int64_t slot) const {
  const std::vector<Capture>* list = captures_of(node);
  if (list == nullptr) return false;
  for (const Capture& c : *list) {
    if (c.slot == slot) return true;
  }
  return false;
}

const std::vector<Capture>* GraphTask::captures_of(int32_t node) const {
  if (captures_.empty()) return nullptr;
  auto it = captures_.find(node);
  return it == captures_.end() ? nullptr : &it->second;
}

void GraphTask::init_to_execute() {
  // Nodes from which a target is reachable: walk the reversed edges from the
  // targets (every node here is reachable from the roots, by construction).
  size_t n = nodes.size();
  std::vector<uint32_t> parent_start(n + 1, 0);
  for (const Edge& e : edges) {
    if (is_edge(e)) ++parent_start[e.child + 1];
  }
  for (size_t i = 0; i < n; ++i) parent_start[i + 1] += parent_start[i];
  std::vector<int32_t> parents(parent_start[n]);
  std::vector<uint32_t> fill(parent_start.begin(), parent_start.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    const NodeRec& rec = nodes[i];
    for (uint32_t k = 0; k < rec.num_edges; ++k) {
      const Edge& e = edges[rec.first_edge + k];
      if (is_edge(e)) parents[fill[e.child]++] = static_cast<int32_t>(i);
    }
  }
  std::vector<uint8_t> leads(n, 0);
  std::vector<int32_t> stack;
  for (int32_t t : target_nodes_) {
    if (!leads[t]) {
      leads[t] = 1;
      stack.push_back(t);
    }
  }
  while (!stack.empty()) {
    int32_t node = stack.back();
    stack.pop_back();
    for (uint32_t k = parent_start[node]; k < parent_start[node + 1]; ++k) {
      int32_t p = parents[k];
      if (!leads[p]) {
        leads[p] = 1;
        stack.push_back(p);
      }
    }
  }
  // A target runs only when it accumulates (backward) or leads on to another target.
  for (size_t i = 0; i < n; ++i) {
    if (!leads[i]) continue;
    const NodeRec& rec = nodes[i];
    if (rec.is_accumulate) {
      should_run_[i] = accumulate_grad;
      continue;
    }
    for (uint32_t k = 0; k < rec.num_edges; ++k) {
      const Edge& e = edges[rec.first_edge + k];
      if (is_edge(e) && leads[e.child]) {
        should_run_[i] = 1;
        break;
      }
    }
  }
}

void GraphTask::compute_dependencies() {
  dependencies.assign(nodes.size(), 0);
  reachable_.assign(nodes.size(), 0);
  std::vector<int32_t> stack(root_nodes.begin(), root_nodes.end());
  for (int32_t r : root_nodes) reachable_[r] = 1;
  while (!stack.empty()) {
    int32_t node = stack.back();
    stack.pop_back();
    if (!should_run(node)) continue;
    const NodeRec& rec = nodes[node];
    const Edge* e = edges_of(rec);
    for (uint32_t k = 0; k < rec.num_edges; ++k) {
      if (!delivers(e[k])) continue;
      int32_t child = e[k].child;
      ++dependencies[child];
      if (!reachable_[child]) {
        reachable_[child] = 1;
        stack.push_back(child);
      }
    }
  }
}

}  // namespace chainrule_engine
