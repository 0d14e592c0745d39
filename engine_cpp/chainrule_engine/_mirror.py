"""Fingerprints of the Python code the C++ engine mirrors.

The C++ engine reimplements parts of core in C++: the Python engine (engine.py and its
helpers) and, on its fast path, the backward of table ops (OpNode.apply and the
helpers it calls; Note [table-node fast path] in src/op_node.h). A fingerprint is a
hash of the AST of that code without docstrings, so comments and docs may change
freely but code may not without someone looking at the C++ side:

- the table-node fast path, the recorder (Note [recorder fast path] in
  src/recorder.h) and the fast methods (Note [fast methods] in src/fast_methods.h)
  turn themselves off when their fingerprint differs (correct, only slower: the
  Python code runs instead);
- tests/test_python_engine_mirror.py fails on either difference and says what to do.
"""
import ast
import contextlib
import hashlib
import inspect
import linecache

# Update after mirroring a change in src/ (the test prints the new values).
ENGINE_FINGERPRINT = "8ed232e24f388539"
TABLE_APPLY_FINGERPRINT = "f2e97cc11cf4b610"
RECORD_FINGERPRINT = "20638b33617abd38"
ACCUMULATE_FINGERPRINT = "34ab168f1cbf08a9"
ARRAY_FNS_FINGERPRINT = "d4a1deab9d9518d1"
FAST_METHODS_FINGERPRINT = "5cade293cdc61e2a"
INPLACE_FINGERPRINT = "1f1e37cfc53dbe6c"
DUAL_FINGERPRINT = "c2655f59be500559"
VIEW_MAKER_FINGERPRINT = "aa182038c4da3dd6"
VIEW_METHODS_FINGERPRINT = "784bbfd844ff8147"


def engine_parts():
    from chainrule.autograd import engine, graph_task, input_buffer, ready_queue, node
    return [
        (node, ["Node.num_inputs"]),       # inlined for classes that inherit it (node.cc)
        (engine, ["PythonEngine", "_accumulate", "_buffer", "_capture", "_leaf_has_hooks",
                  "_run_tensor_pre_hooks",
                  "_run_node_pre_hooks", "_run_node_post_hooks", "needed_edges",
                  "observed"]),         # Note [node observer slot]: NodeObservation
        (graph_task, ["GraphTask", "_nodes_leading_to"]),
        (input_buffer, ["InputBuffer"]),
        (ready_queue, ["ReadyQueue"]),
    ]


def table_apply_parts():
    from chainrule._ops import _registry
    from chainrule.autograd import saved_tensor
    return [
        (_registry, ["OpNode.apply", "OpNode.num_inputs", "OpNode.release_saved",
                     "Formula.__call__", "_run_vjp", "_as_tensor"]),
        (saved_tensor, ["SavedTensor.array", "SavedTensor.as_tensor"]),
    ]


def record_parts():
    from chainrule import _tensor, _version_counter
    from chainrule._ops import _registry
    from chainrule.autograd import anomaly_mode, node, saved_guard, saved_tensor
    return [
        (_registry, ["_record", "_output"]),
        (saved_tensor, ["SavedTensor.__init__"]),
        (saved_tensor, ["LockedSavedTensor"]),          # Note [saved exported leaves]
        (saved_guard, ["is_exported", "lock_arrays", "_arrays",    # Note [leaf records]
                       "unlock_arrays", "_set_writeable"]),      # and [unlock slot]
        (_tensor, ["memory_root"]),             # what saved_guard's functions lock
        (_version_counter, ["VersionCounter.__init__"]),
        (node, ["grad_accumulator", "AccumulateGrad.__init__", "Node.__init__"]),
        (anomaly_mode, ["_AnomalyState"]),  # Note [thread-local reads] in src/recorder.h
    ]


