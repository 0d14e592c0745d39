// The pybind11 module chainrule_engine._engine: the Engine class and configure(),
// through which chainrule_engine/__init__.py hands over the Python helpers.
#include <pybind11/pybind11.h>

#include "accumulate.h"
#include "array_fns.h"
#include "engine.h"
#include "fast_methods.h"
#include "node.h"
#include "op_node.h"
#include "python_api.h"
#include "recorder.h"
#include "view_maker.h"
#include "view_methods.h"
#include "validate.h"

namespace chainrule_engine {

Names names;
Helpers helpers;

namespace {
// Keeps the helpers alive for the life of the process (the module never unloads).
PyObject* helper_refs = nullptr;
}  // namespace

static PyObject* intern(const char* s) {
  PyObject* name = PyUnicode_InternFromString(s);
  if (name == nullptr) throw_python_error();
  return name;
}

void init_names() {
  names.next = intern("_next");
  names.seq = intern("_seq");
  names.tensor_hooks = intern("_tensor_hooks");
  names.retain_hooks = intern("_retain_hooks");
  names.pre_hooks = intern("_pre_hooks");
  names.post_hooks = intern("_post_hooks");
  names.variable = intern("variable");
  names.extra = intern("_extra");
  names.hooks = intern("hooks");
  names.post_acc_hooks = intern("post_acc_hooks");
  names.getattribute = intern("__getattribute__");
  names.apply = intern("apply");
  names.release_saved = intern("release_saved");
  names.num_inputs = intern("num_inputs");
  names.in_meta = intern("_in_meta");
  names.enabled = intern("enabled");
  names.acquire = intern("acquire");
  names.release = intern("release");
  names.node_observer = intern("_node_observer");
  names.enter = intern("enter");
  names.exit = intern("exit");
}

bool helpers_ready() { return helper_refs != nullptr; }

static void configure(py::object accumulate_grad_type, py::object run_tensor_pre_hooks,
                      py::object run_node_pre_hooks, py::object run_node_post_hooks,
                      py::object validate_outputs, py::object anomaly_state,
                      py::object anomaly_call_node, py::object accumulate,
                      py::object node_type) {
  py::tuple refs = py::make_tuple(node_type, accumulate_grad_type, run_tensor_pre_hooks,
                                  run_node_pre_hooks, run_node_post_hooks, validate_outputs,
                                  anomaly_state, anomaly_call_node, accumulate);
  Helpers h;
  h.accumulate_grad_type = accumulate_grad_type.ptr();
  h.run_tensor_pre_hooks = run_tensor_pre_hooks.ptr();
  h.run_node_pre_hooks = run_node_pre_hooks.ptr();
  h.run_node_post_hooks = run_node_post_hooks.ptr();
  h.validate_outputs = validate_outputs.ptr();
  h.anomaly_state = anomaly_state.ptr();
  h.anomaly_call_node = anomaly_call_node.ptr();
  h.accumulate = accumulate.ptr();
  h.engine_globals = PyFunction_Check(h.accumulate) ? PyFunction_GetGlobals(h.accumulate)
                                                     : nullptr;
  if (h.engine_globals == nullptr) {
    throw py::type_error("configure: accumulate must be engine._accumulate");
  }
  configure_node_layout(node_type.ptr());  // Note [reading nodes by slot] (node.h)
  PyObject* old = helper_refs;
  helper_refs = refs.release().ptr();
  helpers = h;
  Py_XDECREF(old);
}

// Note [table-node fast path] (op_node.h). enabled=False switches it off.
static void configure_table_ops(bool enabled, py::object op_node_type, py::object registry,
                                py::object nondiff, py::object not_implemented,
                                py::object formula_type, py::object saved_type,
                                py::object counter_type, py::object tensor_type) {
  static PyObject* refs = nullptr;
  py::object apply = op_node_type.attr("apply");
  py::object num_inputs = op_node_type.attr("num_inputs");
  py::object release_saved = op_node_type.attr("release_saved");
  py::tuple keep = py::make_tuple(op_node_type, apply, num_inputs, release_saved, registry,
                                  nondiff, not_implemented, formula_type, saved_type,
                                  counter_type, tensor_type);
  TableOps t;
  t.enabled = enabled;
  t.apply = apply.ptr();
  t.num_inputs = num_inputs.ptr();
  t.release_saved = release_saved.ptr();
  t.counter_type = counter_type.ptr();
  t.registry = registry.ptr();
  t.nondiff = nondiff.ptr();
  t.not_implemented = not_implemented.ptr();
  t.formula_type = formula_type.ptr();
  t.saved_type = saved_type.ptr();
  t.tensor = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
  configure_table_layout(t, op_node_type.ptr());
  PyObject* old = refs;
  refs = keep.release().ptr();
  table_ops = t;
  Py_XDECREF(old);
}

PyMethodDef raw_functions[] = {
    {"needed_edges", needed_edges, METH_O,
     "needed_edges(node): which of node's edges the running pass of this thread wants "
     "gradients for (a list of bools), or None for all."},
    {"record", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(record)),
     METH_FASTCALL,
     "record(op, inputs, attrs, out, view_base): chainrule._ops._registry._record in C++ "
     "(Note [recorder fast path] in src/recorder.h)."},
    {"unlock_arrays", unlock_arrays, METH_O,
     "unlock_arrays(arrays): chainrule.autograd.saved_guard.unlock_arrays in C++ "
     "(Note [saved exported leaves] in src/recorder.cc)."},
    {"array_conj", array_conj, METH_O,
     "array_conj(x): chainrule._ops._namespaces._conj in C (src/array_fns.h)."},
    {"array_expand", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(array_expand)),
     METH_FASTCALL,
     "array_expand(x, shape): chainrule._ops._namespaces._expand in C (src/array_fns.h)."},
    {"make_view", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(view_make)),
     METH_FASTCALL,
     "make_view(op, base, attrs, view_fn): chainrule._ops.views.make_view in C "
     "(Note [view maker] in src/view_maker.h)."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace chainrule_engine

