"""The C++ engine gives exactly the Python engine's results, in the same order, on
random graphs: gradients (bitwise), hook call order, captures with inputs=,
allow_unused / materialize_grads, retain_graph, create_graph (double backward)."""
import numpy as np
import pytest

import chainrule as cr
from conftest import run_under

UNARY = ("sin", "exp", "tanh", "neg")
BINARY = ("add", "mul", "sub")
SHAPES = [(3, 4), (1, 4), (3, 1), (4,)]


def random_graph(seed, n_ops=40, log=None):
    """Leaves (some not requiring grad) and a random DAG of ops over them, with
    broadcasting (so validation sums gradients down), hooks that log their calls
    and sometimes change the gradient, and retain_grad on some intermediates."""
    rng = np.random.default_rng(seed)
    leaves = [cr.tensor(rng.standard_normal(SHAPES[i % len(SHAPES)]) * 0.5,
                        requires_grad=bool(i % 5)) for i in range(6)]
    values = list(leaves)
    if log is not None:
        from chainrule.autograd import engine
        for i, leaf in enumerate(leaves):
            if leaf.requires_grad and rng.random() < 0.5:
                acc = cr.autograd.graph.get_gradient_edge(leaf).node
                acc.register_prehook(lambda g, i=i: log.append(("acc-pre", i)))
                acc.register_hook(lambda gi, go, i=i: log.append(("acc-post", i)))
    for k in range(n_ops):
        if rng.random() < 0.4:
            a = values[rng.integers(len(values))]
            out = getattr(a, UNARY[rng.integers(len(UNARY))])()
        else:
            a, b = (values[i] for i in rng.integers(len(values), size=2))
            out = getattr(a, BINARY[rng.integers(len(BINARY))])(b)
        if log is not None and out.requires_grad and rng.random() < 0.3:
            scale = float(rng.integers(1, 3))
            out.register_hook(lambda g, k=k, s=scale: (log.append(("t", k)), g * s)[1])
            out.grad_fn.register_prehook(
                lambda go, k=k, node=out.grad_fn:
                    log.append(("pre", k, engine.get_engine().needed_edges(node))))
            out.grad_fn.register_hook(lambda gi, go, k=k: log.append(("post", k)))
        if out.requires_grad and rng.random() < 0.1:
            out.retain_grad()
        values.append(out)
    return leaves, values


def grads_of(tensors):
    return [t.grad.numpy().copy() if (t.is_leaf or t.retains_grad) and t.grad is not None
            else None for t in tensors]


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
        else:
            x = x.numpy() if hasattr(x, "numpy") else x
            y = y.numpy() if hasattr(y, "numpy") else y
            assert x.dtype == y.dtype and x.shape == y.shape
            assert np.array_equal(x, y, equal_nan=True)


def backward_case(seed):
    log = []
    leaves, values = random_graph(seed, log=log)
    roots = [v for v in values[-3:] if v.requires_grad]
    if not roots:
        return None
    loss = sum(r.sum() for r in roots)
    loss.backward()
    return grads_of(leaves), grads_of(v for v in values if v.requires_grad), log


@pytest.mark.parametrize("seed", range(40))
def test_backward_matches(engines, seed):
    (_, py), (_, cpp) = engines
    a = run_under(py, lambda: backward_case(seed))
    b = run_under(cpp, lambda: backward_case(seed))
    if a is None:
        assert b is None
        return
    same(a[0], b[0])
    same(a[1], b[1])
    assert a[2] == b[2]        # hooks ran in the same order


def grad_case(seed, create_graph, materialize):
    log = []
    leaves, values = random_graph(seed, log=log)
    rng = np.random.default_rng(seed + 1000)
    out = values[-1]
    if not out.requires_grad:
        return None
    wanted = [v for v in values if v.requires_grad]
    inputs = [wanted[i] for i in rng.choice(len(wanted), size=min(4, len(wanted)),
                                            replace=False)]
    g = cr.tensor(rng.standard_normal(out.shape))
    grads = cr.autograd.grad(out, inputs, g, create_graph=create_graph, allow_unused=True,
                             materialize_grads=materialize)
    result = [None if x is None else x.numpy(force=True).copy() for x in grads]
    second = None
    if create_graph:
        total = sum((x * x).sum() for x in grads if x is not None and x.requires_grad)
        if isinstance(total, cr.Tensor):
            second = cr.autograd.grad(total, [l for l in leaves if l.requires_grad],
                                      allow_unused=True)
            second = [None if x is None else x.numpy().copy() for x in second]
    return result, second, log, grads_of(leaves)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_with_inputs_matches(engines, seed, create_graph):
    (_, py), (_, cpp) = engines
    materialize = seed % 2 == 0
    a = run_under(py, lambda: grad_case(seed, create_graph, materialize))
    b = run_under(cpp, lambda: grad_case(seed, create_graph, materialize))
    if a is None:
        assert b is None
        return
    same(a[0], b[0])
    if a[1] is None:
        assert b[1] is None
    else:
        same(a[1], b[1])
    assert a[2] == b[2]
    same(a[3], b[3])           # grad() never touches .grad


