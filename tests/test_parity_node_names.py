"""Parity tier: the node a call records is the reference's, by name, for the functions
whose graph was once chainrule's own composition (skips without torch): fill with a
number or a 0-d tensor, in place or not; frobenius_norm (the reference's at::norm);
dist; conv_tbc; remainder and rsub of two tensors or with a number; log1p."""
import warnings

import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402

CALLS = {
    "fill": lambda L, x, y, s: L.fill(x, 2.0),
    "fill-tensor": lambda L, x, y, s: L.fill(x, s),
    "fill_": lambda L, x, y, s: x.clone().fill_(2.0),
    "fill_-tensor": lambda L, x, y, s: x.clone().fill_(s),
    "frobenius_norm": lambda L, x, y, s: L.frobenius_norm(x, [1]),
    "frobenius_norm-all": lambda L, x, y, s: L.frobenius_norm(x, []),
    "dist": lambda L, x, y, s: L.dist(x, y),
    "dist-p1": lambda L, x, y, s: L.dist(x, y[0], 1),
    "conv_tbc": lambda L, x, y, s: L.conv_tbc(x.reshape(3, 1, 4), y.reshape(3, 4, 1),
                                              s.reshape(1), 1),
    "remainder": lambda L, x, y, s: L.remainder(x, y),
    "remainder-number": lambda L, x, y, s: x % 0.7,
    "rsub": lambda L, x, y, s: L.rsub(x, y),
    "rsub-number": lambda L, x, y, s: 2.0 - x,
    "log1p": lambda L, x, y, s: L.log1p(x),
}


def _record(L, call):
    x = L.tensor([[0.3, 1.2, 0.7, 2.0]] * 3, dtype=L.float64, requires_grad=True)
    y = L.tensor([[1.1, 0.4, 0.9, 0.6]] * 3, dtype=L.float64, requires_grad=True)
    s = L.tensor(1.5, dtype=L.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # frobenius_norm's deprecation
        out = call(L, x, y, s)
    node = out.grad_fn
    grads = L.autograd.grad(out.sum(), (x, y, s), allow_unused=True)
    return (type(node).__name__, len(node.next_functions),
            [None if g is None else [round(v, 10) for v in g.flatten().tolist()] for g in grads])


@pytest.mark.parametrize("name", list(CALLS))
def test_node_names_and_gradients_are_the_reference_s(name):
    assert _record(cr, CALLS[name]) == _record(torch, CALLS[name])
