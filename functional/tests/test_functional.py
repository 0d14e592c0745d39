"""chainrule.autograd.functional and chainrule.func against closed forms, with and
without the forward_ad layer (the reverse-mode fallbacks give the same values), and
the layer's docstring examples."""
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import functional as F
from chainrule import func
from docstring_runner import failed_examples

A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
X = np.array([0.3, -0.2, 0.7])
V = np.array([1.0, 0.5, -2.0])


def f(x):
    return (cr.tanh(cr.tensor(A) @ x) ** 2).sum()


def closed_form_gradient_and_hessian(x):
    u = np.tanh(A @ x)
    s = 1 - u ** 2
    grad = A.T @ (2 * u * s)
    hess = A.T @ np.diag(2 * s * s - 4 * u * u * s) @ A
    return grad, hess


@pytest.fixture(params=["with forward_ad", "without forward_ad"])
def layers(request, monkeypatch):
    if request.param == "without forward_ad":
        monkeypatch.setitem(sys.modules, "chainrule_forward_ad", None)
    return request.param


def test_second_order_results_match_the_closed_form(layers):
    x, v = cr.tensor(X), cr.tensor(V)
    grad, hess = closed_form_gradient_and_hessian(X)
    np.testing.assert_allclose(F.hessian(f, x).numpy(), hess, atol=1e-12)
    np.testing.assert_allclose(F.hessian(f, x, vectorize=True).numpy(), hess, atol=1e-12)
    np.testing.assert_allclose(F.hvp(f, x, v)[1].numpy(), hess @ V, atol=1e-12)
    np.testing.assert_allclose(F.vhp(f, x, v)[1].numpy(), V @ hess, atol=1e-12)
    np.testing.assert_allclose(F.jvp(lambda x: func.grad(f)(x), x, v)[1].numpy(), hess @ V,
                               atol=1e-12)
    np.testing.assert_allclose(func.hessian(f)(x).numpy(), hess, atol=1e-12)
    np.testing.assert_allclose(func.jacfwd(func.grad(f))(x).numpy(), hess, atol=1e-12)
    np.testing.assert_allclose(func.grad(f)(x).numpy(), grad, atol=1e-12)


def test_forward_mode_needs_the_forward_ad_layer(monkeypatch):
    monkeypatch.setitem(sys.modules, "chainrule_forward_ad", None)
    with pytest.raises(ImportError, match="chainrule-forward-ad"):
        F.jacobian(lambda x: x, cr.ones(2), vectorize=True, strategy="forward-mode")


def test_per_sample_gradients_equal_one_gradient_per_row():
    w = cr.tensor(A)
    batch = cr.tensor(np.random.default_rng(0).standard_normal((5, 3)))

    def loss(w, x):
        return (cr.tanh(w @ x) ** 2).sum()
    per_sample = func.vmap(func.grad(loss), in_dims=(None, 0))(w, batch)
    rows = [func.grad(loss)(w, batch[i]) for i in range(5)]
    np.testing.assert_allclose(per_sample.numpy(), cr.stack(rows).numpy())


def test_grad_of_grad_and_create_graph_results_are_differentiable():
    x = cr.tensor(0.7, dtype=cr.float64)
    third = func.grad(func.grad(func.grad(lambda x: x ** 4)))(x)
    assert third.item() == pytest.approx(24 * 0.7)
    xr = cr.tensor(X, requires_grad=True)
    (h,) = [F.hessian(f, xr, create_graph=True)]
    assert h.requires_grad and cr.autograd.grad(h.sum(), xr)[0].shape == (3,)



def test_forward_mode_jvp_returns_the_outputs_themselves():
    # with create_graph the outputs keep their own nodes (TanhBackward0), as the
    # reference's are, rather than unpack_dual's primals (torch::autograd::Identity)
    xr = cr.tensor(X, requires_grad=True)
    out, tangent = F.jvp(lambda x: cr.tanh(x), xr, cr.tensor(V), create_graph=True)
    assert out.grad_fn.name() == "TanhBackward0"
    assert tangent.requires_grad
    np.testing.assert_allclose(tangent.detach().numpy(), (1 - np.tanh(X) ** 2) * V)