def backward_inputs_case(seed):
    leaves, values = random_graph(seed)
    out = values[-1]
    if not out.requires_grad:
        return None
    targets = [v for v in values[::3] if v.requires_grad][:3]
    for v in targets:
        if not v.is_leaf:
            v.retain_grad()
    out.sum().backward(inputs=targets)
    return grads_of(leaves), grads_of(targets)


@pytest.mark.parametrize("seed", range(20))
def test_backward_with_inputs_matches(engines, seed):
    (_, py), (_, cpp) = engines
    a = run_under(py, lambda: backward_inputs_case(seed))
    b = run_under(cpp, lambda: backward_inputs_case(seed))
    if a is None:
        assert b is None
        return
    same(a[0], b[0])
    same(a[1], b[1])


def test_retain_graph_twice_then_freed(engines):
    for name, engine in engines:
        def case():
            x = cr.tensor([1.0, 2.0], requires_grad=True)
            y = (x.exp() * x).sum()
            y.backward(retain_graph=True)
            y.backward()
            with pytest.raises(RuntimeError, match="Trying to backward through the graph a "
                                                   "second time"):
                y.backward()
            return x.grad.numpy().copy()
        result = run_under(engine, case)
        assert np.allclose(result, 2 * np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0])))


def test_execution_order_newest_first(engines):
    orders = []
    for _, engine in engines:
        def case():
            order = []
            x = cr.tensor([1.0], requires_grad=True)
            parts = [x * float(i + 1) for i in range(5)]
            for i, p in enumerate(parts):
                p.grad_fn.register_prehook(lambda g, i=i: order.append(i))
            sum(parts).sum().backward()
            return order
        orders.append(run_under(engine, case))
    assert orders[0] == orders[1] == [4, 3, 2, 1, 0]


def test_engine_interface_matches_python_engine():
    import chainrule_engine
    from chainrule.autograd.engine import PythonEngine
    public = {n for n in dir(PythonEngine) if not n.startswith("_")}
    missing = {n for n in public if not hasattr(chainrule_engine.CppEngine, n)}
    assert not missing, f"CppEngine lacks {sorted(missing)}"
    assert chainrule_engine.CppEngine().name == "cpp"


def test_multi_grad_hook_all_mode(engines):
    results = []
    for _, engine in engines:
        def case():
            seen = []
            a = cr.rand(2, 3, requires_grad=True)
            b = cr.rand(2, 3, requires_grad=True)
            c, d = a * b, a * b
            cr.autograd.graph.register_multi_grad_hook(
                (a, b, c, d), lambda grads: seen.append([g is not None for g in grads]))
            c.sum().backward(retain_graph=True)
            c.sum().backward(inputs=(a,), retain_graph=True)
            return seen
        results.append(run_under(engine, case))
    assert results[0] == results[1] == [[True, True, True, False], [True, False, True, False]]


def test_custom_function_and_reentrant_backward(engines):
    results = []
    for _, engine in engines:
        def case():
            class Reentrant(cr.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return x * 2

                @staticmethod
                def backward(ctx, g):
                    (x,) = ctx.saved_tensors
                    with cr.enable_grad():
                        inner = x.detach().requires_grad_(True)
                        (inner ** 3).sum().backward()     # a backward inside a backward
                    return g * 2 + inner.grad

            x = cr.tensor([1.0, 2.0], requires_grad=True)
            Reentrant.apply(x).sum().backward()
            return x.grad.numpy().copy()
        results.append(run_under(engine, case))
    same(results[0:1], results[1:2])
    assert np.allclose(results[1], [2 + 3.0, 2 + 12.0])


# --- the table-node fast path (Note [table-node fast path] in src/op_node.h) ----------
def _saved_hooks_case():
    packed = []

    def pack(t):
        packed.append(1)
        return t * 1.0

    with cr.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 2.0):
        x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x.sin() * x).exp()
    y.sum().backward()
    return x.grad.numpy().copy(), len(packed)


def _multi_output_case():
    x = cr.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    a, b = x.unbind(0)
    c, d = (x * 2).split([1, 2], dim=1)
    ((a * b).sum() + c.exp().sum() + (d * d).sum()).backward()
    return x.grad.numpy().copy()


