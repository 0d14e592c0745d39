"""The fast methods (Note [fast methods] in src/fast_methods.h) against the Python
methods they replace (Note [method slot] in chainrule/_ops/_method_slot.py): the same
expression under each gives the same output, node, edges, saved tensors and version
counters, field by field, or the same error; the cases handed to Python run the
Python function (seen by a profile hook), and the common cases do not."""
import contextlib
import inspect
import pydoc
import subprocess
import sys
import threading

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
import chainrule_engine
from chainrule import _tensor, _torch_function
from chainrule._ops import _common, _method_slot, _registry
from chainrule.autograd import node as node_mod
from chainrule_engine import _engine, _mirror

from conftest import python_calls

Tensor = _tensor.Tensor


@contextlib.contextmanager
def fast_methods(enabled):
    chainrule_engine._configure_fast_methods(enabled=enabled)
    try:
        yield
    finally:
        chainrule_engine._configure_fast_methods()


def _describe(value, inputs):
    """Objects named by their role, not their identity."""
    for k, t in enumerate(inputs):
        if value is t:
            return ("input", k)
        if isinstance(t, Tensor) and value is t._data:
            return ("input data", k)
        if isinstance(t, Tensor) and value is t._vc and value is not None:
            return ("input counter", k)
        if isinstance(t, Tensor) and value is t.grad_fn and value is not None:
            return ("input grad_fn", k)
    if isinstance(value, node_mod.AccumulateGrad):
        return ("accumulator of", _describe(value.variable, inputs))
    if isinstance(value, Tensor):
        return ("tensor", _tensor_fields(value, inputs))
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, value.tobytes().hex(),
                value.flags.writeable)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_describe(v, inputs) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _describe(v, inputs)) for k, v in value.items()))
    if value is None or isinstance(value, (bool, int, float, complex, str, np.dtype)):
        return value
    return type(value).__name__


def _tensor_fields(t, inputs):
    vc = None if t._vc is None else t._vc.v
    extra = None if t._extra is None else t._extra.inference
    return (type(t).__name__, _describe(t._data, inputs), t._data.dtype.str, t._output_nr,
            t._requires_grad, _describe(t._grad, inputs), _describe(t._base, inputs), extra, vc)


def _saved_fields(s, out, inputs):
    fields = {}
    for f in ("data", "tensor", "counter", "version", "output_nr"):
        v = getattr(s, f)
        fields[f] = ("output data" if v is out._data else "output counter"
                     if v is out._vc and v is not None else _describe(v, inputs))
    extras = {k: _describe(v, inputs) for k, v in getattr(s, "__dict__", {}).items()}
    return (type(s).__name__, fields, extras)


def snapshot(out, inputs):
    """Everything observable about an op's output (or error) and its node."""
    if isinstance(out, BaseException):
        return ("error", type(out).__name__, str(out))
    node = out.grad_fn
    fields = {"out": _tensor_fields(out, inputs),
              "inputs": [_tensor_fields(t, ()) for t in inputs if isinstance(t, Tensor)]}
    if node is not None:
        fields.update(
            node=type(node).__name__, next=_describe(node._next, inputs),
            in_meta=_describe(node._in_meta, inputs), attrs=_describe(node._attrs, inputs),
            out_meta=node._out_meta, extra=_describe(getattr(node, "_extra", None), inputs),
            saved=[(k, _saved_fields(s, out, inputs)) for k, s in node._saved.items()])
    return fields


def run_both(make_inputs, expr):
    """expr(*inputs) on fresh inputs with the Python methods and with the fast ones:
    (python snapshot, fast snapshot, Python functions the fast run called)."""
    results = []
    for enabled in (False, True):
        with fast_methods(enabled):
            inputs = make_inputs()
            out, calls = python_calls(lambda: expr(*inputs))
            results.append((snapshot(out, inputs), calls))
    return results[0][0], results[1][0], results[1][1]


def _accelerable(name):
    """The entry of Note [method slot] for Tensor.<name>."""
    return next(e for e in _method_slot.ACCELERABLE if e[0] == name)


def leaf(values=(0.5, -1.25, 2.0), dtype=cr.float64, requires_grad=True):
    return cr.tensor(list(values), dtype=dtype, requires_grad=requires_grad)


# The Python code a fast method replaces (Note [fast methods]).
DISPATCH = {"fn", "operator", "apply_binary", "binary_operands", "scalar_tensor", "promote",
            "apply_op", "float_input", "pow", "_meeting_scalar", "sum", "mean",
            "accepting_numpy_spellings"}