def test_per_sample_gradients_of_a_conv_net_run_once():
    # the weight gradient of batched inputs is one grouped convolution (Note [entries
    # as groups]); the input gradient folds the batch into N
    from chainrule._ops import _batching_rules
    w = cr.randn(4, 2, 3, 3, dtype=cr.float64)
    xs = cr.randn(5, 1, 2, 6, 6, dtype=cr.float64)

    def loss(w, x):
        return (cr.nn.functional.conv2d(x, w, stride=2) ** 2).sum()
    _batching_rules.LOOP_LOG = log = set()
    try:
        per_sample = func.vmap(func.grad(loss), in_dims=(None, 0))(w, xs)
    finally:
        _batching_rules.LOOP_LOG = None
    rows = cr.stack([func.grad(loss)(w, xs[i]) for i in range(5)])
    assert not log and np.allclose(per_sample.numpy(), rows.numpy())

def _layer_modules():
    import pkgutil
    import chainrule_functional
    return ["chainrule_functional"] + [
        f"chainrule_functional.{m.name}" for m in pkgutil.iter_modules(chainrule_functional.__path__)]


@pytest.mark.parametrize("name", _layer_modules())
def test_docstring_examples(name):
    assert failed_examples(name) == 0


def _two_inputs(x, y):
    return (cr.tanh(cr.tensor(A) @ x) ** 2).sum() * (y ** 3).sum()


