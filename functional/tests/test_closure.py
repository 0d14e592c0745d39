"""Note [captured tensors keep their history]: chainrule.func's transforms keep the
graph to tensors the function captures, with and without the forward_ad layer; and
the pytree structures their errors print."""
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule import func


@pytest.fixture(params=["with forward_ad", "without forward_ad"])
def layers(request, monkeypatch):
    if request.param == "without forward_ad":
        monkeypatch.setitem(sys.modules, "chainrule_forward_ad", None)
    return request.param


W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
X = np.array([0.3, -0.2, 0.7])


def _jacobian_of_w(w):
    """d tanh(w @ x) / dx = diag(1 - tanh^2) @ w, written out."""
    u = cr.tanh(w @ cr.tensor(X))
    return (1 - u ** 2).unsqueeze(1) * w


TRANSFORMS = {
    "jacrev": lambda f, x: func.jacrev(f)(x),
    "jacfwd": lambda f, x: func.jacfwd(f)(x),
    "vmap_jvp": lambda f, x: func.vmap(lambda t: func.jvp(f, (x,), (t,))[1])(
        cr.eye(3, dtype=cr.float64)).T,
    "vjp": lambda f, x: func.vmap(func.vjp(f, x)[1])(cr.eye(2, dtype=cr.float64))[0],
    "grad": lambda f, x: func.vmap(lambda e: func.grad(lambda y: (f(y) * e).sum())(x))(
        cr.eye(2, dtype=cr.float64)),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_results_reach_captured_parameters(name, layers):
    w = cr.tensor(W, requires_grad=True)
    jac = TRANSFORMS[name](lambda x: cr.tanh(w @ x), cr.tensor(X))
    assert jac.requires_grad
    (got,) = cr.autograd.grad((jac ** 2).sum(), w)
    (expected,) = cr.autograd.grad((_jacobian_of_w(w) ** 2).sum(), w)
    assert np.allclose(got.numpy(), expected.numpy())


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_plain_results_without_captured_grads_or_under_no_grad(name, layers):
    w = cr.tensor(W, requires_grad=True)
    assert not TRANSFORMS[name](lambda x: cr.tanh(w.detach() @ x), cr.tensor(X)).requires_grad
    with cr.no_grad():
        assert not TRANSFORMS[name](lambda x: cr.tanh(w @ x), cr.tensor(X)).requires_grad


def test_a_returned_captured_leaf_counts():
    w = cr.tensor(W, requires_grad=True)
    out, tangent = func.jvp(lambda x: (x * 2, w), (cr.tensor(X),), (cr.ones(3, dtype=cr.float64),))
    assert out[1].requires_grad and not tangent[0].requires_grad


def test_structure_errors_print_the_reference_pytree():
    x = cr.ones(2)
    with pytest.raises(RuntimeError, match=r"primals with structure TreeSpec\(tuple, None, "
                                           r"\[\*\]\) and tangents with structure \*$"):
        func.jvp(lambda a: a, (x,), x)
    _, vjp_fn = func.vjp(lambda a: [a, {"k": (a,)}], x)
    with pytest.raises(RuntimeError, match=r"cotangents: \(\*,\), primal output: "
                                           r"\[\*, \{'k': \(\*,\)\}\]$"):
        vjp_fn((x,))