# (name, inputs, expression): cases the C path handles (no Python frame at all)
FAST_CASES = [
    ("mul float", lambda: (leaf(),), lambda x: x * 1.0001),
    ("rmul float", lambda: (leaf(),), lambda x: 2.5 * x),
    ("mul int", lambda: (leaf(),), lambda x: x * 3),
    ("radd int", lambda: (leaf(),), lambda x: 3 + x),
    ("add tensors", lambda: (leaf(), leaf((1.0, 2.0, 3.0))), lambda x, y: x + y),
    ("add same leaf", lambda: (leaf(),), lambda x: x + x),
    ("sub tensors", lambda: (leaf(), leaf(requires_grad=False)), lambda x, y: x - y),
    ("sub float", lambda: (leaf(),), lambda x: x - 0.25),
    ("mul non-leaf", lambda: (leaf(),), lambda x: (x * 2.0) * x),
    ("broadcast", lambda: (leaf(), cr.ones(2, 3, dtype=cr.float64)), lambda x, y: y * x),
    ("rsub int", lambda: (leaf(),), lambda x: 1 - x),
    ("rsub float", lambda: (leaf(),), lambda x: 1.5 - x * x),
    ("div float", lambda: (leaf(),), lambda x: x / 2.0),
    ("div int scalar", lambda: (leaf(),), lambda x: x / 3),
    ("div tensors", lambda: (leaf(), leaf((1.0, 2.0, 4.0))), lambda x, y: x / y),
    ("sin", lambda: (leaf(),), lambda x: x.sin()),
    ("tanh non-leaf", lambda: (leaf(),), lambda x: (x * 2.0).tanh()),
    ("exp saves result", lambda: (leaf(),), lambda x: x.exp()),
    ("neg", lambda: (leaf(),), lambda x: x.neg()),
    ("abs", lambda: (leaf(),), lambda x: x.abs()),
    ("relu", lambda: (leaf(),), lambda x: x.relu()),
    ("no grad needed", lambda: (leaf(requires_grad=False),), lambda x: x.sin() * 2.0),
    ("float32 scalar", lambda: (leaf(dtype=cr.float32),), lambda x: x * 1.5),
    ("float16", lambda: (leaf(dtype=cr.float16),), lambda x: x.cos() + x),
    ("complex", lambda: (cr.tensor([1 + 2j, -0.5j], requires_grad=True),),
     lambda x: (x * 2.0).exp()),
    ("nan scalar, a cache miss", lambda: (leaf(),), lambda x: x * float("nan")),
    ("0-d", lambda: (cr.tensor(0.5, requires_grad=True),), lambda x: x.sin() * 2.0),
    ("0-d no grad", lambda: (cr.tensor(0.5),), lambda x: x.sin() * 2.0),
    ("log of negative (nan)", lambda: (leaf(),), lambda x: x.log()),
    ("unbound", lambda: (leaf(),), lambda x: Tensor.sin(Tensor.__mul__(x, 2.0))),
    ("bound method object", lambda: (leaf(),), lambda x: [x.sin][0]()),
    ("F.relu (Note [functional methods])", lambda: (leaf(),), lambda x: F.relu(x * 2.0)),
    # Note [scalar fast methods] and the reductions without arguments
    ("pow int", lambda: (leaf(),), lambda x: x ** 2),
    ("pow float", lambda: (leaf(),), lambda x: x.pow(0.5)),
    ("pow function", lambda: (leaf(),), lambda x: cr.pow(x, -1.5)),
    ("pow complex tensor", lambda: (cr.tensor([1 + 2j, -0.5j], requires_grad=True),),
     lambda x: x ** 3),
    ("sum", lambda: (leaf(),), lambda x: (x * 2.0).sum()),
    ("mean", lambda: (leaf(),), lambda x: x.mean()),
    ("sum function, float32", lambda: (leaf(dtype=cr.float32),), lambda x: cr.sum(x)),
]


@pytest.mark.parametrize("name,make_inputs,expr", FAST_CASES, ids=[c[0] for c in FAST_CASES])
def test_fast_cases_match_python_and_run_no_python(name, make_inputs, expr):
    with np.errstate(invalid="ignore"):
        python, fast, calls = run_both(make_inputs, expr)
    assert fast == python
    # 0-d results are NumPy scalars, which core's _plain_output/_record wrap
    dispatch = DISPATCH if name.startswith("0-d") else DISPATCH | {"_record", "_plain_output"}
    if "cache miss" in name:       # nan != nan: scalar_tensor makes the constant each time
        dispatch = dispatch - {"scalar_tensor"}
    assert not dispatch & set(calls), calls


# (name, inputs, expression, a Python function the fast run must have called)
FALLBACK_CASES = [
    ("subclass self", lambda: (_Sub([1.0, 2.0]),), lambda x: x.sin(), "fn"),
    ("subclass other", lambda: (leaf((1.0, 2.0)), _Sub([1.0, 2.0])), lambda x, s: x * s,
     "dispatch"),                  # Note [torch function slot]: the subclass's turn
    ("int tensor unary", lambda: (cr.tensor([1, 2]),), lambda x: x.sin(), "float_input"),
    ("int tensor neg", lambda: (cr.tensor([1, 2]),), lambda x: x.neg(), "fn"),
    ("int tensor div", lambda: (cr.tensor([1, 2]),), lambda x: x / 2, "_true_div_operands"),
    ("int tensors div", lambda: (cr.tensor([1, 2]), cr.tensor([2, 4])), lambda x, y: x / y,
     "_true_div_operands"),
    ("int tensor rsub", lambda: (cr.tensor([1, 2]),), lambda x: 1.5 - x, "promote"),
    ("int tensor times float", lambda: (cr.tensor([1, 2]),), lambda x: x * 1.5, "promote"),
    ("bool tensor", lambda: (cr.tensor([True, False]),), lambda x: x + True, "promote"),
    ("bool scalar", lambda: (leaf(),), lambda x: x * True, "promote"),
    ("bfloat16", lambda: (leaf(dtype=cr.bfloat16),), lambda x: x * 2.0, "operator"),
    ("mixed dtypes", lambda: (leaf(dtype=cr.float32), leaf()), lambda x, y: x + y, "promote"),
    ("complex scalar", lambda: (leaf(),), lambda x: x * 1j, "promote"),
    ("numpy scalar", lambda: (leaf(),), lambda x: x * np.float64(2.0), "promote"),
    ("ndarray other", lambda: (leaf(),), lambda x: x * np.ones(3), "promote"),
    ("list other", lambda: (leaf(),), lambda x: x + [1.0, 2.0, 3.0], "promote"),
    ("str other", lambda: (leaf(),), lambda x: x * "a", "promote"),
    ("broadcast error", lambda: (leaf(), cr.ones(2, dtype=cr.float64)), lambda x, y: x + y,
     "broadcast_error"),
    ("broadcast error scalar side", lambda: (leaf(), cr.ones(4, dtype=cr.float64)),
     lambda x, y: y - x, "broadcast_error"),
    ("int too large", lambda: (leaf(),), lambda x: x * 10 ** 400, "scalar_tensor"),
    ("keyword other", lambda: (leaf(), leaf()), lambda x, y: Tensor.__add__(x, other=y),
     "operator"),
    ("too many arguments", lambda: (leaf(),), lambda x: x.sin(1), None),
    ("unbound on a float", lambda: (), lambda: Tensor.sin(3.0), "fn"),
    ("F.relu on a list", lambda: (), lambda: F.relu([1.0, -1.0]), "fn"),
    ("pow bool", lambda: (leaf(),), lambda x: x ** True, "_meeting_scalar"),
    ("pow complex number", lambda: (leaf(),), lambda x: x ** 1j, "_meeting_scalar"),
    ("pow tensor", lambda: (leaf(), leaf()), lambda x, y: x ** y, "apply_binary"),
    ("pow int tensor", lambda: (cr.tensor([1, 2]),), lambda x: x ** 2, "_meeting_scalar"),
    ("pow int tensor negative", lambda: (cr.tensor([1, 2]),), lambda x: x ** -1,
     "_meeting_scalar"),
    ("pow keyword", lambda: (leaf(),), lambda x: x.pow(exponent=2), "pow"),
    ("pow numpy scalar", lambda: (leaf(),), lambda x: x ** np.float64(2.0), "_meeting_scalar"),
    ("sum dim", lambda: (leaf(),), lambda x: x.sum(0), "sum"),
    ("sum int tensor", lambda: (cr.tensor([1, 2]),), lambda x: x.sum(), "sum"),
    ("mean int tensor", lambda: (cr.tensor([1, 2]),), lambda x: x.mean(), "mean"),
    ("sum numpy spelling", lambda: (leaf(),), lambda x: x.sum(axis=0), "sum"),
]