def test_hvp_reverse_over_reverse_equals_the_double_backward_trick(monkeypatch):
    # hvp takes reverse-over-reverse (Note [hvp by reverse-over-reverse]); strict=True
    # keeps the double-backward trick: the same values, tuples and create_graph
    # results included, with or without the forward_ad layer
    fn = F.hvp
    inputs = (cr.tensor(X), cr.tensor([0.5, -1.5], dtype=cr.float64))
    v = (cr.tensor(V), cr.tensor([1.0, 2.0], dtype=cr.float64))
    out, got = fn(_two_inputs, inputs, v)
    _, want = fn(_two_inputs, inputs, v, strict=True)
    assert isinstance(got, tuple) and len(got) == 2 and not got[0].requires_grad
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-12)
    xr = cr.tensor(X, requires_grad=True)
    _, graph = fn(f, xr, cr.tensor(V), create_graph=True)
    assert graph.requires_grad
    third = cr.autograd.grad(graph.sum(), xr)[0]
    monkeypatch.setitem(sys.modules, "chainrule_forward_ad", None)
    xr2 = cr.tensor(X, requires_grad=True)
    _, trick = fn(f, xr2, cr.tensor(V), create_graph=True)
    np.testing.assert_allclose(graph.detach().numpy(), trick.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(third.numpy(), cr.autograd.grad(trick.sum(), xr2)[0].numpy(),
                               atol=1e-12)


def test_per_sample_gradients_equal_the_loop():
    # Note [per-sample gradients]: vmap(grad) is one pass, nested vmaps too
    from chainrule.func import grad, vmap
    w = cr.randn(3, 4, dtype=cr.float64)
    x = cr.randn(2, 5, 4, dtype=cr.float64)
    loss = lambda w, x: (cr.tanh(w @ x) ** 2).sum()          # noqa: E731
    batched = vmap(vmap(grad(loss), in_dims=(None, 0)), in_dims=(None, 0))(w, x)
    loop = cr.stack([cr.stack([grad(loss)(w, x[i, j]) for j in range(5)]) for i in range(2)])
    assert np.allclose(batched.numpy(), loop.numpy())


def test_jacrev_under_vmap_and_grad_of_vmap():
    from chainrule.func import grad, jacrev, vmap
    a = cr.randn(3, 3, dtype=cr.float64)
    xs = cr.randn(4, 3, dtype=cr.float64)
    g = lambda x: cr.tanh(a @ x)                             # noqa: E731
    batched = vmap(jacrev(g))(xs)
    loop = cr.stack([jacrev(g)(xs[i]) for i in range(4)])
    assert np.allclose(batched.numpy(), loop.numpy())
    outer = grad(lambda x: vmap(g)(x).sum())(xs)
    assert np.allclose(outer.numpy(), cr.stack([grad(lambda r: g(r).sum())(xs[i])
                                                 for i in range(4)]).numpy())


def test_forward_mode_transforms_under_vmap_equal_the_loop():
    # tangents do not flow through batched tensors: such calls run per entry
    from chainrule.func import hessian, jacfwd, jvp, vmap
    a = cr.randn(3, 3, dtype=cr.float64)
    xs = cr.randn(4, 3, dtype=cr.float64)
    g = lambda x: cr.tanh(a @ x)                             # noqa: E731
    f = lambda x: (g(x) ** 2).sum()                          # noqa: E731
    ones = cr.ones(3, dtype=cr.float64)
    for transform, single in ((vmap(jacfwd(g)), jacfwd(g)), (vmap(hessian(f)), hessian(f)),
                              (vmap(lambda x: jvp(g, (x,), (ones,))[1]),
                               lambda x: jvp(g, (x,), (ones,))[1])):
        loop = cr.stack([single(xs[i]) for i in range(4)])
        assert np.allclose(transform(xs).numpy(), loop.numpy())
    outer = jvp(vmap(g), (xs,), (cr.ones(4, 3, dtype=cr.float64),))[1]
    assert np.allclose(outer.numpy(), cr.stack([jvp(g, (xs[i],), (ones,))[1]
                                                for i in range(4)]).numpy())


def _one_pass_or_loop(fn, *args):
    """fn(*args) and whether core's vmap evaluated anything once per entry."""
    from chainrule._ops import _batching_rules
    _batching_rules.LOOP_LOG = log = set()
    try:
        return fn(*args), log
    finally:
        _batching_rules.LOOP_LOG = None


def test_forward_mode_under_vmap_runs_once_and_matches_the_loop(layers):
    # Note [tangents of batched tensors]: no evaluation per vmap entry
    batch = cr.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    dirs = cr.tensor(np.random.default_rng(1).standard_normal((4, 3)))
    g = lambda x: cr.tanh(cr.tensor(A) @ x) * x.sum()           # noqa: E731
    cases = [
        (func.vmap(lambda x, v: func.jvp(g, (x,), (v,))[1]), (batch, dirs),
         lambda x, v: func.jvp(g, (x,), (v,))[1]),
        (func.vmap(func.jacfwd(g)), (batch,), func.jacfwd(g)),
        (func.vmap(func.hessian(f)), (batch,), func.hessian(f)),
        (func.vmap(lambda x: F.jacobian(g, x, vectorize=True, strategy="forward-mode")),
         (batch,), lambda x: F.jacobian(g, x, vectorize=True, strategy="forward-mode")),
    ]
    for mapped, args, entry in cases[:None if layers == "with forward_ad" else -1]:
        got, log = _one_pass_or_loop(mapped, *args)
        assert not got.requires_grad
        want = cr.stack([entry(*[a[i] for a in args]) for i in range(4)])
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-12)
        if layers == "with forward_ad":
            assert not log, log
    got, log = _one_pass_or_loop(lambda: func.jvp(func.vmap(g), (batch,), (dirs,))[1])
    want = cr.stack([func.jvp(g, (x,), (v,))[1] for x, v in zip(batch, dirs)])
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda f: func.grad(f, has_aux=True)(cr.ones(2)),
    lambda f: func.grad_and_value(f, has_aux=True)(cr.ones(2)),
    lambda f: func.vjp(lambda x: (f(x)[0] * x, f(x)[1]), cr.ones(2), has_aux=True),
    lambda f: func.jvp(f, (cr.ones(2),), (cr.ones(2),), has_aux=True),
    lambda f: func.jacrev(f, has_aux=True)(cr.ones(2)),
    lambda f: func.jacfwd(f, has_aux=True)(cr.ones(2)),
])
def test_aux_must_hold_tensors_only(call):
    with pytest.raises(RuntimeError, match="Expected tensors, got unsupported type <class 'NoneType'>"):
        call(lambda x: (x.sum(), {"a": x, "b": None}))