def accumulate_parts():
    from chainrule import _tensor, _version_counter
    from chainrule.autograd import accumulate, engine, node
    return [
        (engine, ["_accumulate"]),
        (node, ["AccumulateGrad.apply"]),
        (accumulate, ["accumulate_into_grad", "_accumulate", "_same_layout",
                      "run_post_accumulate_hooks"]),
        (_tensor, ["Tensor._wrap", "Tensor._bump_version"]),
        (_version_counter, ["bump"]),
    ]


def array_fns_parts():
    from chainrule._ops import _namespaces
    return [(_namespaces, ["_conj", "_expand"])]


def fast_methods_parts():
    from chainrule import _dtypes, _grad_mode, _tensor
    from chainrule._ops import _common, _registry, elementwise, operators, reduction
    return [
        (elementwise, ["_make", "div", "_true_div_operands", "pow", "_meeting_scalar",
                       "_keeps_dtype"]),
        (_dtypes, ["scalar_category"]),
        (reduction, ["sum", "mean", "_dims", "_sum_dtype", "_np_dtype", "_check_floating"]),
        (_common, ["numpy_spellings"]),
        (operators, ["_binary_operator"]),
        (_common, ["apply_binary", "binary_operands", "scalar_tensor", "float_input"]),
        (_registry, ["apply_op", "run_op", "_plain_output"]),
        (_tensor, ["Tensor._wrap"]),
        (_grad_mode, ["_ModeState"]),       # Note [thread-local reads] in src/recorder.h
    ]


def inplace_parts():
    """Note [in-place fast methods] in src/fast_methods.cc: the augmented assignments
    (operators._inplace_operator's closures, the "inplace" entries of Note [method
    slot]) and what they run on the fast path."""
    from chainrule import _grad_mode, _tensor, _version_counter
    from chainrule._ops import operators
    return [
        (operators, ["_inplace_operator", "_try_fast_inplace", "_keeps_kind"]),
        (_tensor, ["Tensor._bump_version"]),
        (_version_counter, ["bump"]),
        (_grad_mode, ["_ModeState"]),       # Note [thread-local reads] in src/recorder.h
    ]


def view_maker_parts():
    """Note [view maker] in src/view_maker.h: make_view's fast path and the _Extras it
    makes."""
    from chainrule import _grad_mode, _tensor
    from chainrule._ops import views
    return [
        (views, ["make_view", "_fast_op", "_register", "_made_under_no_grad"]),
        (_tensor, ["_Extras"]),
        (_grad_mode, ["_ModeState"]),       # Note [thread-local reads] in src/recorder.h
    ]


def view_methods_parts():
    """Note [view methods] in src/view_methods.h: the view methods whose arguments it
    parses, the helpers they call and the wrapper that calls them."""
    from chainrule import _factories, _tensor, _torch_function
    from chainrule._ops import indexing, shape
    return [
        (shape, ["t", "transpose", "unsqueeze", "permute", "view", "reshape", "_view",
                 "_viewable", "_shape_arg", "_infer_shape", "_checked_shape"]),
        (indexing, ["getitem", "_select"]),
        (_factories, ["keyword_sizes"]),
        (_tensor, ["_wrap_dim"]),
        (_torch_function, ["_template_source", "_needed", "_any_overriding", "_overriding"]),
    ]


def dual_parts():
    """Note [dual fast methods] in src/fast_methods.cc: the forward_ad layer's
    dispatcher, the level's storage, the signature of the helper it calls and how
    the JVP programs it runs are made (Note [JVP programs])."""
    from chainrule_forward_ad import _over_reverse, _programs, _tangents
    return [
        (_tangents, ["dispatch", "Level.__init__", "Level.set", "Level.set_output",
                     "Level._forget", "Level._forget_array", "_Ref", "_Paused", "_raw_plan"]),
        (_over_reverse, ["recording_dispatch"]),
        (_programs, ["jvp_programs", "_trace", "_finish", "_Recorder", "_Traced", "_binary",
                     "_unary"]),
    ]