class _Sub(Tensor):
    __slots__ = ()


@pytest.mark.parametrize("name,make_inputs,expr,python_fn", FALLBACK_CASES,
                         ids=[c[0] for c in FALLBACK_CASES])
def test_fallback_cases_match_python(name, make_inputs, expr, python_fn):
    python, fast, calls = run_both(make_inputs, expr)
    assert fast == python
    if python_fn is not None:
        assert python_fn in calls


def test_view_input_is_recorded_by_the_fast_path_not_python():
    # a view is an ordinary input for the op (the recorder saves it through
    # SavedTensor): only the recording is Python's, not the dispatch
    python, fast, calls = run_both(lambda: (leaf()[1:],), lambda x: x.sin() * 2.0)
    assert fast == python and not DISPATCH & set(calls)


def test_no_grad_makes_plain_tensors_without_python():
    python, fast, calls = run_both(lambda: (leaf(),), _under(cr.no_grad, lambda x: x * 2.0 + x))
    assert fast == python and fast["out"][4] is False
    assert not (DISPATCH | {"_plain_output"}) & set(calls), calls


def test_inference_mode_makes_inference_tensors():
    python, fast, calls = run_both(lambda: (leaf(),), _under(cr.inference_mode, lambda x: x.sin()))
    assert fast == python and fast["out"][7] is True    # an inference tensor
    assert "_wrap_inference" in calls and not DISPATCH & set(calls)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_enable_grad_inside_inference_mode(requires_grad):
    # apply_op's order: recording first, then the inference check
    def expr(x):
        with cr.inference_mode(), cr.enable_grad():
            return x * 2.0
    python, fast, _ = run_both(lambda: (leaf(requires_grad=requires_grad),), expr)
    assert fast == python and ("node" in fast) == requires_grad


def test_anomaly_mode_records_through_python():
    expr = _under(lambda: cr.autograd.detect_anomaly(), lambda x: x.sin() * 2.0)
    with pytest.warns(UserWarning):
        python, fast, calls = run_both(lambda: (leaf(),), expr)
    assert fast == python and "record_forward_trace" in calls


def test_saved_tensor_hooks():
    packed = []

    def expr(x):
        with cr.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t,
                                                   lambda t: t):
            y = (x * 1.5).sin()
        y.sum().backward()
        return x.grad
    python, fast, _ = run_both(lambda: (leaf(),), expr)
    # 1 per run: the sin's input (the mul's 1.5 is a Python number's constant, never packed)
    assert fast == python and len(packed) == 2


def test_recorder_off_records_through_python_record():
    chainrule_engine._configure_recorder(enabled=False)
    try:
        python, fast, calls = run_both(lambda: (leaf(),), lambda x: (x * 2.0).sin())
    finally:
        chainrule_engine._configure_recorder()
    assert fast == python and "_record" in calls and "apply_op" not in calls


def test_another_recorder_in_the_slot_is_called():
    seen = []

    def recorder(op, inputs, attrs, out, view_base):
        seen.append(op.name)
        return _registry._record(op, inputs, attrs, out, view_base)
    previous = _registry.set_recorder(recorder)
    try:
        leaf().sin() * 2.0
    finally:
        _registry.set_recorder(previous)
    assert seen == ["sin", "mul"]


def test_version_counters_and_saved_versions():
    def expr(x):
        y = x * 2.0
        z = y * y          # saves y twice; y gets a version counter
        y.add_(1.0)        # bumps it: backward through z must fail
        return z
    python, fast, _ = run_both(lambda: (leaf(requires_grad=False), ), lambda x: expr(
        x.requires_grad_()))
    assert fast == python
    z = expr(leaf())
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_scalar_constants_come_from_the_cache():
    x = leaf()
    y = x * 1.2345
    key = (float, 1.2345, x._data.dtype)
    assert y.grad_fn._saved["other"].tensor is _common._SCALARS[key]
    assert (x * 1.2345).grad_fn._saved["other"].tensor is _common._SCALARS[key]


def test_gradients_and_double_backward_match():
    def expr(x):
        y = x
        for i in range(12):
            y = (y * 1.0001, y.sin(), y + x, y.tanh(), y - 0.5, 2.0 * y, y.exp())[i % 7]
        (g,) = cr.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = cr.autograd.grad(g.sum(), x)
        return gg
    python, fast, _ = run_both(lambda: (leaf(),), expr)
    assert fast == python


def test_grad_mode_is_per_thread():
    x = leaf()
    seen = []

    def worker():
        seen.append((x * 2.0).requires_grad)
    with cr.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        seen.append((x * 2.0).requires_grad)
    assert seen == [True, False]


