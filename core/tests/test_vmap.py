"""chainrule.vmap: in_dims/out_dims, nested structures, gradients through it, errors."""
import numpy as np
import pytest

import chainrule as cr


def test_maps_over_leading_dim():
    x = cr.randn(4, 3, dtype=cr.float64)
    y = cr.randn(4, 3, dtype=cr.float64)
    out = cr.vmap(cr.dot)(x, y)
    assert np.allclose(out.numpy(), (x.numpy() * y.numpy()).sum(1))


def test_in_dims_none_and_other_dim_and_out_dims():
    x = cr.randn(3, 5, dtype=cr.float64)
    w = cr.randn(3, dtype=cr.float64)
    out = cr.vmap(lambda col, w: col * w, in_dims=(1, None), out_dims=1)(x, w)
    assert out.shape == (3, 5) and np.allclose(out.numpy(), x.numpy() * w.numpy()[:, None])


def test_nested_inputs_and_tuple_outputs():
    a = cr.randn(2, 3, dtype=cr.float64)
    b = cr.randn(2, dtype=cr.float64)

    def f(pair, scale):
        x, y = pair
        return x.sum() * y, x * scale["k"]
    s, m = cr.vmap(f, in_dims=((0, 0), {"k": None}))((a, b), {"k": cr.tensor(2.0, dtype=cr.float64)})
    assert s.shape == (2,) and m.shape == (2, 3)
    assert np.allclose(s.numpy(), a.numpy().sum(1) * b.numpy())


def test_gradients_flow_through_vmap():
    x = cr.randn(4, 3, dtype=cr.float64, requires_grad=True)
    out = cr.vmap(lambda row: (row ** 2).sum())(x)
    out.sum().backward()
    assert np.allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_jacobian_rows_match_is_grads_batched():
    x = cr.randn(3, dtype=cr.float64, requires_grad=True)
    y = x.sin()
    eye = cr.eye(3, dtype=cr.float64)
    (batched,) = cr.autograd.grad(y, x, eye, is_grads_batched=True, retain_graph=True)
    rows = cr.vmap(lambda v: cr.autograd.grad(y, x, v, retain_graph=True)[0])(eye)
    assert np.allclose(batched.numpy(), rows.numpy())


def test_errors():
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        cr.vmap(cr.mul)(cr.ones(2), cr.ones(3))
    with pytest.raises(ValueError, match="at least one input must be mapped over"):
        cr.vmap(cr.mul, in_dims=None)(cr.ones(2), cr.ones(2))
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        cr.vmap(cr.mul, in_dims=(0, 0, 0))(cr.ones(2), cr.ones(2))
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        cr.vmap(lambda x, k: x * k)(cr.ones(2), 3)
    with pytest.raises(ValueError, match="must only return Tensors"):
        cr.vmap(lambda x: 3)(cr.ones(2))
    with pytest.raises(ValueError, match="dimensionality 1"):
        cr.vmap(lambda x: x, in_dims=2)(cr.ones(2))
    with pytest.raises(RuntimeError, match="randomness"):
        cr.vmap(lambda x: x, randomness="sometimes")


def test_parity_with_torch_vmap():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((4, 3, 2))
    ours = cr.vmap(lambda m: m.t() @ m, in_dims=0, out_dims=2)(cr.tensor(a))
    theirs = torch.vmap(lambda m: m.t() @ m, in_dims=0, out_dims=2)(torch.tensor(a))
    assert np.allclose(ours.numpy(), theirs.numpy())
