"""chainrule.func.linearize, functionalize and debug_unwrap."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.func import debug_unwrap, functionalize, jvp, linearize, vmap

X = cr.tensor([0.3, -1.2, 2.0], dtype=cr.float64)
V = cr.tensor([1.0, 0.5, -0.25], dtype=cr.float64)


def f(x, y):
    return {"p": x.sin() * y, "q": (x.exp() * y).sum()}


def test_linearize_gives_the_output_and_jvps_at_the_fixed_point():
    out, jvp_fn = linearize(f, X, V)
    expected_out, _ = jvp(f, (X, V), (V, X))
    for k in ("p", "q"):
        np.testing.assert_allclose(out[k].detach().numpy(), expected_out[k].numpy())
    for tangents in [(V, X), (X, X), (V * 0, V)]:
        got, want = jvp_fn(*tangents), jvp(f, (X, V), tangents)[1]
        for k in ("p", "q"):
            np.testing.assert_allclose(got[k].numpy(), want[k].numpy())


def test_linearize_checks_the_tangents():
    _, jvp_fn = linearize(f, X, V)
    with pytest.raises(RuntimeError, match=r"tangents TreeSpec\(tuple, None, \[\*\]\)"):
        jvp_fn(V)
    with pytest.raises(RuntimeError, match="tangent:1 with shape .* doesn't match the shape"):
        jvp_fn(V, V[:2])
    with pytest.raises(RuntimeError, match="tangent:0 with dtype .*float32 in flattened pytree .*float64"):
        jvp_fn(V.float(), V)


def test_functionalize_runs_the_function_and_checks_remove():
    def mutate(a):
        b = a.clone()
        b.add_(1)
        a.mul_(2)
        return b
    y = cr.ones(2)
    assert functionalize(mutate, remove="mutations_and_views")(y).tolist() == [2.0, 2.0]
    assert y.tolist() == [2.0, 2.0]
    assert functionalize(mutate).__name__ == "mutate"
    with pytest.raises(RuntimeError, match="received invalid argument for remove=views"):
        functionalize(mutate, remove="views")


def test_debug_unwrap_returns_the_physical_tensor():
    assert debug_unwrap(X) is X
    shapes = vmap(vmap(lambda t: (debug_unwrap(t).shape,
                                  debug_unwrap(t, recurse=False).shape), out_dims=None),
                  out_dims=None)(cr.ones(4, 3, 2))
    assert shapes == ((4, 3, 2), (3, 2))