def test_modes_read_per_thread_state():
    """Note [thread-local reads]: each thread (and each new thread state) reads its
    own modes, however threads come and go."""
    x = leaf()
    seen = []

    def worker(k):
        if k % 2:
            with cr.no_grad():
                seen.append((k, (x * 2.0).requires_grad))
        else:
            with cr.autograd.detect_anomaly(check_nan=False):
                seen.append((k, bool(getattr((x * 2.0).grad_fn, "_anomaly", None))))
    with pytest.warns(UserWarning):
        for k in range(6):
            thread = threading.Thread(target=worker, args=(k,))
            thread.start()
            thread.join()
            main = x * 2.0
            assert main.requires_grad and not getattr(main.grad_fn, "_anomaly", None)
    assert seen == [(k, k % 2 == 0) for k in range(6)]


def test_no_references_leak():
    x, y = leaf(), leaf(requires_grad=False)

    def work():
        with cr.no_grad():
            ((x * 2.0) + y).sin()
        (x * y - 1.5).tanh()
        (x * 2.0 + x).sin().sum().backward()
        with pytest.raises(RuntimeError):
            x + cr.ones(5, dtype=cr.float64)
        with cr.inference_mode():
            x.sin() * 2.0
    work()                     # the constants exist, the recorder knows the ops
    attrs = _accelerable("__add__")[3]
    objects = [x, y, x._data, _common._SCALARS[(float, 2.0, x._data.dtype)],
               _common._SCALARS[(float, 1.5, x._data.dtype)], attrs,
               _registry.OPS["add"], _registry.OPS["sin"]]
    x.grad = None
    before = [sys.getrefcount(o) for o in objects]
    for _ in range(100):
        work()
    x.grad = None
    assert [sys.getrefcount(o) for o in objects] == before


# --- the descriptor itself ------------------------------------------------------------
class _FakeOp:
    multi_output = False

    def __init__(self, forward):
        self.forward = forward


def _fake_method(forward, kind="unary", attrs=None):
    calls = []

    def python_fn(*args, **kwargs):
        calls.append((args, kwargs))
        return "python"
    return _engine.FastMethod(kind, _FakeOp(forward), attrs or {}, python_fn), calls


def test_forward_error_goes_to_python():
    def forward(a):
        raise ValueError("no")
    method, calls = _fake_method(forward)
    with cr.no_grad():
        assert method(leaf()) == "python"
    assert len(calls) == 1


def test_interrupt_in_forward_propagates():
    def forward(a):
        raise KeyboardInterrupt
    method, calls = _fake_method(forward)
    with cr.no_grad(), pytest.raises(KeyboardInterrupt):
        method(leaf())
    assert calls == []


def test_attrs_are_keywords_and_the_node_keeps_the_dict():
    got = []
    method, _ = _fake_method(lambda a, b, alpha: got.append(alpha) or a + b, "binary",
                             {"alpha": 7})
    with cr.no_grad():
        out = method(leaf(), leaf())
    assert got == [7] and out._data.tolist() == [1.0, -2.5, 4.0]
    x = leaf()
    assert (x + x).grad_fn._attrs is _accelerable("__add__")[3]


def test_changed_attrs_go_to_python():
    attrs = {"alpha": 7}
    method, calls = _fake_method(lambda a, b, alpha: a + b, "binary", attrs)
    attrs["beta"] = 1
    with cr.no_grad():
        assert method(leaf(), leaf()) == "python"
    del attrs["beta"], attrs["alpha"]
    attrs["gamma"] = 1
    with cr.no_grad():
        assert method(leaf(), leaf()) == "python"
    assert len(calls) == 2


def test_unsupported_kinds_are_refused():
    with pytest.raises(ValueError):
        _engine.FastMethod("ternary", _FakeOp(None), {}, print)
    with pytest.raises(ValueError):
        _engine.FastMethod("unary", _FakeOp(None), {1: 2}, print)
    assert chainrule_engine._make_fast_method("nary", _registry.OPS["sin"], {}, print) is None


def test_docstrings_names_and_signatures_survive():
    assert _method_slot.method_accelerated("sin")
    for name, kind, op, attrs, fn in _method_slot.ACCELERABLE:
        method = Tensor.__dict__[name]
        python = _torch_function.METHODS.get(name, fn)     # Note [torch function slot]
        assert type(method) is _engine.FastMethod and python.__wrapped__ is fn
        assert method.__doc__ == fn.__doc__ and method.__name__ == python.__name__
        assert method.__qualname__ == python.__qualname__
        assert method.__module__ == python.__module__
        assert method.__wrapped__ is python and method.op is op
        assert inspect.signature(method) == inspect.signature(fn)
    assert "Elementwise sine" in pydoc.render_doc(Tensor.sin)
    # the function forms call a fast method of their own (Note [method slot]), aliases
    # one wrapper
    assert cr.fix is cr.trunc and cr.sin.__wrapped__ is Tensor.sin.__wrapped__.__wrapped__
    impl = cr.sin.__closure__[cr.sin.__code__.co_freevars.index("_tf_impl")].cell_contents
    assert type(impl) is _engine.FastMethod and impl.__wrapped__ is cr.sin.__wrapped__
    assert inspect.ismethoddescriptor(Tensor.__dict__["sin"])


# --- installation ---------------------------------------------------------------------
def test_installed_for_every_accelerable_method():
    names = [entry[0] for entry in _method_slot.ACCELERABLE]
    assert {"sin", "tanh", "__add__", "__radd__", "__sub__", "__mul__", "__rmul__"} <= set(names)
    assert all(_method_slot.method_accelerated(n) for n in names)


def test_disabled_restores_the_python_functions():
    with fast_methods(False):
        for name, _, _, _, fn in _method_slot.ACCELERABLE:
            assert Tensor.__dict__[name] is _torch_function.METHODS.get(name, fn)
    assert _method_slot.method_accelerated("__mul__")


def test_off_when_the_mirrored_code_changed(monkeypatch):
    monkeypatch.setattr(_mirror, "FAST_METHODS_FINGERPRINT", "changed")
    chainrule_engine._configure_fast_methods()
    try:
        assert not _method_slot.method_accelerated("sin")
    finally:
        monkeypatch.undo()
        chainrule_engine._configure_fast_methods()
    assert _method_slot.method_accelerated("sin")