PYBIND11_MODULE(_engine, m) {
  namespace ce = chainrule_engine;
  namespace py = pybind11;
  ce::init_names();
  ce::init_numpy();
  m.doc() = "chainrule's graph executor in C++ (see chainrule_engine/__init__.py).";
  if (PyModule_AddFunctions(m.ptr(), ce::raw_functions) < 0) throw py::error_already_set();
  m.def("configure", &ce::configure, py::arg("accumulate_grad_type"),
        py::arg("run_tensor_pre_hooks"), py::arg("run_node_pre_hooks"),
        py::arg("run_node_post_hooks"), py::arg("validate_outputs"),
        py::arg("anomaly_state"), py::arg("anomaly_call_node"), py::arg("accumulate"),
        py::arg("node_type"),
        "Hand the engine the Python pieces it calls back into.");
  m.def("configure_table_ops", &ce::configure_table_ops, py::arg("enabled"),
        py::arg("op_node_type"), py::arg("registry"), py::arg("nondiff"),
        py::arg("not_implemented"), py::arg("formula_type"), py::arg("saved_type"),
        py::arg("counter_type"), py::arg("tensor_type"),
        "Hand the engine what the table-node fast path needs (op_node.h).");
  m.def("table_ops_enabled", []() { return ce::table_ops.enabled; },
        "Whether the table-node fast path is on.");
  m.def("configure_recorder", &ce::configure_recorder, py::arg("enabled"),
        py::arg("python_record"), py::arg("registry"), py::arg("tensor_type"),
        py::arg("op_node_type"), py::arg("saved_type"), py::arg("counter_type"),
        py::arg("anomaly_state"), py::arg("hooks_active"), py::arg("extras_type"),
        py::arg("node_module"), py::arg("saved_guard"), py::arg("locked_saved_type"),
        "Hand the recorder what it needs (recorder.h).");
  m.def("configure_accumulate",
        [](bool enabled, py::object accumulate_grad_type, py::object tensor_type,
           py::object counter_type, py::object lock, py::object stolen) {
          ce::configure_accumulate(enabled, accumulate_grad_type.ptr(), tensor_type.ptr(),
                                   counter_type.ptr(), lock.ptr(), stolen.ptr());
        },
        py::arg("enabled"), py::arg("accumulate_grad_type"), py::arg("tensor_type"),
        py::arg("counter_type"), py::arg("lock"), py::arg("stolen"),
        "Hand the engine what the accumulation fast path needs (accumulate.h).");
  m.def("configure_array_fns",
        [](py::object python_conj, py::object np_conj, py::object python_expand) {
          ce::configure_array_fns(python_conj.ptr(), np_conj.ptr(), python_expand.ptr());
        },
        py::arg("python_conj"), py::arg("np_conj"), py::arg("python_expand"),
        "Hand over what array_conj and array_expand fall back on (array_fns.h).");
  m.def("configure_view_maker", &ce::configure_view_maker, py::arg("python_make_view"),
        py::arg("registry"), py::arg("views"), py::arg("tensor_type"), py::arg("extras_type"),
        py::arg("grad_state"), py::arg("record"), py::arg("counter_of"), py::arg("register"),
        "Hand make_view what it needs (view_maker.h).");
  m.def("configure_view_methods", &ce::configure_view_methods, py::arg("enabled"),
        py::arg("tensor_type"), py::arg("registry"), py::arg("shape"), py::arg("indexing"),
        py::arg("torch_function_on"), py::arg("torch_function_modes"), py::arg("make_view"),
        "Hand the view methods what they need (Note [view methods] in view_methods.h).");
  m.def("accumulate_enabled", &ce::accumulate_enabled,
        "Whether leaves' .grad is written by the C++ fast path.");
  m.def("recorder_enabled", &ce::recorder_enabled, "Whether record() takes its fast path.");
  ce::add_fast_method_type(m.ptr());
  m.def("configure_fast_methods", &ce::configure_fast_methods, py::arg("tensor_type"),
        py::arg("registry"), py::arg("common"), py::arg("grad_state"), py::arg("record"),
        "Hand the fast methods what they need (fast_methods.h).");
  m.def("configure_inplace_methods", &ce::configure_inplace_methods, py::arg("operators"),
        py::arg("bump_version"), py::arg("hooks_active"), py::arg("extras_type"),
        py::arg("counter_type"), "Hand the in-place fast methods what they need.");
  m.def("set_dual_hook", &ce::set_dual_hook, py::arg("hook"),
        "Called once when the forward_ad layer's dispatcher is first met alone.");
  m.def("configure_dual_methods", &ce::configure_dual_methods, py::arg("enabled"),
        py::arg("dispatchers"), py::arg("dispatch"), py::arg("recording"), py::arg("current"),
        py::arg("paused"),
        py::arg("raw_plans"), py::arg("raw_tangent"), py::arg("ref_type"),
        py::arg("jvp_programs") = py::none(),
        "Hand the fast methods what forward-mode duals need (Note [dual fast methods]).");
  py::class_<ce::Engine>(m, "Engine", "Runs backward passes; see chainrule.autograd.engine.")
      .def(py::init<>())
      .def_property_readonly("name", [](const ce::Engine&) { return "cpp"; })
      .def("execute", &ce::Engine::execute, py::arg("roots"), py::arg("root_grads"),
           py::arg("keep_graph"), py::arg("create_graph"), py::arg("targets") = py::none(),
           py::arg("accumulate_grad") = true,
           "Run a backward pass; returns the gradients captured for `targets`.")
      .def("will_receive_grad", &ce::Engine::will_receive_grad, py::arg("node"),
           "Whether the running pass of this thread delivers a gradient to `node`.")
      .def("hook_state", &ce::Engine::hook_state,
           "A dict that lives as long as the running pass of this thread.");
}