def _not_implemented_unwanted_case():
    x = cr.tensor([3.0, 5.0], requires_grad=True)
    w = cr.tensor([2.0, 2.0], requires_grad=True)
    y = (w.exp() // 2.0).sum() + (x * w).sum()     # floor_divide: off the path to x
    return [g.numpy().copy() for g in cr.autograd.grad(y, [x])]


def _not_implemented_wanted_case():
    x = cr.tensor([3.0, 5.0], requires_grad=True)
    (x // 2.0).sum().backward()


def _retain_and_free_case():
    x = cr.tensor([0.5, 1.5], requires_grad=True)
    y = (x.tanh() * x.sin()).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    return first, x.grad.numpy().copy()


@pytest.mark.parametrize("case", [_saved_hooks_case, _multi_output_case,
                                  _not_implemented_unwanted_case, _retain_and_free_case])
def test_fast_path_and_its_fallbacks_match(engines, case):
    (_, py), (_, cpp) = engines
    a, b = run_under(py, case), run_under(cpp, case)
    if isinstance(a, tuple) and not isinstance(a[0], np.ndarray):
        a, b = list(a[0]) + [a[1]], list(b[0]) + [b[1]]
    elif isinstance(a, tuple):
        a, b = list(a), list(b)
    elif not isinstance(a, list):
        a, b = [a], [b]
    for x, y in zip(a, b):
        assert np.array_equal(x, y)


def test_fast_path_missing_formula_error_matches(engines):
    (_, py), (_, cpp) = engines
    messages = []
    for engine in (py, cpp):
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide") as info:
            run_under(engine, _not_implemented_wanted_case)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_fast_path_off_gives_the_same_results(engines):
    from chainrule_engine import _engine
    import chainrule_engine
    (_, py), (_, cpp) = engines
    expected = run_under(py, lambda: backward_case(3))
    was_on = _engine.table_ops_enabled()
    try:
        chainrule_engine._configure_table_ops(enabled=False)
        assert not _engine.table_ops_enabled()
        got = run_under(cpp, lambda: backward_case(3))
    finally:
        chainrule_engine._configure_table_ops(enabled=None if was_on else False)
    same(expected[0], got[0])
    assert expected[2] == got[2]


# --- create_graph on the table-node fast path ------------------------------------------
def _create_graph_case():
    # saved inputs (mul, pow), a saved output (tanh's result, rebuilt on its node), a
    # reduction and a view in the formulas; then a second backward through them
    x = cr.tensor([0.3, -1.2, 0.7], requires_grad=True)
    w = cr.tensor([[0.5, -0.25, 1.0], [2.0, 0.1, -0.3]], requires_grad=True)
    y = (cr.tanh(w @ x) ** 2).sum() * x.exp().sum()
    gx, gw = cr.autograd.grad(y, (x, w), create_graph=True)
    hx, hw = cr.autograd.grad((gx * gx).sum() + gw.sum(), (x, w))
    return [gx.detach().numpy().copy(), gw.detach().numpy().copy(),
            hx.numpy().copy(), hw.numpy().copy(),
            [type(g.grad_fn).__name__ for g in (gx, gw)]]


def test_create_graph_backward_runs_formulas_without_op_node_apply(engines):
    from conftest import python_calls
    (_, py), (_, cpp) = engines
    expected = run_under(py, _create_graph_case)
    got, names = python_calls(lambda: run_under(cpp, _create_graph_case),
                              lambda code: (code.co_filename.rpartition("/")[2], code.co_name))
    for a, b in zip(expected[:4], got[:4]):
        assert np.array_equal(a, b)
    assert expected[4] == got[4]
    assert ("_registry.py", "apply") not in names


def test_create_graph_gradients_are_validated_in_c(engines):
    from conftest import python_calls
    (_, cpp), = engines[1:]
    x = cr.tensor([0.3, -1.2, 0.7], dtype=cr.float64, requires_grad=True)
    y = (cr.tanh(x) ** 2 * x.exp()).sum()
    got, names = python_calls(lambda: run_under(cpp, lambda: cr.autograd.grad(
        y, x, create_graph=True)), lambda code: code.co_name)
    assert got[0].requires_grad and "validate_outputs" not in names and "apply" not in names


def test_create_graph_fast_path_raises_the_modified_saved_tensor_error(engines):
    messages = []
    for _, engine in engines:
        def case():
            x = cr.tensor([1.0, 2.0], requires_grad=True)
            y = x * 1.0
            z = (y * y).sum()
            y.add_(1.0)
            cr.autograd.grad(z, x, create_graph=True)
        with pytest.raises(RuntimeError) as info:
            run_under(engine, case)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "modified by an inplace operation" in messages[0]


def test_create_graph_with_an_array_root_gradient_wraps_it(engines):
    # the engine's root gradient may be a bare ndarray (Note [gradients are raw
    # arrays or tensors]): the formulas get a Tensor either way
    from chainrule.autograd.node import gradient_edge
    results = []
    for _, engine in engines:
        x = cr.tensor([0.5, 1.5], requires_grad=True)
        y = (x.sin() * x).sum()
        with cr.enable_grad():
            (g,) = engine.execute([gradient_edge(y)], [np.ones(())], True, True,
                                  [gradient_edge(x)], accumulate_grad=False)
        assert isinstance(g, cr.Tensor) and g.requires_grad
        results.append(cr.autograd.grad(g.sum(), x)[0].numpy())
    assert np.array_equal(results[0], results[1])