def test_off_when_the_weak_scalar_table_changed(monkeypatch):
    monkeypatch.setitem(_common._WEAK_KINDS, float, "fc")
    assert not _mirror.fast_methods_match()
    monkeypatch.undo()
    assert _mirror.fast_methods_match()


def test_environment_variable_turns_it_off():
    code = ("import chainrule_engine; from chainrule._ops import _method_slot as m; "
            "print(m.method_accelerated('sin'), m.method_accelerated('__mul__'))")
    env = {"CHAINRULE_ENGINE_FAST_METHODS": "0", "PYTHONPATH": ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_a_method_replaced_by_someone_else_is_left_alone(monkeypatch):
    mine = lambda self: "mine"     # noqa: E731
    monkeypatch.setattr(Tensor, "sin", mine)
    chainrule_engine._configure_fast_methods(enabled=False)
    chainrule_engine._configure_fast_methods()
    assert Tensor.__dict__["sin"] is mine


def _under(context, fn):
    def run(*args):
        with context():
            return fn(*args)
    return run


# --- kind "inplace" (Note [in-place fast methods] in src/fast_methods.cc) -------------
def _inplace_state(result, inputs):
    """What an augmented assignment leaves: the result (self, or the error), then
    each tensor's values, version, counter presence and autograd fields."""
    if isinstance(result, BaseException):
        head = ("error", type(result).__name__, str(result))
    else:
        head = ("self" if result is inputs[0] else "other", _describe(result._data, ()))
    return head, [(type(t).__name__, _describe(t._data, ()), _version_of(t),
                   getattr(t, "_vc", "unset") is None,
                   t._requires_grad, type(t.grad_fn).__name__, t._base is None)
                  for t in inputs if isinstance(t, Tensor)]


def _version_of(t):
    try:
        return t._version
    except Exception as e:                    # noqa: BLE001 - a foreign or unset counter
        return type(e).__name__


def _inplace_code_names():
    """The augmented assignments' code (operators._inplace_operator's `operator`, one
    code object for the four), named so no other function is taken for it."""
    return {fn.__code__: "augmented assignment" for _, kind, _, _, fn in
            _method_slot.ACCELERABLE if kind == "inplace"}


def run_inplace_both(make_inputs, expr):
    """expr(*inputs) with the Python operators and with the fast ones: (python state,
    fast state, Python functions the fast run called)."""
    results = []
    own = _inplace_code_names()
    for enabled in (False, True):
        with fast_methods(enabled):
            inputs = make_inputs()
            out, names = python_calls(lambda: expr(*inputs),
                                      lambda code: own.get(code, code.co_name))
            results.append((_inplace_state(out, inputs), names))
    return results[0][0], results[1][0], results[1][1]


def _isub(p, g):
    with cr.no_grad():
        p -= 0.1 * g
    return p


def _stale_param(values=(0.5, -1.25, 2.0)):
    """A parameter after a step: extras, a version counter, no live accumulator."""
    p = leaf(values)
    (p * 2.0).sum().backward()
    with cr.no_grad():
        p -= 0.1 * p.grad
    p.grad = None
    return p


def _no_grad(fn):
    def run(*args):
        with cr.no_grad():
            return fn(*args)
    return run


# The Python code a fast in-place method replaces.
INPLACE_DISPATCH = {"augmented assignment", "inplace", "_try_fast_inplace", "_keeps_kind",
                    "_bump_version", "bump"}

INPLACE_FAST_CASES = [
    ("optimizer step", lambda: (leaf(), leaf((1.0, 2.0, 3.0), requires_grad=False)), _isub),
    ("step on a stepped parameter", lambda: (_stale_param(), leaf(requires_grad=False)),
     _isub),
    ("iadd", lambda: (leaf(), leaf(requires_grad=False)), _no_grad(lambda p, g: p.__iadd__(g))),
    ("imul", lambda: (leaf(), leaf(requires_grad=False)), _no_grad(lambda p, g: p.__imul__(g))),
    ("itruediv", lambda: (leaf(), leaf(requires_grad=False)),
     _no_grad(lambda p, g: p.__itruediv__(g))),
    ("grad mode on, nothing requires grad",
     lambda: (leaf(requires_grad=False), leaf(requires_grad=False)),
     lambda p, g: p.__isub__(g)),
    ("broadcast other", lambda: (cr.ones(2, 3, dtype=cr.float64), leaf(requires_grad=False)),
     lambda p, g: p.__iadd__(g)),
    ("other requires grad, no_grad", lambda: (leaf(requires_grad=False), leaf()),
     _no_grad(lambda p, g: p.__isub__(g))),
    ("float32", lambda: (leaf(dtype=cr.float32), leaf(dtype=cr.float32)), _isub),
    ("complex", lambda: (cr.tensor([1 + 2j, 3j]), cr.tensor([1j, 1.0 + 0j])),
     lambda p, g: p.__imul__(g)),
    ("divide by zero (inf)", lambda: (leaf(requires_grad=False), cr.zeros(3, dtype=cr.float64)),
     lambda p, g: p.__itruediv__(g)),
    ("self and other one tensor", lambda: (leaf(requires_grad=False),),
     lambda p: p.__iadd__(p)),
]


@pytest.mark.parametrize("name,make_inputs,expr", INPLACE_FAST_CASES,
                         ids=[c[0] for c in INPLACE_FAST_CASES])
def test_inplace_fast_cases_match_python_and_run_no_python(name, make_inputs, expr):
    with np.errstate(divide="ignore"):
        python, fast, calls = run_inplace_both(make_inputs, expr)
    assert fast == python
    assert not INPLACE_DISPATCH & set(calls), calls




def _readonly():
    arr = np.array([0.5, -1.25, 2.0])
    arr.flags.writeable = False
    return cr.from_numpy(arr)


def _inference_tensor():
    with cr.inference_mode():
        return cr.tensor([0.5, -1.25, 2.0], dtype=cr.float64)


def _under_hooks(fn):
    def run(*args):
        with cr.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            return fn(*args)
    return run


# (name, inputs, expression, a Python function the fast run must have called)
INPLACE_FALLBACK_CASES = [
    ("leaf requiring grad, grad mode on", lambda: (leaf(), leaf(requires_grad=False)),
     lambda p, g: p.__isub__(g), "_try_fast_inplace"),
    ("other requires grad, grad mode on", lambda: (leaf(requires_grad=False), leaf()),
     lambda p, g: p.__isub__(g), "_try_fast_inplace"),
    ("non-leaf, grad mode on", lambda: (leaf() * 1.0, leaf(requires_grad=False)),
     lambda p, g: p.__imul__(g), "_try_fast_inplace"),
    ("python float", lambda: (leaf(requires_grad=False),), lambda p: p.__isub__(0.5),
     "_keeps_kind"),
    ("mixed dtypes",
     lambda: (leaf(requires_grad=False), leaf(dtype=cr.float32, requires_grad=False)),
     lambda p, g: p.__iadd__(g), "_keeps_kind"),
    ("float into int", lambda: (cr.tensor([1, 2, 3]), leaf(requires_grad=False)),
     lambda p, g: p.__iadd__(g), "augmented assignment"),
    ("int tensors", lambda: (cr.tensor([1, 2, 3]), cr.tensor([1, 1, 1])),
     lambda p, g: p.__imul__(g), "augmented assignment"),
    ("true division of ints", lambda: (cr.tensor([1, 2, 3]), cr.tensor([1, 1, 1])),
     lambda p, g: p.__itruediv__(g), "augmented assignment"),
    ("shape error", lambda: (leaf(requires_grad=False), cr.ones(2, 3, dtype=cr.float64)),
     lambda p, g: p.__iadd__(g), "commit_inplace"),
    ("read-only array", lambda: (_readonly(), leaf(requires_grad=False)),
     lambda p, g: p.__iadd__(g), "_try_fast_inplace"),
    ("inference tensor outside inference mode",
     lambda: (_inference_tensor(), leaf(requires_grad=False)),
     lambda p, g: p.__iadd__(g), "_try_fast_inplace"),
    ("saved-tensor hooks active", lambda: (leaf(requires_grad=False), leaf(requires_grad=False)),
     _under_hooks(lambda p, g: p.__iadd__(g)), "_try_fast_inplace"),
    ("subclass self", lambda: (_Sub([1.0, 2.0]), cr.tensor([1.0, 2.0])),
     lambda p, g: p.__iadd__(g), "dispatch"),      # Note [torch function slot]
    ("subclass other", lambda: (cr.tensor([1.0, 2.0]), _Sub([1.0, 2.0])),
     lambda p, g: p.__iadd__(g), "dispatch"),
    ("ndarray other", lambda: (leaf(requires_grad=False),), lambda p: p.__iadd__(np.ones(3)),
     "augmented assignment"),
    ("keyword", lambda: (leaf(requires_grad=False), leaf(requires_grad=False)),
     lambda p, g: Tensor.__iadd__(p, other=g), "augmented assignment"),
    ("float self, a view", lambda: (cr.ones(2, 3, dtype=cr.float64)[0], leaf(requires_grad=False)),
     lambda p, g: p.__iadd__(g), None),
    ("a foreign version counter", lambda: (_with(leaf(requires_grad=False), _vc=5),
                                           leaf(requires_grad=False)),
     _no_grad(lambda p, g: p.__isub__(g)), "bump"),
    ("extras never set", lambda: (_unset(leaf(requires_grad=False), "_extra"),
                                  leaf(requires_grad=False)),
     _no_grad(lambda p, g: p.__isub__(g)), "_try_fast_inplace"),
    ("counter never set", lambda: (_unset(leaf(requires_grad=False), "_vc"),
                                   leaf(requires_grad=False)),
     _no_grad(lambda p, g: p.__isub__(g)), "bump"),
]


def _with(t, **fields):
    for name, value in fields.items():
        object.__setattr__(t, name, value)
    return t


def _unset(t, name):
    """A Tensor whose slot `name` was never set (made by __new__, filled by hand)."""
    u = object.__new__(Tensor)
    for field in Tensor.__slots__:
        if field not in (name, "__weakref__"):
            object.__setattr__(u, field, getattr(t, field))
    return u


@pytest.mark.parametrize("name,make_inputs,expr,python_fn", INPLACE_FALLBACK_CASES,
                         ids=[c[0] for c in INPLACE_FALLBACK_CASES])
def test_inplace_fallback_cases_match_python(name, make_inputs, expr, python_fn):
    python, fast, calls = run_inplace_both(make_inputs, expr)
    assert fast == python
    if python_fn is not None:
        assert python_fn in calls


def test_inplace_view_writes_through_to_its_base():
    base = cr.zeros(2, 3, dtype=cr.float64)
    row = base[1]
    row += cr.ones(3, dtype=cr.float64)
    assert base.tolist() == [[0.0] * 3, [1.0] * 3]
    assert base._version == row._version == 1


def test_inplace_under_a_replaced_method_as_python(monkeypatch):
    """The operator calls Tensor.sub_ only when the fast path does not apply: a
    replaced sub_ is called alike under both (not for a plain tensor, once for one
    that requires grad, with grad mode on)."""
    results = []
    for enabled in (False, True):
        with fast_methods(enabled):
            calls = []
            python_sub_ = Tensor.sub_
            monkeypatch.setattr(Tensor, "sub_",
                                lambda s, o: calls.append(o) or python_sub_(s, o))
            p, g = leaf(requires_grad=False), leaf(requires_grad=False)
            p -= g
            p -= leaf((1.0, 2.0, 3.0))
            results.append((len(calls), p.tolist(), p._version, type(p.grad_fn).__name__))
            monkeypatch.undo()
    assert results[0] == results[1] == (1, [-1.0, -2.0, -3.0], 2, "SubBackward0")


def test_inplace_under_a_replaced_helper_calls_it(monkeypatch):
    from chainrule._ops import operators
    calls = []
    python_try = operators._try_fast_inplace
    monkeypatch.setattr(operators, "_try_fast_inplace",
                        lambda *args: calls.append(args) or python_try(*args))
    p = leaf(requires_grad=False)
    p *= leaf(requires_grad=False)
    assert len(calls) == 1 and p.tolist() == [0.25, 1.5625, 4.0]


def test_inplace_interrupt_propagates():
    def ufunc(*args, **kwargs):
        raise KeyboardInterrupt
    method = _engine.FastMethod("inplace", _registry.OPS["add"], {}, print, inplace=ufunc)
    with pytest.raises(KeyboardInterrupt):
        method(leaf(requires_grad=False), leaf(requires_grad=False))


def test_inplace_methods_installed_and_fingerprinted(monkeypatch):
    for name in ("__iadd__", "__isub__", "__imul__", "__itruediv__"):
        assert type(Tensor.__dict__[name]) is _engine.FastMethod
    monkeypatch.setattr(_mirror, "INPLACE_FINGERPRINT", "changed")
    chainrule_engine._configure_fast_methods()
    try:
        assert not _method_slot.method_accelerated("__isub__")
        assert _method_slot.method_accelerated("__sub__")
    finally:
        monkeypatch.undo()
        chainrule_engine._configure_fast_methods()
    assert _method_slot.method_accelerated("__isub__")


def test_inplace_refuses_a_malformed_description():
    for inplace in (None, 3, "add"):
        with pytest.raises(ValueError):
            _engine.FastMethod("inplace", _registry.OPS["add"], {}, print, inplace=inplace)
    with pytest.raises(ValueError):
        _engine.FastMethod("inplace", _registry.OPS["add"], {"alpha": 1}, print,
                           inplace=np.add)
    with pytest.raises(ValueError):
        _engine.FastMethod("binary", _registry.OPS["add"], {}, print, inplace=np.add)


# --- Note [view methods] -----------------------------------------------------------------
# The Python code a view method's C entry replaces.
VIEW_PYTHON = {"t", "transpose", "unsqueeze", "permute", "view", "reshape", "getitem", "_view",
               "_select", "_shape_arg", "_infer_shape", "keyword_sizes", "dispatching"}


def grid(requires_grad=True, dtype=cr.float64):
    rows = [[4.0 * i + j for j in range(1, 5)] for i in range(3)]
    return cr.tensor(rows, dtype=dtype, requires_grad=requires_grad)


def view_snapshot(out, inputs):
    """snapshot plus what makes a view: layout, shared counter, its view_fn's replays
    (on the root's array and on the root), the root's weak listing."""
    if isinstance(out, BaseException) or out._base is None or out._extra is None:
        return snapshot(out, inputs)
    root = out._base
    listed = (root._extra.views if root._extra is not None else None) or []
    return (snapshot(out, inputs), out._data.strides, out._vc is root._vc,
            out._extra.view_fn(root._data).tolist(), out._extra.view_fn(root).tolist(),
            out._extra.inference, any(r() is out for r in listed))


def run_views_both(make_inputs, expr):
    results = []
    for enabled in (False, True):
        with fast_methods(enabled):
            inputs = make_inputs()
            out, calls = python_calls(lambda: expr(*inputs))
            results.append((view_snapshot(out, inputs), calls))
    return results[0][0], results[1][0], results[1][1]


VIEW_FAST_CASES = [
    ("t", lambda: (grid(),), lambda x: x.t()),
    ("t no grad needed", lambda: (grid(False),), lambda x: x.t()),
    ("t 1-D", lambda: (cr.ones(3, requires_grad=True),), lambda x: x.t()),
    ("t of a view", lambda: (grid(),), lambda x: x.t().t()),
    ("transpose", lambda: (grid(),), lambda x: x.transpose(0, 1)),
    ("transpose negative", lambda: (grid(),), lambda x: x.transpose(-1, 0)),
    ("transpose same dim", lambda: (grid(),), lambda x: x.transpose(1, 1)),
    ("unsqueeze", lambda: (grid(),), lambda x: x.unsqueeze(0)),
    ("unsqueeze last", lambda: (grid(),), lambda x: x.unsqueeze(-1)),
    ("unsqueeze 0-d", lambda: (cr.tensor(2.0, requires_grad=True),), lambda x: x.unsqueeze(0)),
    ("permute", lambda: (grid(),), lambda x: x.permute(1, 0)),
    ("permute tuple", lambda: (grid(),), lambda x: x.permute((1, 0))),
    ("permute list negative", lambda: (grid(),), lambda x: x.permute([-1, 0])),
    ("view", lambda: (grid(),), lambda x: x.view(12)),
    ("view -1", lambda: (grid(),), lambda x: x.view(-1)),
    ("view 2-D", lambda: (grid(),), lambda x: x.view(2, 6)),
    ("view tuple with -1", lambda: (grid(),), lambda x: x.view((4, -1))),
    ("view list", lambda: (grid(),), lambda x: x.view([6, 2])),
    ("view of an empty tensor", lambda: (cr.ones(0, 3),), lambda x: x.view(3, 0)),
    ("reshape", lambda: (grid(),), lambda x: x.reshape(6, 2)),
    ("reshape -1 float32", lambda: (grid(dtype=cr.float32),), lambda x: x.reshape(-1)),
    ("getitem", lambda: (grid(),), lambda x: x[0]),
    ("getitem negative", lambda: (grid(),), lambda x: x[-1]),
    ("getitem twice", lambda: (grid(),), lambda x: x[1][2]),
    ("getitem int tensor", lambda: (cr.arange(6).view(2, 3),), lambda x: x[1]),
    ("no_grad", lambda: (grid(),), lambda x: _under(cr.no_grad, lambda: x.t()[1])()),
    ("function forms", lambda: (grid(),), lambda x: cr.transpose(cr.reshape(x, (4, 3)), 0, 1)),
    ("F.linear's t", lambda: (grid(), cr.ones(3, dtype=cr.float64), cr.ones(2, 4, dtype=cr.float64)),
     lambda w, b, x: F.linear(x, w, b)),
]


@pytest.mark.parametrize("name,make_inputs,expr", VIEW_FAST_CASES,
                         ids=[c[0] for c in VIEW_FAST_CASES])
def test_view_methods_match_python_and_run_no_python(name, make_inputs, expr):
    python, fast, calls = run_views_both(make_inputs, expr)
    assert fast == python
    wrapped = "function forms" in name or "F." in name    # cr.transpose: its own wrapper
    assert not (VIEW_PYTHON - ({"dispatching"} if wrapped else set())) & set(calls), calls


class _ViewSub(Tensor):
    __slots__ = ()


VIEW_FALLBACK_CASES = [
    ("keyword", lambda: (grid(),), lambda x: x.transpose(dim0=0, dim1=1), "transpose"),
    ("size keyword", lambda: (grid(),), lambda x: x.view(size=(12,)), "view"),
    ("dim out of range", lambda: (grid(),), lambda x: x.transpose(0, 2), "transpose"),
    ("0-d transpose", lambda: (cr.tensor(1.0),), lambda x: x.transpose(0, -1), "transpose"),
    ("unsqueeze out of range", lambda: (grid(),), lambda x: x.unsqueeze(3), "unsqueeze"),
    ("numpy dim", lambda: (grid(),), lambda x: x.unsqueeze(np.int64(1)), "unsqueeze"),
    ("index out of range", lambda: (grid(),), lambda x: x[3], "getitem"),
    ("index of 0-d", lambda: (cr.tensor(1.0),), lambda x: x[0], "getitem"),
    ("bool index", lambda: (grid(),), lambda x: x[True], "getitem"),
    ("numpy index", lambda: (grid(),), lambda x: x[np.int64(1)], "getitem"),
    ("huge index", lambda: (grid(),), lambda x: x[10 ** 30], "getitem"),
    ("slice", lambda: (grid(),), lambda x: x[1:], "getitem"),
    ("bad shape", lambda: (grid(),), lambda x: x.view(5), "view"),
    ("two -1", lambda: (grid(),), lambda x: x.view(-1, -1), "view"),
    ("negative size", lambda: (grid(),), lambda x: x.view(-2, -6), "view"),
    ("not viewable", lambda: (grid(),), lambda x: x.t().view(12), "view"),
    ("view dtype", lambda: (grid(),), lambda x: x.view(cr.int64), "view"),
    ("view no sizes", lambda: (cr.tensor(1.0),), lambda x: x.view(), "view"),
    ("reshape a copy", lambda: (grid(),), lambda x: x.t().reshape(12), "reshape"),
    ("t of 3-D", lambda: (cr.ones(2, 2, 2),), lambda x: x.t(), "t"),
    ("permute duplicate", lambda: (grid(),), lambda x: x.permute(0, 0), "permute"),
    ("permute too few", lambda: (grid(),), lambda x: x.permute(0), "permute"),
    ("permute 0-d", lambda: (cr.tensor(1.0),), lambda x: x.permute(()), "permute"),
    ("subclass self", lambda: (_ViewSub([[1.0, 2.0]]),), lambda x: x.t(), "dispatching"),
    ("vmap (a dispatcher)", lambda: (cr.ones(2, 3, 4),), lambda x: cr.vmap(lambda r: r.t())(x),
     "t"),
]


@pytest.mark.parametrize("name,make_inputs,expr,python_fn", VIEW_FALLBACK_CASES,
                         ids=[c[0] for c in VIEW_FALLBACK_CASES])
def test_view_methods_fall_back_to_python(name, make_inputs, expr, python_fn):
    python, fast, calls = run_views_both(make_inputs, expr)
    assert fast == python
    assert python_fn in calls


def test_view_methods_gradients_and_in_place_checks_match():
    def run():
        x = grid()
        y = x * 1.0
        v = y.t()[1]
        v.mul_(2.0)                               # an in-place op on a view: CopySlices
        (y.view(-1) * cr.arange(12, dtype=cr.float64)).sum().backward()
        leaf_view = x.unsqueeze(0)
        try:
            leaf_view.add_(1.0)
        except RuntimeError as e:
            error = str(e)
        return x.grad.tolist(), y.grad_fn.name(), v.grad_fn.name(), y._version, error
    with fast_methods(False):
        python = run()
    assert run() == python


def test_a_mode_sees_view_methods():
    from chainrule.overrides import TorchFunctionMode
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", func))
            return func(*args, **(kwargs or {}))
    x = grid()
    with Log():
        x.t(), x[0], x.view(-1)
    assert {"t", "view"} <= set(seen) and any("getitem" in str(s) for s in seen), seen
    assert _method_slot.method_accelerated("t")


def test_view_registration_prunes_like_python():
    def run():
        x = grid()
        kept = [x.t() if i % 3 else x[0] for i in range(130)]
        del kept[::2]
        kept += [x.view(-1) for _ in range(70)]
        return len(x._extra.views), sum(r() is not None for r in x._extra.views)
    chainrule_engine._configure_view_maker(enabled=False)
    try:
        python = run()
    finally:
        chainrule_engine._configure_view_maker()
    assert run() == python


def test_views_environment_variable_turns_view_methods_off():
    code = ("import chainrule_engine; from chainrule._ops import _method_slot as m; "
            "print(m.method_accelerated('t'), m.method_accelerated('__getitem__'), "
            "m.method_accelerated('sin'))")
    env = {"CHAINRULE_ENGINE_VIEWS": "0", "PYTHONPATH": ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["False", "False", "True"]


def test_view_methods_off_when_the_mirrored_code_changed(monkeypatch):
    monkeypatch.setattr(_mirror, "VIEW_METHODS_FINGERPRINT", "changed")
    chainrule_engine._configure_view_methods()
    chainrule_engine._configure_fast_methods()
    try:
        assert not _method_slot.method_accelerated("view")
        assert _method_slot.method_accelerated("sin")
    finally:
        monkeypatch.undo()
        chainrule_engine._configure_view_methods()
        chainrule_engine._configure_fast_methods()
    assert _method_slot.method_accelerated("view")


def test_view_kind_needs_a_known_method():
    for attrs in ({}, {"method": "squeeze"}, {"method": 3}):
        with pytest.raises(ValueError):
            _engine.FastMethod("view", _registry.OPS["t"], attrs, print)