def dual_methods_match():
    """Whether the forward_ad code Note [dual fast methods] mirrors is unchanged, and
    the raw path's helper takes what the C++ side passes."""
    from chainrule_forward_ad import _programs, _tangents
    return _matches(dual_parts, DUAL_FINGERPRINT) and list(
        inspect.signature(_tangents._raw_tangent).parameters) == [
            "raw", "inputs", "attrs", "out", "t", "missing", "is_view"] and (
        _programs.CODES, _programs.COMPARE, _programs.MAX_REGISTERS) == JVP_PROGRAM_CODES


# The operator codes, comparison base and register count of Note [JVP programs] that
# fast_methods.cc (jvp_operator, kJvpCompare, kMaxJvpRegisters) knows.
JVP_PROGRAM_CODES = ({"add": 0, "sub": 1, "mul": 2, "truediv": 3, "pow": 4, "neg": 5,
                      "pos": 6}, 8, 32)


# binary_operands' table of Python scalars absorbed without promotion: the fast
# methods take float and int with float or complex tensors (a subset of it).
WEAK_KINDS = {float: "fcV", int: "iufcV"}


def _strip_docstrings(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and \
                    isinstance(body[0].value, ast.Constant) and \
                    isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _resolve(module, dotted):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def fingerprint(parts):
    digest = hashlib.sha256()
    for module, names in parts:
        for name in names:
            source = inspect.getsource(_resolve(module, name))
            tree = _strip_docstrings(ast.parse(inspect.cleandoc("\n" + source)))
            digest.update(f"{module.__name__}.{name}\n".encode())
            digest.update(ast.dump(tree, annotate_fields=False).encode())
    return digest.hexdigest()[:16]


def _matches(parts, expected):
    """Whether the code ``parts()`` lists has the fingerprint ``expected`` (False when
    its sources are missing, e.g. .pyc only)."""
    try:
        with _sources_not_kept():
            return fingerprint(parts()) == expected
    except (OSError, TypeError, AttributeError):
        return False


@contextlib.contextmanager
def _sources_not_kept():
    """Forget the source files read for a check once it is made: inspect keeps every
    file it reads in linecache for the process's life, and each full garbage
    collection would then walk their lines (tens of thousands of strings)."""
    cached = set(linecache.cache)
    try:
        yield
    finally:
        for filename in set(linecache.cache) - cached:
            del linecache.cache[filename]


def table_apply_matches():
    """Whether OpNode.apply and its helpers are the code src/op_node.cc mirrors."""
    return _matches(table_apply_parts, TABLE_APPLY_FINGERPRINT)


def record_matches():
    """Whether _record and the constructors it inlines are the code src/recorder.cc
    mirrors."""
    return _matches(record_parts, RECORD_FINGERPRINT)


def accumulate_matches():
    """Whether the accumulation into .grad is the code src/accumulate.cc mirrors."""
    return _matches(accumulate_parts, ACCUMULATE_FINGERPRINT)


def fast_methods_match():
    """Whether the Tensor methods of Note [method slot] and the helpers they call are
    the code src/fast_methods.cc mirrors."""
    from chainrule._ops import _common
    return _matches(fast_methods_parts, FAST_METHODS_FINGERPRINT) and \
        _common._WEAK_KINDS == WEAK_KINDS


def inplace_match():
    """Whether the in-place operators and the fast path they run are the code
    src/fast_methods.cc mirrors (Note [in-place fast methods])."""
    return _matches(inplace_parts, INPLACE_FINGERPRINT)


def array_fns_match():
    """Whether the ARRAY_NS helpers src/array_fns.cc mirrors are unchanged."""
    return _matches(array_fns_parts, ARRAY_FNS_FINGERPRINT)


def view_methods_match():
    """Whether the view methods are the code src/view_methods.cc mirrors."""
    return _matches(view_methods_parts, VIEW_METHODS_FINGERPRINT)


def view_maker_matches():
    """Whether make_view's fast path is the code src/view_maker.cc mirrors."""
    return _matches(view_maker_parts, VIEW_MAKER_FINGERPRINT)
